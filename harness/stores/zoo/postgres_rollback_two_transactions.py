"""``zoo.postgres-rollback-two-transactions``: a rollback deletes the turns in one
transaction and copies the snapshot's back in a second.

The story: the rollback was split in two so that the DELETE of a long conversation would
not hold its locks while the copy ran ("keep transactions short"). Between the two commits
the session is empty for everyone else: a read there sees no turns at all, and an append
there lands before the restored turns. Caught as ``bad-rollback``.
"""

from __future__ import annotations

from harness.stores.declare import Declared
from harness.stores.postgres import PostgresStore


class RollbackTwoTransactionsStore(PostgresStore):
    def rollback(self, session: str, snapshot_id: str) -> None:
        c = self.conn
        self.require_snapshot(c, session, snapshot_id)
        with c.transaction():
            self._lock_session(c, session)
            c.execute("DELETE FROM turns WHERE session = %s", (session,))
        # BUG: committed; the copy is a second transaction
        with c.transaction():
            self._lock_session(c, session)
            c.execute("INSERT INTO turns (session, seq, role, content) "
                              "SELECT %s, seq, role, content FROM snapshot_turns WHERE snapshot_id = %s "
                              "ON CONFLICT DO NOTHING", (session, snapshot_id))


STORE = Declared(
    name="zoo.postgres-rollback-two-transactions", factory="RollbackTwoTransactionsStore",
    backend="postgres", description="rollback = DELETE, commit, then INSERT the snapshot's turns",
    expected="bad-rollback", also_caught_as=("lost-turn", "reordered-turns", "incompatible-order"),
    scenario="postgres-rollback.toml")
