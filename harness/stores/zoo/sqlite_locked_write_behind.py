"""``zoo.sqlite-locked-write-behind``: a turn that cannot get the write lock in time is
parked in memory and acknowledged.

The story: appends wait at most 500 ms for SQLite's write lock, which looks generous: a
writer holds it for well under a millisecond, and the worst wait under load is a fraction
of that. When the wait runs out, ``append`` parks the turn in a process-local queue and
returns, "so that a slow database never stalls the agent"; a write-behind flush empties
the queue later (here: ``FLUSH_AFTER`` appends later, and at close). Until then nobody,
this process included, reads that turn, and it lands after turns appended in the
meantime. It takes something holding the lock for longer, a backup, a VACUUM, a
migration, which ``lock-hold`` stands for (a pause that catches a writer inside its
transaction does it too). Caught as ``lost-turn`` (or ``reordered-turns``).
"""

from __future__ import annotations

import sqlite3

from harness.stores.declare import Declared
from harness.stores.sqlite import SqliteStore

WRITE_TIMEOUT_S = 0.5
FLUSH_AFTER = 20


class LockedWriteBehindStore(SqliteStore):
    def __init__(self, url: str, namespace: str = "") -> None:
        super().__init__(url, namespace)
        self.conn.execute(f"PRAGMA busy_timeout = {int(WRITE_TIMEOUT_S * 1000)}")
        self.parked: list[tuple[str, str, str]] = []
        self.due = 0  # appends left before the next flush

    def append(self, session: str, role: str, content: str) -> None:
        self.due -= 1
        try:
            if self.parked and self.due <= 0:
                self._flush()
            super().append(session, role, content)
        except sqlite3.OperationalError as err:
            if "locked" not in str(err):
                raise
            if not self.parked:
                self.due = FLUSH_AFTER
            self.parked.append((session, role, content))  # BUG: acknowledged, not written

    def _flush(self) -> None:
        while self.parked:
            super().append(*self.parked[0])
            self.parked.pop(0)

    def close(self) -> None:
        self.conn.execute("PRAGMA busy_timeout = 30000")
        try:
            self._flush()
        finally:
            super().close()


STORE = Declared(
    name="zoo.sqlite-locked-write-behind", factory="LockedWriteBehindStore", backend="sqlite",
    description="a turn that waits 500 ms for the lock is parked in memory and acknowledged (lock-hold)",
    expected="lost-turn", scenario="chaos-sqlite.toml", fault="lock-hold",
    also_caught_as=("reordered-turns",),  # the parked turn lands late
    also_exposed_by=("pause",))  # a pause that lands while a writer holds the lock
