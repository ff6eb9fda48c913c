"""The ``[control]`` table of a scenario: whether a run is controlled, and how.

Example::

    [control]
    enabled = true       # controlled mode (default false: free mode, the fast one)
    strategy = "pct"     # pct | random | rr
    depth = 3            # PCT: d, the number of priority change points plus one
    steps = 0            # PCT: estimated scheduling steps of a run; 0 = from the plan
    schedules = 1        # `harness run`: try seeds N, N+1, ... until one fails
    block_ms = 1000      # a granted worker silent this long is recorded as blocked
    busy_retries = 1000  # SQLITE_BUSY retries (each after another worker's step)
    pin = true           # run the workers, the coordinator and a managed redis-server on
                         # one CPU while stepping: one runs at a time anyway, and handing
                         # over within a CPU is several times faster than across CPUs

A replay or a shrunk repro also carries ``trace`` (the grants to follow, worker slots),
``blocked`` (grant indices after which the grantee was blocked), ``streams`` (an
explicit plan: one list of op tables per worker) and ``faults`` (an explicit fault
schedule at scheduling decisions, which replaces the one drawn from ``[[faults]]``)::

    faults = [{kind = "kill", worker = 1, at_step = 17},           # before decision 17
              {kind = "pause", worker = 0, at_step = 30, for_steps = 12},
              {kind = "restart", at_step = 45}]

``[[faults]]`` apply in controlled mode too, moved from times onto decisions (see
:func:`harness.plan.stepped_faults`).
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

from harness.errors import ScenarioError

__all__ = ["STRATEGIES", "ControlSpec", "parse_control"]

STRATEGIES = ("pct", "random", "rr")
_OP_KEYS = {"f", "session", "role", "content", "choice"}
_AIMED = frozenset({"kill", "pause", "disconnect"})  # faults aimed at one worker slot
_LASTING = frozenset({"pause", "disk-full", "lock-hold"})  # faults that last for_steps


@dataclass(frozen=True, slots=True)
class ControlSpec:
    """The validated ``[control]`` table."""

    enabled: bool = False
    strategy: str = "pct"
    depth: int = 3
    steps: int = 0
    schedules: int = 1
    block_ms: float = 1000.0
    busy_retries: int = 1000
    pin: bool = True
    trace: tuple[int, ...] | None = None
    blocked: tuple[int, ...] = ()
    streams: tuple[tuple[dict[str, Any], ...], ...] | None = None
    faults: tuple[dict[str, Any], ...] | None = None


def _int(raw: dict[str, Any], key: str, lo: int, src: str) -> int:
    v = raw[key]
    if not isinstance(v, int) or isinstance(v, bool) or v < lo:
        raise ScenarioError(f"{src}: control.{key} must be an integer >= {lo}, got {v!r}")
    return v


def _ints(raw: dict[str, Any], key: str, src: str) -> tuple[int, ...]:
    v = raw[key]
    if not isinstance(v, list | tuple) or not all(
        isinstance(x, int) and not isinstance(x, bool) and x >= 0 for x in v
    ):
        raise ScenarioError(f"{src}: control.{key} must be an array of non-negative integers")
    return tuple(v)


def _streams(v: Any, src: str) -> tuple[tuple[dict[str, Any], ...], ...]:
    bad = f"{src}: control.streams must be an array (one per worker) of arrays of op tables"
    if not isinstance(v, list | tuple) or not v:
        raise ScenarioError(bad)
    out = []
    for stream in v:
        if not isinstance(stream, list | tuple) or not all(isinstance(o, dict) for o in stream):
            raise ScenarioError(bad)
        for o in stream:
            unknown = sorted(set(o) - _OP_KEYS)
            if unknown or not isinstance(o.get("f"), str) or not isinstance(o.get("session"), str):
                raise ScenarioError(f"{src}: control.streams: bad op {o!r} (keys: f, session, "
                                    "role, content, choice)")
            if o["f"] == "append" and not (isinstance(o.get("role"), str)
                                           and isinstance(o.get("content"), str)):
                raise ScenarioError(f"{src}: control.streams: append needs role and content")
        out.append(tuple(dict(o) for o in stream))
    return tuple(out)


def parse_control(raw: dict[str, Any], source: str = "<scenario>") -> ControlSpec:
    """The ``[control]`` table as a ControlSpec; raises ScenarioError naming the key."""
    known = {f.name for f in fields(ControlSpec)}
    unknown = sorted(set(raw) - known)
    if unknown:
        raise ScenarioError(f"{source}: unknown key control.{unknown[0]!r} "
                            f"(known: {', '.join(sorted(known))})")
    kw: dict[str, Any] = {}
    for key in ("enabled", "pin"):
        if key in raw:
            if not isinstance(raw[key], bool):
                raise ScenarioError(f"{source}: control.{key} must be true or false")
            kw[key] = raw[key]
    if "strategy" in raw:
        if raw["strategy"] not in STRATEGIES:
            raise ScenarioError(f"{source}: control.strategy must be one of "
                                f"{', '.join(STRATEGIES)}, got {raw['strategy']!r}")
        kw["strategy"] = raw["strategy"]
    for key, lo in (("depth", 1), ("steps", 0), ("schedules", 1), ("busy_retries", 0)):
        if key in raw:
            kw[key] = _int(raw, key, lo, source)
    if "block_ms" in raw:
        v = raw["block_ms"]
        if not isinstance(v, int | float) or isinstance(v, bool) or v <= 0:
            raise ScenarioError(f"{source}: control.block_ms must be a positive number")
        kw["block_ms"] = float(v)
    for key in ("trace", "blocked"):
        if key in raw:
            kw[key] = _ints(raw, key, source)
    if "streams" in raw:
        kw["streams"] = _streams(raw["streams"], source)
    if "faults" in raw:
        kw["faults"] = _faults(raw["faults"], source)
    return ControlSpec(**kw)


def _faults(v: Any, src: str) -> tuple[dict[str, Any], ...]:
    """``control.faults``: tables of kind, at_step, worker (kill, pause, disconnect) and
    for_steps (pause, disk-full, lock-hold)."""
    from harness.scenario import FAULT_KINDS

    if not isinstance(v, list | tuple) or not all(isinstance(f, dict) for f in v):
        raise ScenarioError(f"{src}: control.faults must be an array of fault tables")
    out = []
    for n, f in enumerate(v):
        where = f"{src}: control.faults[{n}]"
        kind = f.get("kind")
        if kind not in FAULT_KINDS:
            raise ScenarioError(f"{where}: unknown fault kind {kind!r} "
                                f"(known: {', '.join(FAULT_KINDS)})")
        known = {"kind", "at_step"} | ({"worker"} if kind in _AIMED else set()) | (
            {"for_steps"} if kind in _LASTING else set())
        unknown = sorted(set(f) - known)
        if unknown:
            raise ScenarioError(f"{where}: unknown key {unknown[0]!r} for a {kind} fault at a "
                                f"scheduling decision (known: {', '.join(sorted(known))})")
        for key, lo, need in (("at_step", 0, True), ("worker", 0, kind in _AIMED),
                              ("for_steps", 1, False)):
            if key not in f:
                if need:
                    raise ScenarioError(f"{where}: a {kind} fault needs {key}")
                continue
            x = f[key]
            if not isinstance(x, int) or isinstance(x, bool) or x < lo:
                raise ScenarioError(f"{where}: {key} must be an integer >= {lo}, got {x!r}")
        out.append(dict(f))
    return tuple(out)
