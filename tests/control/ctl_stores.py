"""Stores written as third parties would write them, for the controlled-mode tests.

None of them knows about the harness: the points come from the hooks on ``sqlite3`` and
redis-py that controlled mode installs inside each worker.
"""

from __future__ import annotations

import fcntl
import sqlite3
import uuid
from pathlib import Path

import redis


class LegacySqliteStore:
    """Python's default transaction handling (implicit BEGIN, ``with conn:`` commits),
    explicit cursors, ``executemany`` and its own ``PRAGMA busy_timeout``."""

    backend = "sqlite"
    capabilities = frozenset({"append", "read", "snapshot", "list_snapshots", "rollback"})

    def __init__(self, url: str) -> None:
        self.conn = sqlite3.connect(url[len("sqlite://"):], timeout=0)
        cur = self.conn.cursor()
        cur.execute("PRAGMA busy_timeout = 20000")
        cur.execute("PRAGMA journal_mode=WAL")
        with self.conn:
            cur.executescript(
                "CREATE TABLE IF NOT EXISTS t (id INTEGER PRIMARY KEY, s TEXT, r TEXT, c TEXT);"
                "CREATE TABLE IF NOT EXISTS snaps (id TEXT PRIMARY KEY, s TEXT, upto INTEGER);")

    def append(self, session: str, role: str, content: str) -> None:
        with self.conn:
            self.conn.executemany("INSERT INTO t (s, r, c) VALUES (?, ?, ?)",
                                  [(session, role, content)])

    def history(self, session: str) -> list[tuple[str, str]]:
        cur = self.conn.cursor()
        cur.execute("SELECT r, c FROM t WHERE s = ? ORDER BY id", (session,))
        return [(r, c) for r, c in cur.fetchall()]

    def snapshot(self, session: str) -> str:
        sid = uuid.uuid4().hex[:12]
        with self.conn:
            self.conn.execute("INSERT INTO snaps SELECT ?, ?, COALESCE(MAX(id), 0) FROM t "
                              "WHERE s = ?", (sid, session, session))
        return sid

    def rollback(self, session: str, snapshot_id: str) -> None:
        with self.conn:
            row = self.conn.execute("SELECT upto FROM snaps WHERE id = ? AND s = ?",
                                    (snapshot_id, session)).fetchone()
            if row is None:
                raise KeyError(snapshot_id)
            self.conn.execute("DELETE FROM t WHERE s = ? AND id > ?", (session, row[0]))

    def snapshots(self, session: str) -> list[str]:
        return [r[0] for r in self.conn.execute("SELECT id FROM snaps WHERE s = ? ORDER BY rowid",
                                                (session,))]

    def close(self) -> None:
        self.conn.close()


class FlockRedisStore:
    """Read-modify-write made safe by an ``flock`` around it: a worker waiting for the
    lock is not at any scheduling point, so controlled mode sees it as blocked."""

    backend = "redis"
    capabilities = frozenset({"append", "read"})
    lock_dir = "/tmp"

    def __init__(self, url: str, namespace: str = "") -> None:
        self.r = redis.Redis.from_url(url, decode_responses=True)
        self.ns = namespace
        self.lock = open(Path(self.lock_dir) / f"{namespace.replace(':', '_')}.lock", "a")  # noqa: SIM115

    def append(self, session: str, role: str, content: str) -> None:
        fcntl.flock(self.lock, fcntl.LOCK_EX)
        try:
            key = f"{self.ns}:{session}"
            old = self.r.get(key) or ""
            self.r.set(key, old + f"{role}\t{content}\x1e")
        finally:
            fcntl.flock(self.lock, fcntl.LOCK_UN)

    def history(self, session: str) -> list[tuple[str, str]]:
        raw = self.r.get(f"{self.ns}:{session}") or ""
        return [tuple(x.split("\t", 1)) for x in raw.split("\x1e") if x]  # type: ignore[misc]

    def close(self) -> None:
        self.r.close()
        self.lock.close()
