"""The reference Redis store: correct under concurrent processes.

Appends are one ``RPUSH`` (atomic on the server); snapshot and rollback are Lua scripts,
so each runs as one atomic step. Every key lives under the run's namespace. The client
does not retry: redis-py 8 retries 10 times by default, which hides injected faults and
can apply a non-idempotent RPUSH twice.

What the zoo builds on: :func:`client` (no hidden retries), :func:`encode_turn` and
:func:`decode_turn` (one list element per turn), :data:`SNAPSHOT_SCRIPT` and
:data:`ROLLBACK_SCRIPT`, and :class:`RedisStore`, whose ``connect`` (the client it uses)
and ``_k`` (the key of a session's ``turns``, ``snaps``, ``snap:<id>``...) a subclass may
override.
"""

from __future__ import annotations

from typing import Any, cast

import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

from harness.errors import SnapshotNotFound
from harness.stores.declare import Declared

__all__ = ["ROLLBACK_SCRIPT", "SNAPSHOT_SCRIPT", "STORE", "RedisStore", "client", "decode_turn",
           "encode_turn"]

#: KEYS: turns, snaps, snapseq; ARGV: the prefix of snapshot keys. Copies the turns to
#: ``<prefix><id>`` for a new id, lists the id, returns it.
SNAPSHOT_SCRIPT = """
local id = tostring(redis.call('INCR', KEYS[3]))
local turns = redis.call('LRANGE', KEYS[1], 0, -1)
local skey = ARGV[1] .. id
for i = 1, #turns, 4000 do
  redis.call('RPUSH', skey, unpack(turns, i, math.min(i + 3999, #turns)))
end
redis.call('RPUSH', KEYS[2], id)
return id
"""

#: KEYS: turns, snaps; ARGV: the prefix of snapshot keys, the id. Replaces the turns by the
#: snapshot's; an error reply ``SnapshotNotFound <id>`` for an id not in ``snaps``.
ROLLBACK_SCRIPT = """
if not redis.call('LPOS', KEYS[2], ARGV[2]) then
  return redis.error_reply('SnapshotNotFound ' .. ARGV[2])
end
local turns = redis.call('LRANGE', ARGV[1] .. ARGV[2], 0, -1)
redis.call('DEL', KEYS[1])
for i = 1, #turns, 4000 do
  redis.call('RPUSH', KEYS[1], unpack(turns, i, math.min(i + 3999, #turns)))
end
return 1
"""


def client(url: str, **kw: Any) -> redis.Redis:
    """A redis-py client with no hidden retries and decoded (str) replies."""
    opts: dict[str, Any] = {"decode_responses": True, "retry": Retry(NoBackoff(), 0),
                            "socket_timeout": 30, **kw}
    return redis.Redis.from_url(url, **opts)


def encode_turn(role: str, content: str) -> str:
    return f"{role}\n{content}"


def decode_turn(raw: str) -> tuple[str, str]:
    role, _, content = raw.partition("\n")
    return role, content


class RedisStore:
    """``{ns}:{session}:turns`` list; ``{ns}:{session}:snaps`` list of ids; one list per
    snapshot at ``{ns}:{session}:snap:{id}``."""

    backend = "redis"

    def __init__(self, url: str, namespace: str = "harness") -> None:
        self.ns = namespace or "harness"
        self.r = self.connect(url)
        self._snapshot = self.r.register_script(SNAPSHOT_SCRIPT)
        self._rollback = self.r.register_script(ROLLBACK_SCRIPT)

    def connect(self, url: str) -> redis.Redis:
        """The client this store uses: :func:`client` (decoded replies, no retries)."""
        return client(url)

    def _k(self, session: str, what: str) -> str:
        return f"{self.ns}:{session}:{what}"

    def append(self, session: str, role: str, content: str) -> None:
        self.r.rpush(self._k(session, "turns"), encode_turn(role, content))

    def history(self, session: str) -> list[tuple[str, str]]:
        raw = cast(list[str], self.r.lrange(self._k(session, "turns"), 0, -1))
        return [decode_turn(x) for x in raw]

    def snapshot(self, session: str) -> str:
        keys = [self._k(session, "turns"), self._k(session, "snaps"), self._k(session, "snapseq")]
        return str(self._snapshot(keys=keys, args=[self._k(session, "snap:")]))

    def rollback(self, session: str, snapshot_id: str) -> None:
        keys = [self._k(session, "turns"), self._k(session, "snaps")]
        try:
            self._rollback(keys=keys, args=[self._k(session, "snap:"), snapshot_id])
        except redis.ResponseError as err:
            if "SnapshotNotFound" in str(err):
                raise SnapshotNotFound(snapshot_id) from None
            raise

    def snapshots(self, session: str) -> list[str]:
        return cast(list[str], self.r.lrange(self._k(session, "snaps"), 0, -1))

    def close(self) -> None:
        self.r.close()


STORE = Declared(name="redis", factory="RedisStore", backend="redis",
                 description="reference Redis store (RPUSH appends, Lua snapshot and rollback)")
