"""``zoo.sqlite-client-timestamp``: turns ordered by a client timestamp taken before the
write waits for the database lock.

The story: each message gets its ``created_at`` when the agent builds it, and the history
is ``ORDER BY created_at``, which looked like the natural order of a conversation. But the
timestamp is taken before ``append`` waits for SQLite's write lock: a process that took
its time first and then waited on the lock commits *after* a process that took a later
time. A reader that already saw the later turn then sees the late one appear *behind* it,
inserted into history it had already shown. Nothing is lost, but the order of the
conversation changed after the fact (a summary or a cursor built on the first read is now
wrong). Caught as ``back-dated-turn`` (``incompatible-order`` when the two reads overlap).
"""

from __future__ import annotations

import time

from harness.stores.declare import Declared
from harness.stores.sqlite import SqliteStore, immediate


class ClientTimestampStore(SqliteStore):
    """The reference schema, with ``seq`` holding the client's clock in nanoseconds."""

    def append(self, session: str, role: str, content: str) -> None:
        created_at = time.time_ns()  # BUG: taken before the lock wait, used as the order
        with immediate(self.conn):
            self.conn.execute(
                "INSERT INTO turns (session, seq, role, content) VALUES (?, ?, ?, ?)",
                (session, created_at, role, content),
            )


STORE = Declared(
    name="zoo.sqlite-client-timestamp", factory="ClientTimestampStore", backend="sqlite",
    description="turns ordered by a client timestamp taken before the write lock wait",
    expected="back-dated-turn", scenario="sqlite-back-dated.toml",
    also_caught_as=("incompatible-order",))
