"""``zoo.redis-unflushed-pipeline``: appends are acknowledged before they are sent.

The story: to cut round trips, appends go into a client-side pipeline that is executed
every few appends (and at close). ``append`` returns at once, as a ``save()`` that does not
really flush would. Other processes read histories without the acknowledged turns, and a
worker killed before its next flush takes them with it. Caught as ``lost-turn``.
"""

from __future__ import annotations

from harness.stores.declare import Declared
from harness.stores.redis import RedisStore, encode_turn

FLUSH_EVERY = 4


class UnflushedPipelineStore(RedisStore):
    def __init__(self, url: str, namespace: str = "harness") -> None:
        super().__init__(url, namespace)
        self._pipe = self.r.pipeline(transaction=False)
        self._queued = 0

    def append(self, session: str, role: str, content: str) -> None:
        self._pipe.rpush(self._k(session, "turns"), encode_turn(role, content))
        self._queued += 1
        if self._queued >= FLUSH_EVERY:  # BUG: acknowledged above, sent only now
            self._flush()

    def _flush(self) -> None:
        if self._queued:
            self._pipe.execute()
            self._queued = 0

    def close(self) -> None:
        self._flush()
        super().close()


STORE = Declared(
    name="zoo.redis-unflushed-pipeline", factory="UnflushedPipelineStore", backend="redis",
    description="appends acknowledged before their pipeline is executed",
    expected="lost-turn", scenario="redis-unflushed.toml")
