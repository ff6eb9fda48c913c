"""``zoo.sqlite-rollback-wipes-snapshots``: rollback's transaction also clears the checkpoints.

The story: rollback was written as "restore the turns, then tidy up", and the tidy-up
``DELETE FROM snapshots WHERE session = ?`` was meant for snapshots newer than the target
but lost its ``AND created > ?`` in a refactor. Every rollback succeeds and restores the
right turns, but it wipes the session's checkpoints, so the next rollback finds none and
listings come back empty. Caught as ``vanished-checkpoint``.
"""

from __future__ import annotations

from harness.stores.declare import Declared
from harness.stores.sqlite import SqliteStore, immediate


class RollbackWipesSnapshotsStore(SqliteStore):
    def rollback(self, session: str, snapshot_id: str) -> None:
        with immediate(self.conn):
            self.require_snapshot(session, snapshot_id)
            self.conn.execute("DELETE FROM turns WHERE session = ?", (session,))
            self.conn.execute(
                "INSERT INTO turns (session, seq, role, content) "
                "SELECT ?, seq, role, content FROM snapshot_turns WHERE snapshot_id = ?",
                (session, snapshot_id),
            )
            # BUG: meant "AND created > (the target's created)"; wipes every checkpoint.
            self.conn.execute("DELETE FROM snapshots WHERE session = ?", (session,))


STORE = Declared(
    name="zoo.sqlite-rollback-wipes-snapshots", factory="RollbackWipesSnapshotsStore", backend="sqlite",
    description="rollback's transaction also clears the snapshots table",
    expected="vanished-checkpoint", scenario="sqlite-rollback.toml")
