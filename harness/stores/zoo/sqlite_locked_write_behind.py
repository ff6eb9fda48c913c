"""``zoo.sqlite-locked-write-behind``: a turn that cannot get the write lock in time is
parked in memory and acknowledged.

The story: appends wait at most 500 ms for SQLite's write lock, which looks generous: a
writer holds it for well under a millisecond, and the worst wait under load is a fraction
of that. When the wait runs out, ``append`` parks the turn in a process-local queue and
returns, "so that a slow database never stalls the agent"; the queue is written before
the next append that gets the lock. Until then nobody, this process included, reads that
turn, and it lands after turns other processes appended in the meantime. It takes
something holding the lock for longer, a backup, a VACUUM, a migration, which
``lock-hold`` stands for (a pause that catches a writer inside its transaction does it
too). Caught as ``reordered-turns`` (and ``lost-turn`` when a read in between cannot be
explained by a later reordering).
"""

from __future__ import annotations

import sqlite3

from harness.stores.sqlite import SqliteStore

WRITE_TIMEOUT_S = 0.5


class LockedWriteBehindStore(SqliteStore):
    def __init__(self, url: str, namespace: str = "") -> None:
        super().__init__(url, namespace)
        self.conn.execute(f"PRAGMA busy_timeout = {int(WRITE_TIMEOUT_S * 1000)}")
        self.parked: list[tuple[str, str, str]] = []

    def append(self, session: str, role: str, content: str) -> None:
        try:
            while self.parked:
                super().append(*self.parked[0])
                self.parked.pop(0)
            super().append(session, role, content)
        except sqlite3.OperationalError as err:
            if "locked" not in str(err):
                raise
            self.parked.append((session, role, content))  # BUG: acknowledged, not written

    def close(self) -> None:
        self.conn.execute("PRAGMA busy_timeout = 30000")
        try:
            while self.parked:
                super().append(*self.parked.pop(0))
        finally:
            super().close()
