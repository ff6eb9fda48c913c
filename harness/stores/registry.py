"""Resolving a store spec: built-in short names, or ``package.module:factory``.

The factory is imported and called **inside each worker** as ``factory(url, namespace=ns)``
(``namespace`` only if the factory accepts it). A factory (or the class it is) may carry
``backend = "sqlite" | "redis"`` and ``capabilities = {...}`` attributes.
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from harness.errors import StoreSpecError
from harness.stores.base import ALL_CAPABILITIES, OPS, MemoryStore

__all__ = ["BUILTINS", "StoreInfo", "open_store", "resolve"]


@dataclass(frozen=True, slots=True)
class StoreInfo:
    """What the harness knows of a store before any worker opens it."""

    spec: str
    target: str  # "package.module:attr"
    backend: str | None  # "sqlite", "redis", or None when the spec does not say
    description: str = ""
    capabilities: frozenset[str] = field(default=ALL_CAPABILITIES)
    expected: str | None = None  # for the zoo: the violation kind that catches it


_Z = "harness.stores.zoo."
BUILTINS: dict[str, StoreInfo] = {
    s.spec: s
    for s in (
        StoreInfo("sqlite", "harness.stores.sqlite:SqliteStore", "sqlite",
                  "reference SQLite store (WAL, BEGIN IMMEDIATE, snapshot tables)"),
        StoreInfo("redis", "harness.stores.redis:RedisStore", "redis",
                  "reference Redis store (RPUSH appends, Lua snapshot and rollback)"),
        StoreInfo("zoo.sqlite-rollback-wipes-snapshots",
                  _Z + "sqlite_rollback_wipes_snapshots:RollbackWipesSnapshotsStore", "sqlite",
                  "rollback's transaction also clears the snapshots table",
                  expected="vanished-checkpoint"),
        StoreInfo("zoo.sqlite-max-turn-race", _Z + "sqlite_max_turn_race:MaxTurnRaceStore",
                  "sqlite", "next turn number read as MAX+1 outside the write transaction",
                  expected="lost-turn"),
        StoreInfo("zoo.redis-rmw-append", _Z + "redis_rmw_append:RmwAppendStore", "redis",
                  "append is GET, modify, SET of one JSON value (read-modify-write race)",
                  expected="lost-turn"),
        StoreInfo("zoo.redis-pickle-empty", _Z + "redis_pickle_empty:PickleEmptyStore",
                  "redis", "a pickle that fails to load reads back as an empty history",
                  expected="lost-turn"),
        StoreInfo("zoo.redis-shared-key", _Z + "redis_shared_key:SharedKeyStore", "redis",
                  "the history key ignores the session", expected="cross-session-bleed"),
        StoreInfo("zoo.redis-unflushed-pipeline",
                  _Z + "redis_unflushed_pipeline:UnflushedPipelineStore", "redis",
                  "appends acknowledged before their pipeline is executed",
                  expected="lost-turn"),
        # Bugs that only a fault exposes (harness.runner.nemesis; scenarios/chaos-*.toml):
        StoreInfo("zoo.sqlite-crash-resume", _Z + "sqlite_crash_resume:CrashResumeStore",
                  "sqlite", "crash recovery at start-up restores the last checkpoint (kill)",
                  expected="lost-turn"),
        StoreInfo("zoo.sqlite-swallow-full", _Z + "sqlite_swallow_full:SwallowFullStore",
                  "sqlite", "append logs and swallows SQLITE_FULL (disk-full)",
                  expected="lost-turn"),
        StoreInfo("zoo.sqlite-locked-write-behind",
                  _Z + "sqlite_locked_write_behind:LockedWriteBehindStore", "sqlite",
                  "a turn that waits 500 ms for the lock is parked in memory and "
                  "acknowledged (lock-hold)", expected="lost-turn"),
        StoreInfo("zoo.redis-lease-ttl", _Z + "redis_lease_ttl:LeaseTtlStore", "redis",
                  "a 200 ms lock lease guards read-modify-write appends (pause)",
                  expected="lost-turn"),
        StoreInfo("zoo.redis-retry-append", _Z + "redis_retry_append:RetryAppendStore",
                  "redis", "redis-py's default retry re-sends an RPUSH whose reply was lost "
                  "(disconnect)", expected="duplicate-turn"),
        StoreInfo("zoo.redis-offline-buffer", _Z + "redis_offline_buffer:OfflineBufferStore",
                  "redis", "while Redis refuses connections, turns are buffered in memory and "
                  "acknowledged (restart)", expected="reordered-turns"),
    )
}


def _load(target: str, spec: str) -> Callable[..., Any]:
    mod_name, _, attr = target.partition(":")
    if not mod_name or not attr:
        raise StoreSpecError(
            f"unknown store {spec!r}: not a built-in (see `harness stores`) "
            "and not of the form package.module:factory"
        )
    if mod_name.startswith("."):
        raise StoreSpecError(f"store {spec!r}: {mod_name!r} is a relative module name; "
                             "give the full package.module:factory")
    try:
        mod = importlib.import_module(mod_name)
    except ImportError as err:
        raise StoreSpecError(f"store {spec!r}: cannot import {mod_name!r} ({err})") from err
    except SystemExit as err:  # else the harness would exit with the module's code, silently
        raise StoreSpecError(f"store {spec!r}: importing {mod_name!r} called "
                             f"sys.exit({err.code!r})") from None
    except Exception as err:  # a syntax error, or the module raised at import
        raise StoreSpecError(f"store {spec!r}: importing {mod_name!r} failed: "
                             f"{type(err).__name__}: {err}") from None
    try:
        factory = getattr(mod, attr)
    except AttributeError:
        raise StoreSpecError(f"store {spec!r}: module {mod_name!r} has no {attr!r}") from None
    if not callable(factory):
        raise StoreSpecError(f"store {spec!r}: {target} is not callable")
    return factory  # type: ignore[no-any-return]


def resolve(spec: str) -> StoreInfo:
    """A spec -> its StoreInfo, importing a user's factory to read its attributes.

    Raises StoreSpecError (exit 2) for an unknown name or an unimportable factory."""
    if spec in BUILTINS:
        return BUILTINS[spec]
    factory = _load(spec, spec)
    caps = getattr(factory, "capabilities", None)
    if caps is not None and (isinstance(caps, str) or not isinstance(caps, Iterable)
                             or not all(isinstance(c, str) for c in caps)):
        raise StoreSpecError(f"store {spec!r}: capabilities must be a set of operation "
                             f"names, got {caps!r}")
    capabilities = frozenset(caps) & ALL_CAPABILITIES if caps is not None else ALL_CAPABILITIES
    if inspect.isclass(factory) and caps is None:
        capabilities = frozenset(op for op, m in OPS.items() if hasattr(factory, m))
    if "append" not in capabilities:
        raise StoreSpecError(f"store {spec!r}: it cannot append, so there is nothing to test")
    doc = (inspect.getdoc(factory) or "").strip().splitlines()
    return StoreInfo(spec, spec, getattr(factory, "backend", None), doc[0] if doc else "",
                     capabilities)


def open_store(info: StoreInfo, url: str, namespace: str) -> MemoryStore:
    """Call the store's factory (in the calling process) with the target URL."""
    factory = _load(info.target, info.spec)
    try:
        params = inspect.signature(factory).parameters
        takes_ns = "namespace" in params or any(
            p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()
        )
    except (TypeError, ValueError):
        takes_ns = False
    store = factory(url, namespace=namespace) if takes_ns else factory(url)
    return store  # type: ignore[no-any-return]
