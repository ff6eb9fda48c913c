"""``zoo.redis-lease-ttl``: a lock with a TTL guards a read-modify-write append, and a
pause outlives the TTL.

The story: the history is one JSON value per session (as in ``zoo.redis-rmw-append``),
and the race was fixed with a lock held for the whole agent step: ``SET lock NX PX 500``,
GET the history, update the conversation summary (a model call in the real code; 10 ms
here), SET the history, then a delete that checks the owner. 500 ms is far longer than a
step takes. But a process that stops for longer (a GC pause, a swapped-out VM, SIGSTOP)
while holding the lock loses it without knowing: another process takes it and appends,
then the sleeper wakes up and SETs the history it read before, erasing that turn. There
is no fencing token to refuse its late write. A killed holder never writes again, so only
``pause`` exposes it. Caught as ``lost-turn``.

Why 500 ms: with 200 ms, a stall of the host alone (a 2-core CI machine in the middle of
the full test suite) once outlasted the lease with no pause fault at all, and the bug
showed under the other faults; pauses that expose it last 0.6 s.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from typing import cast

from harness.errors import SnapshotNotFound
from harness.stores.declare import Declared
from harness.stores.zoo.redis_rmw_append import RmwAppendStore

LEASE_MS = 500
SUMMARY_S = 0.01  # stands for the summarizer call made while holding the lock
_UNLOCK = """if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0"""


class LeaseTtlStore(RmwAppendStore):
    def _locked(self, session: str, body: Callable[[], None]) -> None:
        lock, token = self._k(session, "lock"), uuid.uuid4().hex
        while not self.r.set(lock, token, nx=True, px=LEASE_MS):
            time.sleep(0.0005)  # another process holds the lease
        try:
            body()  # BUG: may still be running when the lease has expired
        finally:
            self.r.eval(_UNLOCK, 1, lock, token)

    def append(self, session: str, role: str, content: str) -> None:
        key = self._k(session, "blob")

        def body() -> None:
            turns = self.load(cast("bytes | None", self.r.get(key)))
            time.sleep(SUMMARY_S)
            turns.append((role, content))
            self.r.set(key, self.dump(turns))

        self._locked(session, body)

    def rollback(self, session: str, snapshot_id: str) -> None:
        def body() -> None:
            raw = self.r.get(self._k(session, f"snap:{snapshot_id}"))
            if raw is None:
                raise SnapshotNotFound(snapshot_id)
            self.r.set(self._k(session, "blob"), raw)

        self._locked(session, body)


STORE = Declared(
    name="zoo.redis-lease-ttl", factory="LeaseTtlStore", backend="redis",
    description="a 500 ms lock lease guards read-modify-write appends (pause)",
    expected="lost-turn", scenario="redis-lease.toml", fault="pause")
