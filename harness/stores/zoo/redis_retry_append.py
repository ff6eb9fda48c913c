"""``zoo.redis-retry-append``: the client sends an RPUSH again after its reply was lost.

The story: the reference store, except that the client is built as
``redis.Redis(host=..., port=...)``, which in redis-py 6 and later retries a command up to
10 times after a connection error (``Redis.from_url`` does not retry). When a connection
dies after the server applied an RPUSH and before its reply arrived, the RPUSH is sent
again and the turn is in the history twice. It takes a connection cut at that moment,
which is what ``disconnect`` aims at (a server crash at that moment does it too, rarely).
Caught as ``duplicate-turn``.
"""

from __future__ import annotations

from urllib.parse import urlparse

import redis

from harness.stores.declare import Declared
from harness.stores.redis import RedisStore


class RetryAppendStore(RedisStore):
    def connect(self, url: str) -> redis.Redis:
        u = urlparse(url)
        # BUG: the constructor's default Retry re-sends a command whose reply was lost.
        return redis.Redis(host=u.hostname or "127.0.0.1", port=u.port or 6379,
                           db=int(u.path.lstrip("/") or 0), password=u.password,
                           decode_responses=True, socket_timeout=30)


STORE = Declared(
    name="zoo.redis-retry-append", factory="RetryAppendStore", backend="redis",
    description="redis-py's default retry re-sends an RPUSH whose reply was lost (disconnect)",
    expected="duplicate-turn", scenario="chaos-redis.toml", fault="disconnect",
    also_exposed_by=("restart",))  # a crash after the RPUSH, before its reply: rarely
