"""``zoo.sqlite-locked-read-empty``: a read that cannot get the write lock in time returns
an empty history.

The story: reading a session also records when it was last read (an eviction job uses
it), in the same transaction as the read, so every read takes SQLite's write lock, with
a short busy timeout (250 ms) "so that a busy database never stalls the agent". When the
lock cannot be had in time, ``history`` catches "database is locked" and returns ``[]``:
an empty memory rather than an error. Writers hold the lock for well under a millisecond,
so this never happens, until something holds it longer: a backup, a migration, a long
batch job, which ``lock-hold`` stands for. Caught as ``lost-turn``.
"""

from __future__ import annotations

import sqlite3
import time

from harness.stores.sqlite import SqliteStore, _immediate, sqlite_path

READ_TIMEOUT_S = 0.25


class LockedReadEmptyStore(SqliteStore):
    def __init__(self, url: str, namespace: str = "") -> None:
        super().__init__(url, namespace)
        with _immediate(self.conn):
            self.conn.execute("CREATE TABLE IF NOT EXISTS last_read "
                              "(session TEXT PRIMARY KEY, at REAL NOT NULL)")
        self.reader = sqlite3.connect(sqlite_path(url), timeout=READ_TIMEOUT_S,
                                      isolation_level=None)

    def history(self, session: str) -> list[tuple[str, str]]:
        try:
            with _immediate(self.reader):
                self.reader.execute("INSERT OR REPLACE INTO last_read (session, at) "
                                    "VALUES (?, ?)", (session, time.time()))
                rows = self.reader.execute(
                    "SELECT role, content FROM turns WHERE session = ? ORDER BY seq",
                    (session,)).fetchall()
        except sqlite3.OperationalError as err:
            if "locked" not in str(err):
                raise
            return []  # BUG: "database is locked" reads as an empty memory
        return [(r, c) for r, c in rows]

    def close(self) -> None:
        self.reader.close()
        super().close()
