"""``zoo.redis-pickle-empty``: a pickle that fails to load reads back as an empty history.

The story: turns are pickled ``Turn`` objects. A deploy changed the class on one host, so
pickles written there don't load on the others (here: each process defines its own
``Turn_<pid>`` class, as two hosts with different code would). The loader catches the error
"to be robust" and returns ``[]``. Reads come back empty without an error, and the next
append, which loads, adds and saves (under WATCH, so no race), overwrites the whole history
with one turn. Caught as ``lost-turn``.
"""

from __future__ import annotations

import os
import pickle
import sys
from typing import Any, cast

import redis

from harness.stores.declare import Declared
from harness.stores.zoo._blob import BlobRedisStore


def _turn_class() -> type:
    """This process's ``Turn`` class, as if this host ran its own version of the code."""
    name = f"Turn_{os.getpid()}"
    mod = sys.modules[__name__]
    cls = getattr(mod, name, None)
    if cls is None:
        cls = type(name, (), {"__slots__": ("role", "content"), "__module__": __name__})
        setattr(mod, name, cls)
    return cls


class PickleEmptyStore(BlobRedisStore):
    def load(self, raw: bytes | None) -> list[tuple[str, str]]:
        if raw is None:
            return []
        try:
            return [(t.role, t.content) for t in pickle.loads(raw)]
        except Exception:  # BUG: "robust" loading; another host's pickle reads as empty
            return []

    def dump(self, turns: list[tuple[str, str]]) -> bytes:
        cls = _turn_class()
        objs: list[Any] = []
        for role, content in turns:
            t = cls()
            t.role, t.content = role, content
            objs.append(t)
        return pickle.dumps(objs)

    def append(self, session: str, role: str, content: str) -> None:
        key = self._k(session, "blob")
        with self.r.pipeline() as pipe:
            while True:
                try:
                    pipe.watch(key)  # type: ignore[no-untyped-call]
                    turns = self.load(cast(bytes | None, pipe.get(key)))
                    turns.append((role, content))
                    pipe.multi()
                    pipe.set(key, self.dump(turns))
                    pipe.execute()
                    return
                except redis.WatchError:
                    continue


STORE = Declared(
    name="zoo.redis-pickle-empty", factory="PickleEmptyStore", backend="redis",
    description="a pickle that fails to load reads back as an empty history",
    expected="lost-turn", scenario="redis-pickle.toml")
