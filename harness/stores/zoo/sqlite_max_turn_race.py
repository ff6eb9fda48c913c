"""``zoo.sqlite-max-turn-race``: the next turn number is read outside the write transaction.

The story: ``append`` asks ``SELECT MAX(turn)+1`` in autocommit mode, then opens the write
transaction and ``INSERT OR REPLACE``\\ s the row ("replace" was added to silence a UNIQUE
error seen in production). Two processes that read the same MAX both write turn N; the
second silently replaces the first, and an acknowledged turn is gone. Caught as
``lost-turn``.
"""

from __future__ import annotations

from harness.stores.declare import Declared
from harness.stores.sqlite import SqliteStore, immediate


class MaxTurnRaceStore(SqliteStore):
    def append(self, session: str, role: str, content: str) -> None:
        # BUG: read outside the transaction that writes.
        (seq,) = self.conn.execute(
            "SELECT COALESCE(MAX(seq), 0) + 1 FROM turns WHERE session = ?", (session,)
        ).fetchone()
        with immediate(self.conn):
            self.conn.execute(
                "INSERT OR REPLACE INTO turns (session, seq, role, content) VALUES (?, ?, ?, ?)",
                (session, seq, role, content),
            )


STORE = Declared(
    name="zoo.sqlite-max-turn-race", factory="MaxTurnRaceStore", backend="sqlite",
    description="next turn number read as MAX+1 outside the write transaction",
    expected="lost-turn", scenario="sqlite-max-turn-race.toml")
