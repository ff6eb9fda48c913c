"""``zoo.redis-shared-key``: the history key ignores the session.

The story: the key was built as ``f"{prefix}:history"`` when the agent had one user; the
session id was added to the API but never to the key. Every session reads and writes the
same list, so one user's turns show up in another's conversation. Caught as
``cross-session-bleed``.
"""

from __future__ import annotations

from harness.stores.declare import Declared
from harness.stores.redis import RedisStore


class SharedKeyStore(RedisStore):
    def _k(self, session: str, what: str) -> str:
        if what == "turns":
            return f"{self.ns}:history"  # BUG: no session in the key
        return super()._k(session, what)


STORE = Declared(
    name="zoo.redis-shared-key", factory="SharedKeyStore", backend="redis",
    description="the history key ignores the session",
    expected="cross-session-bleed", scenario="redis-sessions.toml")
