"""``zoo.sqlite-crash-resume``: crash recovery at start-up restores the last checkpoint,
dropping every turn acknowledged since.

The story: each process registers in a ``writers`` table when it opens the store, notes
each session it appends to, and leaves the table when it closes. A process that opens the
store and finds a registered writer whose pid no longer exists concludes that it crashed,
perhaps in the middle of a turn, and recovers the sessions it wrote to: it restores each
one to its newest snapshot ("the last known good state"), or empties a session that has
none. Every turn acknowledged since that snapshot is gone, whoever wrote it. Only a
process that dies without closing starts a recovery, so only ``kill`` exposes it (the
replacement process does the damage). Caught as ``lost-turn``.
"""

from __future__ import annotations

import os

from harness.stores.declare import Declared
from harness.stores.sqlite import SqliteStore, immediate


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class CrashResumeStore(SqliteStore):
    def __init__(self, url: str, namespace: str = "") -> None:
        super().__init__(url, namespace)
        self.pid = os.getpid()
        self.touched: set[str] = set()
        with immediate(self.conn):
            self.conn.execute("CREATE TABLE IF NOT EXISTS writers (pid INTEGER PRIMARY KEY)")
            self.conn.execute("CREATE TABLE IF NOT EXISTS writer_sessions "
                              "(pid INTEGER NOT NULL, session TEXT NOT NULL, "
                              "PRIMARY KEY (pid, session))")
            for (pid,) in self.conn.execute("SELECT pid FROM writers").fetchall():
                if not _alive(pid):
                    self._recover(pid)  # BUG: "recovery" drops acknowledged turns
            self.conn.execute("INSERT OR REPLACE INTO writers (pid) VALUES (?)", (self.pid,))

    def _recover(self, dead: int) -> None:
        sessions = self.conn.execute("SELECT session FROM writer_sessions WHERE pid = ?",
                                     (dead,)).fetchall()
        for (session,) in sessions:
            snap = self.conn.execute(
                "SELECT id FROM snapshots WHERE session = ? ORDER BY created DESC LIMIT 1",
                (session,)).fetchone()
            self.conn.execute("DELETE FROM turns WHERE session = ?", (session,))
            if snap is not None:
                self.conn.execute(
                    "INSERT INTO turns (session, seq, role, content) "
                    "SELECT ?, seq, role, content FROM snapshot_turns WHERE snapshot_id = ?",
                    (session, snap[0]))
        self.conn.execute("DELETE FROM writer_sessions WHERE pid = ?", (dead,))
        self.conn.execute("DELETE FROM writers WHERE pid = ?", (dead,))

    def append(self, session: str, role: str, content: str) -> None:
        if session not in self.touched:
            with immediate(self.conn):
                self.conn.execute("INSERT OR IGNORE INTO writer_sessions (pid, session) "
                                  "VALUES (?, ?)", (self.pid, session))
            self.touched.add(session)
        super().append(session, role, content)

    def close(self) -> None:
        with immediate(self.conn):
            self.conn.execute("DELETE FROM writer_sessions WHERE pid = ?", (self.pid,))
            self.conn.execute("DELETE FROM writers WHERE pid = ?", (self.pid,))
        super().close()


STORE = Declared(
    name="zoo.sqlite-crash-resume", factory="CrashResumeStore", backend="sqlite",
    description="crash recovery at start-up restores the last checkpoint (kill)",
    expected="lost-turn", scenario="chaos-sqlite.toml", fault="kill")
