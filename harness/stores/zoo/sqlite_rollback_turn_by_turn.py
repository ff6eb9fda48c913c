"""``zoo.sqlite-rollback-turn-by-turn``: rollback clears the turns in one transaction, then
inserts the snapshot's turns back one transaction each.

The story: a rollback of a long conversation held the write lock for too long, so it was
"made incremental": one transaction checks the snapshot and deletes the session's turns,
then each snapshot turn is inserted in a transaction of its own, as an append would be.
Alone it restores the right turns. Overlapped, it does not: a read in the middle sees a part
of the snapshot, an append in the middle lands among the restored turns, and a second
rollback in the middle interleaves its turns with the first's. Caught as ``bad-rollback``
(or ``reordered-turns``, ``duplicate-turn``). Only a rollback that overlaps other ops of its
session exposes it: a run whose rollbacks never overlap anything passes it.
"""

from __future__ import annotations

from harness.stores.declare import Declared
from harness.stores.sqlite import SqliteStore, immediate


class RollbackTurnByTurnStore(SqliteStore):
    def rollback(self, session: str, snapshot_id: str) -> None:
        with immediate(self.conn):
            self.require_snapshot(session, snapshot_id)
            self.conn.execute("DELETE FROM turns WHERE session = ?", (session,))
            turns = self.conn.execute(
                "SELECT role, content FROM snapshot_turns WHERE snapshot_id = ? ORDER BY seq",
                (snapshot_id,)).fetchall()
        for role, content in turns:  # BUG: the write lock is let go between turns
            self.append(session, role, content)


STORE = Declared(
    name="zoo.sqlite-rollback-turn-by-turn", factory="RollbackTurnByTurnStore",
    backend="sqlite",
    description="rollback deletes the turns, then inserts each snapshot turn in its own transaction",
    expected="bad-rollback", scenario="sqlite-rollback-storm.toml",
    also_caught_as=("reordered-turns", "duplicate-turn", "lost-turn", "incompatible-order"))
