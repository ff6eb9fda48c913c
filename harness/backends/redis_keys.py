"""The keys of runs on a user's Redis: matching a run's namespace literally, the janitor
that gives every key of a live run a TTL, the index of runs (``harness:runs``), and what
``harness clean`` removes.

Contract (docs/design.md, "Keys on your Redis"):

- A run's keys live under ``harness:<run-id>:``. Cleanup matches that prefix literally:
  glob characters of the run id (``[ ] * ? \\``) are escaped in SCAN MATCH patterns, so a
  scenario named ``*`` or ``glob[x`` touches its own keys and no other.
- While the run lives, a janitor thread of the coordinator scans the namespace every
  :data:`JANITOR_INTERVAL_S` (longer if a pass is slow: a big keyspace) and gives every
  key without a TTL one of :func:`key_ttl_s` (the scenario's duration plus a day): keys a
  SIGKILLed coordinator leaves behind expire by themselves. A key the store gave its own
  TTL keeps it (checked and set in one Lua script, so a lease is never lengthened).
- The sorted set ``harness:runs`` holds each live run's id, scored by when its janitor
  last saw it alive (unix seconds). A run that ends removes its keys and its entry; what
  stays there was left by a killed run, and ``harness clean`` removes it.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from harness.errors import TargetError
from harness.redact import redact_url, scrub

__all__ = ["DAY_S", "INDEX_KEY", "JANITOR_INTERVAL_S", "Janitor", "Removed", "escape_glob",
           "key_ttl_s", "list_runs", "namespace_of", "pattern_of", "remove_runs"]

INDEX_KEY = "harness:runs"
PREFIX = "harness:"
DAY_S = 24 * 3600
JANITOR_INTERVAL_S = 2.0
_BATCH = 500

# EXPIRE only keys that have none (TTL -1): atomic, so a store's own lease TTL set between
# a check and an EXPIRE cannot be overwritten. EXPIRE ... NX would do it on Redis 7 only.
_EXPIRE_UNSET = """
for _, k in ipairs(KEYS) do
  if redis.call('TTL', k) == -1 then redis.call('EXPIRE', k, ARGV[1]) end
end
return 0
"""


def escape_glob(text: str) -> str:
    """``text`` as a Redis glob pattern that matches exactly ``text``."""
    return "".join("\\" + c if c in "[]*?\\" else c for c in text)


def namespace_of(run_id: str) -> str:
    """The key namespace of run ``run_id``."""
    return PREFIX + run_id


def pattern_of(namespace: str) -> str:
    """The SCAN MATCH pattern of the keys under ``namespace:`` and nothing else."""
    return escape_glob(namespace) + ":*"


def key_ttl_s(duration_s: float) -> int:
    """The TTL a run's keys get: its duration plus a day, so that it outlives the run
    (grace, final read and check included) and a killed run's keys still go away."""
    return int(duration_s) + DAY_S


def _client(url: str, timeout_s: float = 10.0) -> Any:
    import redis

    return redis.Redis.from_url(url, socket_connect_timeout=3, socket_timeout=timeout_s)


def _keys(r: Any, namespace: str) -> list[bytes]:
    return list(r.scan_iter(match=pattern_of(namespace), count=1000))


class Janitor:
    """The coordinator's thread that keeps a live run's keys expiring and its index entry
    fresh. Errors reaching the server (a restart fault, a network blip) skip a pass."""

    def __init__(self, url: str, namespace: str, ttl_s: int,
                 interval_s: float = JANITOR_INTERVAL_S) -> None:
        self.url, self.namespace, self.ttl_s, self.interval_s = url, namespace, ttl_s, interval_s
        self.passes = 0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        """Enter the run in the index, then sweep every ``interval_s`` until :meth:`stop`."""
        self._pass()
        self._thread = threading.Thread(target=self._loop, name="redis-janitor", daemon=True)
        self._thread.start()

    def _loop(self) -> None:
        took = 0.0
        # SCAN walks the whole keyspace: on a big server a pass is slow, and the janitor
        # then spends at most a sixth of its time scanning
        while not self._stop.wait(max(self.interval_s, 5 * took)):
            started = time.monotonic()
            self._pass()
            took = time.monotonic() - started

    def _pass(self) -> None:
        import redis

        try:
            r = _client(self.url)
            try:
                self.sweep(r)
            finally:
                r.close()
        except (redis.RedisError, OSError):
            pass  # the next pass tries again; the end of the run removes the keys anyway
        self.passes += 1

    def sweep(self, r: Any) -> None:
        """One pass: refresh the index entry, give every key without a TTL one."""
        r.zadd(INDEX_KEY, {self.namespace.removeprefix(PREFIX): time.time()})
        expire = r.register_script(_EXPIRE_UNSET)
        keys = _keys(r, self.namespace)
        for i in range(0, len(keys), _BATCH):
            expire(keys=keys[i : i + _BATCH], args=[self.ttl_s])

    def stop(self) -> None:
        """Stop sweeping (idempotent); the caller removes the keys."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=30)
            self._thread = None


@dataclass(frozen=True, slots=True)
class Removed:
    """What ``harness clean`` removed of one run."""

    run_id: str
    keys: int
    last_seen: float | None  # unix seconds, from the index; None if it was not there


def list_runs(url: str) -> list[tuple[str, float]]:
    """The index: (run id, last seen alive in unix seconds), oldest first."""
    rows: list[tuple[bytes, float]] = _call(
        url, lambda r: r.zrange(INDEX_KEY, 0, -1, withscores=True))
    return [(m.decode(), s) for m, s in rows]


def remove_runs(url: str, run_ids: tuple[str, ...] = (),
                older_than_s: float | None = None) -> list[Removed]:
    """Delete the keys under ``harness:<run-id>:`` (literally) of each of ``run_ids`` and
    of every indexed run not seen alive for ``older_than_s``, and their index entries."""

    def go(r: Any) -> list[Removed]:
        seen = {m.decode(): s for m, s in r.zrange(INDEX_KEY, 0, -1, withscores=True)}
        chosen = list(dict.fromkeys(run_ids))
        if older_than_s is not None:
            cutoff = time.time() - older_than_s
            chosen += [rid for rid, s in sorted(seen.items(), key=lambda kv: kv[1])
                       if s <= cutoff and rid not in chosen]
        out = []
        for rid in chosen:
            n = delete_namespace(r, namespace_of(rid))
            r.zrem(INDEX_KEY, rid)
            out.append(Removed(rid, n, seen.get(rid)))
        return out

    return _call(url, go)


def delete_namespace(r: Any, namespace: str) -> int:
    """Delete every key under ``namespace:`` (matched literally); how many there were."""
    n = 0
    keys = _keys(r, namespace)
    for i in range(0, len(keys), _BATCH):
        n += int(r.delete(*keys[i : i + _BATCH]))
    return n


_T = TypeVar("_T")


def _call(url: str, fn: Callable[[Any], _T]) -> _T:
    """``fn(client)`` on the Redis at ``url``; TargetError (exit 2) if it cannot be done."""
    import redis

    try:
        r = _client(url)
        try:
            return fn(r)
        finally:
            r.close()
    except (redis.RedisError, OSError, ValueError) as err:
        raise TargetError(f"Redis at {redact_url(url)}: {scrub(str(err))}") from None
