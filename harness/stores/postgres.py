"""The reference PostgreSQL store (psycopg 3): correct under concurrent processes.

Every operation is one transaction at READ COMMITTED, and this is why each is correct:

- **set-up** (CREATE TABLE IF NOT EXISTS) runs under a transaction-scoped advisory lock:
  two processes creating the same table at once otherwise collide in the catalog
  (``duplicate key value violates unique constraint "pg_type_typname_nsp_index"``);
- **append** takes the session's row in ``sessions`` (an upsert that bumps ``next_seq``
  and so row-locks it until commit), then inserts the turn with that number: appends and
  rollbacks of one session queue on that row lock, so turn numbers follow commit order and
  a read (``ORDER BY seq``) never shows a later turn before an earlier one;
- **read** is one SELECT: READ COMMITTED gives each statement one snapshot of committed
  data, so it sees a rollback or an append whole or not at all;
- **snapshot** takes the session's row lock too, then copies the session's turns with one
  INSERT ... SELECT (one statement, one snapshot) into ``snapshot_turns``, under a new id,
  in the transaction that lists it;
- **rollback** takes the session's row lock, checks the id is the session's (else
  ``SnapshotNotFound``, the transaction rolled back), deletes the turns and copies the
  snapshot's back, all in one transaction: readers see before or after, never between;
  it never touches the snapshot tables.

Content is stored as BYTEA (UTF-8, lone surrogates passed through): PostgreSQL's TEXT
refuses NUL, which a turn may hold.
"""

from __future__ import annotations

import uuid
from typing import Any

from harness.errors import SnapshotNotFound
from harness.stores.declare import Declared

__all__ = ["SCHEMA", "STORE", "PostgresStore", "connect", "decode", "encode"]

SCHEMA = """
CREATE TABLE IF NOT EXISTS sessions (session TEXT PRIMARY KEY, next_seq BIGINT NOT NULL);
CREATE TABLE IF NOT EXISTS turns (
    session TEXT NOT NULL, seq BIGINT NOT NULL, role BYTEA NOT NULL, content BYTEA NOT NULL,
    PRIMARY KEY (session, seq));
CREATE TABLE IF NOT EXISTS snapshots (
    id TEXT PRIMARY KEY, session TEXT NOT NULL, created BIGSERIAL);
CREATE TABLE IF NOT EXISTS snapshot_turns (
    snapshot_id TEXT NOT NULL, seq BIGINT NOT NULL, role BYTEA NOT NULL, content BYTEA NOT NULL,
    PRIMARY KEY (snapshot_id, seq));
"""

#: The advisory lock key of the set-up (any constant the stores agree on).
SETUP_LOCK = 0x68617273  # "hars"


def encode(s: str) -> bytes:
    return s.encode("utf-8", "surrogatepass")


def decode(b: bytes | memoryview) -> str:
    return bytes(b).decode("utf-8", "surrogatepass")


def connect(url: str, schema: str = SCHEMA) -> Any:
    """A psycopg connection in autocommit mode (transactions explicit), the tables made
    under the set-up lock."""
    import psycopg

    conn = psycopg.connect(url, autocommit=True)
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (SETUP_LOCK,))
        for stmt in schema.split(";"):
            if stmt.strip():
                conn.execute(stmt)
    return conn


class PostgresStore:
    """See the module docstring. A connection the server closed (a restart, a terminated
    backend) is replaced at the next op: that op's predecessor failed as it had to, and
    the store goes on, as a pool would. No op is retried."""

    backend = "postgres"
    #: the tables this store makes at open (a subclass of the zoo has its own)
    schema_sql = SCHEMA

    def __init__(self, url: str, namespace: str = "harness") -> None:
        self.url = url
        self._conn = self._connect()

    def _connect(self) -> Any:
        return connect(self.url, self.schema_sql)

    @property
    def conn(self) -> Any:
        if self._conn.closed or self._conn.broken:
            self._conn.close()
            self._conn = self._connect()
        return self._conn

    # Each op takes the connection once (``c = self.conn``) and uses only that one: a
    # connection replaced in the middle of a transaction would run the rest of it on
    # another connection, in autocommit, half an op.

    @staticmethod
    def _lock_session(c: Any, session: str) -> int:
        """Row-lock the session until commit and bump its counter; the new number."""
        row = c.execute(
            "INSERT INTO sessions (session, next_seq) VALUES (%s, 1) ON CONFLICT (session) "
            "DO UPDATE SET next_seq = sessions.next_seq + 1 RETURNING next_seq", (session,)).fetchone()
        return int(row[0])

    def append(self, session: str, role: str, content: str) -> None:
        c = self.conn
        with c.transaction():
            seq = self._lock_session(c, session)
            c.execute("INSERT INTO turns (session, seq, role, content) VALUES (%s, %s, %s, %s)",
                      (session, seq, encode(role), encode(content)))

    def history(self, session: str) -> list[tuple[str, str]]:
        rows = self.conn.execute("SELECT role, content FROM turns WHERE session = %s ORDER BY seq",
                                 (session,)).fetchall()
        return [(decode(r), decode(c)) for r, c in rows]

    def snapshot(self, session: str) -> str:
        sid = uuid.uuid4().hex[:16]
        c = self.conn
        with c.transaction():
            self._lock_session(c, session)
            c.execute("INSERT INTO snapshots (id, session) VALUES (%s, %s)", (sid, session))
            c.execute("INSERT INTO snapshot_turns (snapshot_id, seq, role, content) "
                      "SELECT %s, seq, role, content FROM turns WHERE session = %s", (sid, session))
        return sid

    @staticmethod
    def require_snapshot(c: Any, session: str, snapshot_id: str) -> None:
        found = c.execute("SELECT 1 FROM snapshots WHERE id = %s AND session = %s",
                          (snapshot_id, session)).fetchone()
        if found is None:
            raise SnapshotNotFound(snapshot_id)

    def rollback(self, session: str, snapshot_id: str) -> None:
        c = self.conn
        with c.transaction():
            self._lock_session(c, session)
            self.require_snapshot(c, session, snapshot_id)
            c.execute("DELETE FROM turns WHERE session = %s", (session,))
            c.execute("INSERT INTO turns (session, seq, role, content) "
                      "SELECT %s, seq, role, content FROM snapshot_turns WHERE snapshot_id = %s",
                      (session, snapshot_id))

    def snapshots(self, session: str) -> list[str]:
        rows = self.conn.execute("SELECT id FROM snapshots WHERE session = %s ORDER BY created",
                                 (session,)).fetchall()
        return [str(r[0]) for r in rows]

    def close(self) -> None:
        self._conn.close()


STORE = Declared(
    name="postgres", factory="PostgresStore", backend="postgres",
    description="reference: one READ COMMITTED transaction per op, a session row lock, snapshots copied")
