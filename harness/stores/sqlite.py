"""The reference SQLite store: correct under concurrent processes.

WAL journal, a busy timeout, ``BEGIN IMMEDIATE`` for every read-then-write (a DEFERRED
transaction that read and then writes fails at once with "database is locked" when another
process committed in between, whatever the busy timeout), and snapshots in tables of their
own that rollback never touches.

What the zoo builds on: :func:`connect` (a connection in autocommit mode, WAL, schema
made), :func:`immediate` (one ``BEGIN IMMEDIATE`` transaction), :data:`SCHEMA` (the tables),
and :class:`SqliteStore`'s ``conn`` and ``require_snapshot``.
"""

from __future__ import annotations

import sqlite3
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager

from harness.errors import SnapshotNotFound
from harness.stores.declare import Declared

__all__ = ["SCHEMA", "STORE", "SqliteStore", "connect", "immediate", "sqlite_path"]

SCHEMA = """
CREATE TABLE IF NOT EXISTS turns (
    session TEXT NOT NULL, seq INTEGER NOT NULL, role TEXT NOT NULL, content TEXT NOT NULL,
    PRIMARY KEY (session, seq));
CREATE TABLE IF NOT EXISTS snapshots (
    id TEXT PRIMARY KEY, session TEXT NOT NULL, created INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS snapshot_turns (
    snapshot_id TEXT NOT NULL, seq INTEGER NOT NULL, role TEXT NOT NULL, content TEXT NOT NULL,
    PRIMARY KEY (snapshot_id, seq));
"""


def sqlite_path(url: str) -> str:
    """``sqlite:///abs/path.db`` -> ``/abs/path.db``."""
    if not url.startswith("sqlite:///"):
        raise ValueError(f"not a sqlite URL: {url!r}")
    return url[len("sqlite://") :]


def connect(url: str, timeout: float = 30.0) -> sqlite3.Connection:
    """Open a connection in autocommit mode (transactions are explicit), WAL, schema made."""
    conn = sqlite3.connect(sqlite_path(url), timeout=timeout, isolation_level=None)
    _wal(conn, timeout)
    conn.execute("PRAGMA synchronous=NORMAL")
    with immediate(conn):
        for stmt in SCHEMA.split(";"):
            if stmt.strip():
                conn.execute(stmt)
    return conn


def _wal(conn: sqlite3.Connection, timeout: float) -> None:
    """Switch to WAL. On a fresh file, processes opening it at once race to convert it,
    and SQLite answers the losers "database is locked" at once, busy timeout or not (it
    will not wait while holding a shared lock another converter needs): retry then."""
    deadline = time.monotonic() + timeout
    delay = 0.001
    while True:
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as err:
            if "locked" not in str(err) or time.monotonic() > deadline:
                raise
        time.sleep(delay)
        delay = min(delay * 2, 0.05)


@contextmanager
def immediate(conn: sqlite3.Connection) -> Iterator[None]:
    """One write transaction on ``conn`` (autocommit mode, as :func:`connect` makes it):
    ``BEGIN IMMEDIATE`` takes the write lock before the first read, so what the block reads
    is still true when it writes; COMMIT at the end, ROLLBACK if the block raises."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield
    except BaseException:
        if conn.in_transaction:  # SQLite rolls back by itself after some errors (SQLITE_FULL)
            conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


class SqliteStore:
    """Turns in ``turns(session, seq)``; snapshots copied into ``snapshot_turns``."""

    backend = "sqlite"

    def __init__(self, url: str, namespace: str = "") -> None:
        self.conn = connect(url)

    def append(self, session: str, role: str, content: str) -> None:
        with immediate(self.conn):
            (seq,) = self.conn.execute(
                "SELECT COALESCE(MAX(seq), 0) + 1 FROM turns WHERE session = ?", (session,)
            ).fetchone()
            self.conn.execute(
                "INSERT INTO turns (session, seq, role, content) VALUES (?, ?, ?, ?)",
                (session, seq, role, content),
            )

    def history(self, session: str) -> list[tuple[str, str]]:
        rows = self.conn.execute(
            "SELECT role, content FROM turns WHERE session = ? ORDER BY seq", (session,)
        ).fetchall()
        return [(r, c) for r, c in rows]

    def snapshot(self, session: str) -> str:
        sid = uuid.uuid4().hex[:16]
        with immediate(self.conn):
            self.conn.execute(
                "INSERT INTO snapshots (id, session, created) "
                "VALUES (?, ?, (SELECT COUNT(*) FROM snapshots))",
                (sid, session),
            )
            self.conn.execute(
                "INSERT INTO snapshot_turns (snapshot_id, seq, role, content) "
                "SELECT ?, seq, role, content FROM turns WHERE session = ?",
                (sid, session),
            )
        return sid

    def require_snapshot(self, session: str, snapshot_id: str) -> None:
        """Raise SnapshotNotFound unless ``snapshot_id`` is one of ``session``'s snapshots."""
        if self.conn.execute("SELECT 1 FROM snapshots WHERE id = ? AND session = ?",
                             (snapshot_id, session)).fetchone() is None:
            raise SnapshotNotFound(snapshot_id)

    def rollback(self, session: str, snapshot_id: str) -> None:
        with immediate(self.conn):
            self.require_snapshot(session, snapshot_id)
            self.conn.execute("DELETE FROM turns WHERE session = ?", (session,))
            self.conn.execute(
                "INSERT INTO turns (session, seq, role, content) "
                "SELECT ?, seq, role, content FROM snapshot_turns WHERE snapshot_id = ?",
                (session, snapshot_id),
            )

    def snapshots(self, session: str) -> list[str]:
        rows = self.conn.execute(
            "SELECT id FROM snapshots WHERE session = ? ORDER BY created", (session,)
        ).fetchall()
        return [r[0] for r in rows]

    def close(self) -> None:
        self.conn.close()


STORE = Declared(name="sqlite", factory="SqliteStore", backend="sqlite",
                 description="reference SQLite store (WAL, BEGIN IMMEDIATE, snapshot tables)")
