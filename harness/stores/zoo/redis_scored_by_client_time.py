"""``zoo.redis-scored-by-client-time``: turns in a sorted set scored by the client's clock.

The story: a chat history kept as a Redis sorted set, each turn scored by the time the
client built it (``ZADD turns <time> <turn>``), read back with ``ZRANGE``: ordered by time,
easy to page, easy to trim. But the score is taken before the turn reaches the server: the
client first stores the message record (``HSET`` of its metadata, one round trip), then
indexes it. A process that took its time first and was slower to get there lands its turn
*behind* turns that other readers have already seen. Nothing is lost, but history that was
already shown changed its order. Caught as ``back-dated-turn`` (``incompatible-order``
when the two reads overlap).
"""

from __future__ import annotations

import time
from typing import cast

import orjson

from harness.errors import SnapshotNotFound
from harness.stores.declare import Declared
from harness.stores.redis import RedisStore, decode_turn, encode_turn

#: KEYS: turns, snaps, snapseq; ARGV: the prefix of snapshot keys. Copies the sorted set
#: (scores too) to ``<prefix><id>`` for a new id, lists the id, returns it.
ZSNAPSHOT_SCRIPT = """
local id = tostring(redis.call('INCR', KEYS[3]))
redis.call('ZUNIONSTORE', ARGV[1] .. id, 1, KEYS[1])
redis.call('RPUSH', KEYS[2], id)
return id
"""

#: KEYS: turns, snaps; ARGV: the prefix of snapshot keys, the id.
ZROLLBACK_SCRIPT = """
if not redis.call('LPOS', KEYS[2], ARGV[2]) then
  return redis.error_reply('SnapshotNotFound ' .. ARGV[2])
end
redis.call('ZUNIONSTORE', KEYS[1], 1, ARGV[1] .. ARGV[2])
return 1
"""


class ScoredByClientTimeStore(RedisStore):
    """``{ns}:{session}:zturns`` sorted set scored by client time; a message record per
    turn in ``{ns}:{session}:meta``; snapshots as copies of the sorted set."""

    def __init__(self, url: str, namespace: str = "harness") -> None:
        super().__init__(url, namespace)
        self._zsnapshot = self.r.register_script(ZSNAPSHOT_SCRIPT)
        self._zrollback = self.r.register_script(ZROLLBACK_SCRIPT)

    def append(self, session: str, role: str, content: str) -> None:
        turn = encode_turn(role, content)
        created_at = time.time()  # BUG: the score is taken here, the ZADD lands later
        record = orjson.dumps({"role": role, "created_at": created_at, "chars": len(content)})
        self.r.hset(self._k(session, "meta"), f"{created_at!r}:{len(content)}", record)
        self.r.zadd(self._k(session, "zturns"), {turn: created_at})

    def history(self, session: str) -> list[tuple[str, str]]:
        raw = cast(list[str], self.r.zrange(self._k(session, "zturns"), 0, -1))
        return [decode_turn(x) for x in raw]

    def snapshot(self, session: str) -> str:
        keys = [self._k(session, "zturns"), self._k(session, "snaps"),
                self._k(session, "snapseq")]
        return str(self._zsnapshot(keys=keys, args=[self._k(session, "zsnap:")]))

    def rollback(self, session: str, snapshot_id: str) -> None:
        keys = [self._k(session, "zturns"), self._k(session, "snaps")]
        try:
            self._zrollback(keys=keys, args=[self._k(session, "zsnap:"), snapshot_id])
        except Exception as err:
            if "SnapshotNotFound" in str(err):
                raise SnapshotNotFound(snapshot_id) from None
            raise


STORE = Declared(
    name="zoo.redis-scored-by-client-time", factory="ScoredByClientTimeStore", backend="redis",
    description="turns in a sorted set scored by client time taken before the write",
    expected="back-dated-turn", scenario="redis-back-dated.toml",
    also_caught_as=("incompatible-order",))
