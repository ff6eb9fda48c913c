"""``zoo.redis-rmw-append``: append is GET, modify, SET of one JSON value.

The story: the chat history is one JSON document per session (easy to cache, easy to show
in a UI). ``append`` reads it, adds the turn and writes it back. Two worker processes
that append at the same time both read version N and both write N+1: the later SET erases
the other's turn, which had already been acknowledged. Caught as ``lost-turn``.
"""

from __future__ import annotations

import json

from harness.stores.declare import Declared
from harness.stores.zoo._blob import BlobRedisStore


class RmwAppendStore(BlobRedisStore):
    def load(self, raw: bytes | None) -> list[tuple[str, str]]:
        return [] if raw is None else [(r, c) for r, c in json.loads(raw)]

    def dump(self, turns: list[tuple[str, str]]) -> bytes:
        return json.dumps(turns, ensure_ascii=False).encode()

    # append is BlobRedisStore.append: GET, modify, SET, with nothing guarding the gap.


STORE = Declared(
    name="zoo.redis-rmw-append", factory="RmwAppendStore", backend="redis",
    description="append is GET, modify, SET of one JSON value (read-modify-write race)",
    expected="lost-turn", scenario="redis-append-race.toml")
