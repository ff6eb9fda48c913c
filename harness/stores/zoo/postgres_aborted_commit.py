"""``zoo.postgres-aborted-commit``: a best-effort statement's error is swallowed inside the
append's transaction, and the commit that follows rolls the turn back without a word.

The story: each append also bumps the tenant's activity row (``last_active``, a turn
count) for the billing page. "Metrics must never slow down or fail an append", so that
row is taken with ``FOR UPDATE NOWAIT`` ("another append is counting right now: skip it")
and the error is caught and ignored. In
PostgreSQL any error aborts the whole transaction, the turn's INSERT included, and
psycopg's ``commit()`` of an aborted transaction is a ROLLBACK that returns normally: the
append reports success and the turn is gone. The connection is then reused, as a pooled
one would be. One process never waits for the activity row; several appending at once
find it taken (each holds it until its commit is on disk), and acknowledged turns
vanish. Caught as ``lost-turn``.
"""

from __future__ import annotations

from typing import Any

from harness.stores.declare import Declared
from harness.stores.postgres import SCHEMA, PostgresStore, connect, encode

ACTIVITY = """
CREATE TABLE IF NOT EXISTS activity (tenant TEXT PRIMARY KEY, last_active TIMESTAMPTZ,
    turns BIGINT NOT NULL DEFAULT 0);
INSERT INTO activity (tenant) VALUES ('default') ON CONFLICT DO NOTHING
"""


class AbortedCommitStore(PostgresStore):
    schema_sql = SCHEMA + ";" + ACTIVITY

    def _connect(self) -> Any:
        conn = connect(self.url, self.schema_sql)
        conn.autocommit = False  # psycopg's default: a transaction per use, ended by commit()
        return conn

    def append(self, session: str, role: str, content: str) -> None:
        import psycopg

        c = self.conn
        try:
            seq = self._lock_session(c, session)
            c.execute("INSERT INTO turns (session, seq, role, content) VALUES (%s, %s, %s, %s)",
                      (session, seq, encode(role), encode(content)))
            try:
                c.execute("SELECT 1 FROM activity WHERE tenant = 'default' FOR UPDATE NOWAIT")
                c.execute("UPDATE activity SET last_active = now(), turns = turns + 1 "
                          "WHERE tenant = 'default'")
            except psycopg.errors.LockNotAvailable:
                pass  # BUG: the transaction is aborted now; the commit below rolls it back
            c.commit()
        except BaseException:
            c.rollback()
            raise

    def _autocommit(self, op: Any, *args: Any) -> Any:
        """The reference store's op on this connection, committed (reads too: no
        transaction is left open between ops)."""
        c = self.conn
        try:
            out = op(*args)
            c.commit()
            return out
        except BaseException:
            c.rollback()
            raise

    def history(self, session: str) -> list[tuple[str, str]]:
        return self._autocommit(super().history, session)  # type: ignore[no-any-return]

    def snapshot(self, session: str) -> str:
        return self._autocommit(super().snapshot, session)  # type: ignore[no-any-return]

    def rollback(self, session: str, snapshot_id: str) -> None:
        self._autocommit(super().rollback, session, snapshot_id)

    def snapshots(self, session: str) -> list[str]:
        return self._autocommit(super().snapshots, session)  # type: ignore[no-any-return]


STORE = Declared(
    name="zoo.postgres-aborted-commit", factory="AbortedCommitStore", backend="postgres",
    description="a swallowed NOWAIT lock error aborts the append's transaction; commit() rolls back silently",
    expected="lost-turn", scenario="postgres-append-race.toml", also_exposed_by=("lock-hold",))
