"""``zoo.redis-offline-buffer``: while Redis is down, turns are kept in process memory and
acknowledged.

The story: so that an agent keeps working through a Redis outage, ``append`` catches
"connection refused", keeps the turn in a process-local buffer and returns as if it were
saved; a background sync writes the buffer back later (here: after ``SYNC_EVERY`` more
appends, and at close). Until then no other process sees those turns, and when they land
they land after turns appended since. A cut connection reconnects at once and a paused or
killed client does not make the server refuse anything, so only ``restart`` (an outage,
however short) exposes it. Caught as ``reordered-turns`` (the late turns), and as
``lost-turn`` when a read in between cannot be explained by a later reordering.
"""

from __future__ import annotations

import redis

from harness.stores.declare import Declared
from harness.stores.redis import RedisStore, encode_turn

SYNC_EVERY = 50


class OfflineBufferStore(RedisStore):
    def __init__(self, url: str, namespace: str = "harness") -> None:
        super().__init__(url, namespace)
        self.buffer: list[tuple[str, str]] = []
        self.due = 0  # appends left before the next sync

    def append(self, session: str, role: str, content: str) -> None:
        self.due -= 1
        if self.buffer and self.due <= 0:
            self._sync()
        try:
            super().append(session, role, content)
        except redis.ConnectionError as err:
            if "refused" not in str(err):
                raise
            if not self.buffer:
                self.due = SYNC_EVERY
            self.buffer.append((self._k(session, "turns"), encode_turn(role, content)))  # BUG

    def _sync(self) -> None:
        while self.buffer:
            key, raw = self.buffer[0]
            self.r.rpush(key, raw)
            self.buffer.pop(0)

    def close(self) -> None:
        try:
            self._sync()
        finally:
            super().close()


STORE = Declared(
    name="zoo.redis-offline-buffer", factory="OfflineBufferStore", backend="redis",
    description="while Redis refuses connections, turns are buffered in memory and acknowledged (restart)",
    expected="reordered-turns", scenario="chaos-redis.toml", fault="restart",
    also_caught_as=("lost-turn",))  # a read in between that no reordering explains
