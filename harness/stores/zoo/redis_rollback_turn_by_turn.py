"""``zoo.redis-rollback-turn-by-turn``: rollback deletes the turns, then pushes the
snapshot's turns back one command at a time.

The story: the Lua rollback script was replaced by plain client commands to "keep logic
out of Redis": check the snapshot exists, ``DEL`` the session's turns, then ``RPUSH`` the
snapshot's turns back one by one. Alone it restores the right turns. Overlapped, it does
not: a read in the middle sees a part of the snapshot, and an append in the middle lands
among the restored turns, out of order, or is erased by a second rollback. Caught as
``reordered-turns`` (and ``duplicate-turn``, ``bad-rollback``). Only a rollback that
overlaps other ops of its session exposes it: a run whose rollbacks never overlap anything
passes it.
"""

from __future__ import annotations

from typing import cast

from harness.errors import SnapshotNotFound
from harness.stores.declare import Declared
from harness.stores.redis import RedisStore


class RollbackTurnByTurnStore(RedisStore):
    def rollback(self, session: str, snapshot_id: str) -> None:
        if self.r.lpos(self._k(session, "snaps"), snapshot_id) is None:
            raise SnapshotNotFound(snapshot_id)
        turns = cast(list[str], self.r.lrange(self._k(session, f"snap:{snapshot_id}"), 0, -1))
        self.r.delete(self._k(session, "turns"))
        for raw in turns:  # BUG: one round trip per turn, with nothing guarding the gaps
            self.r.rpush(self._k(session, "turns"), raw)


STORE = Declared(
    name="zoo.redis-rollback-turn-by-turn", factory="RollbackTurnByTurnStore", backend="redis",
    description="rollback is DEL, then one RPUSH per snapshot turn (not atomic)",
    expected="reordered-turns", scenario="redis-rollback-storm.toml",
    also_caught_as=("duplicate-turn", "bad-rollback", "lost-turn"))
