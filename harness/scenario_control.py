"""The ``[control]`` table of a scenario: whether a run is controlled, and how.

Example::

    [control]
    enabled = true       # controlled mode (default false: free mode, the fast one)
    strategy = "pct"     # pct | random | rr | window
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
from harness.faults.tables import check_stepped_fault

__all__ = ["STRATEGIES", "ControlSpec", "parse_control"]

STRATEGIES = ("pct", "random", "rr", "window")
_OP_KEYS = {"f", "session", "role", "content", "choice"}


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


_OPS = frozenset({"append", "read", "snapshot", "rollback", "list_snapshots"})


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
            if o["f"] not in _OPS:
                raise ScenarioError(f"{src}: control.streams: unknown op {o['f']!r} "
                                    f"(known: {', '.join(sorted(_OPS))})")
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
    """``control.faults``: tables of kind, at_step, worker (a kind aimed at a worker slot)
    and for_steps (a lasting kind), each checked by :mod:`harness.faults.tables`."""
    if not isinstance(v, list | tuple) or not all(isinstance(f, dict) for f in v):
        raise ScenarioError(f"{src}: control.faults must be an array of fault tables")
    for n, f in enumerate(v):
        check_stepped_fault(f, f"{src}: control.faults[{n}]")
    return tuple(dict(f) for f in v)
