"""``zoo.postgres-rollback-wipes-snapshots``: a rollback also deletes the session's
snapshots taken after the one it restores.

The story: "after a rollback, the later checkpoints describe a future that no longer
exists", so the rollback deletes the snapshots newer than the one it restores, in the
same transaction. Other processes hold those ids: their rollbacks to them now fail, and a
listing no longer shows them. Caught as ``vanished-checkpoint``.
"""

from __future__ import annotations

from harness.stores.declare import Declared
from harness.stores.postgres import PostgresStore


class RollbackWipesSnapshotsStore(PostgresStore):
    def rollback(self, session: str, snapshot_id: str) -> None:
        c = self.conn
        super().rollback(session, snapshot_id)
        # BUG: snapshots are never to be removed by a rollback
        c.execute(
            "DELETE FROM snapshots WHERE session = %s AND created > "
            "(SELECT created FROM snapshots WHERE id = %s)", (session, snapshot_id))


STORE = Declared(
    name="zoo.postgres-rollback-wipes-snapshots", factory="RollbackWipesSnapshotsStore",
    backend="postgres", description="rollback deletes the snapshots newer than its target",
    expected="vanished-checkpoint", scenario="postgres-rollback.toml")
