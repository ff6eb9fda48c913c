"""``zoo.redis-snapshot-two-steps``: snapshot lists its id and copies the first half of the
turns, then copies the rest with a second round trip.

The story: the Lua snapshot script was dropped for plain commands, and the copy of a long
conversation was split in two pipelines to keep each reply small. With appends alone this
is harmless (they only add at the end, so the copy is the list as it was at the second
step). A rollback between the two steps is not: the copy is half the old list and half the
new one, a state the session never had, and a rollback to it restores that. A rollback to
the snapshot between the steps (its id is already listed) restores half of it. Caught as
``bad-rollback``. Only a rollback overlapping a snapshot exposes it.
"""

from __future__ import annotations

from typing import cast

from harness.stores.declare import Declared
from harness.stores.redis import RedisStore


class SnapshotTwoStepsStore(RedisStore):
    def snapshot(self, session: str) -> str:
        sid = str(self.r.incr(self._k(session, "snapseq")))
        skey = self._k(session, f"snap:{sid}")
        turns = cast(list[str], self.r.lrange(self._k(session, "turns"), 0, -1))
        half = len(turns) // 2
        pipe = self.r.pipeline(transaction=True)
        if half:
            pipe.rpush(skey, *turns[:half])
        pipe.rpush(self._k(session, "snaps"), sid)
        pipe.execute()
        # BUG: the rest is read again, from a list a rollback may have replaced by now
        rest = cast(list[str], self.r.lrange(self._k(session, "turns"), half, -1))
        if rest:
            self.r.rpush(skey, *rest)
        return sid


STORE = Declared(
    name="zoo.redis-snapshot-two-steps", factory="SnapshotTwoStepsStore", backend="redis",
    description="snapshot lists its id and copies half the turns, then reads and copies the rest",
    expected="bad-rollback", scenario="redis-rollback-storm.toml",
    also_caught_as=("reordered-turns", "duplicate-turn", "lost-turn", "incompatible-order"))
