"""The Scenario value: load a TOML file, validate it, fill defaults, explain errors.

A scenario is plain data (as a Jepsen test map is): which store, how many workers doing
how many operations over how many sessions, with which op weights and payloads, against
which target. Every error is a :class:`ScenarioError` naming the file and the key; the
upper bounds (workers, sessions, ops, payload, duration, seed, name) are
:mod:`harness.limits`'s.

Example::

    name = "smoke"
    store = "sqlite"
    workers = 4
    ops = 200            # per worker, or "unlimited": as many as fit in the duration
    sessions = 3
    session_lifetime = 250   # ops (per worker) before each session is retired and a fresh
                             # one takes its place, as conversations end; 0 = never
    duration = 60        # seconds; workers still running then are stopped
    open_timeout = 60    # seconds a worker may take to open the store; the duration
                         # counts from when every worker has opened it
    min_ops = 1          # per worker slot: fewer completed ops make the run incomplete
    cold_start = false   # true: every worker opens the fresh store at the same instant, and
                         # an open that fails is a finding (setup-race), retried

    [weights]
    append = 6
    read = 3
    snapshot = 1
    rollback = 1
    list_snapshots = 1

    [payload]
    max_bytes = 100000   # the longest turn content
    long_rate = 0.01     # share of appends with a long payload

    [redis]
    url = ""             # empty: a redis-server the harness starts itself
    persistence = "always"   # always | everysec | none

    [[faults]]           # any number of these; the kinds and what each does: harness.faults
    kind = "kill"        # kill | pause | disconnect | restart | disk-full | lock-hold
    every = 0.5          # seconds (or at = 1.0 for one fault); with every: start, stop, count
    worker = 1           # kill, pause, disconnect: the slot (default: drawn from the seed)
"""

from __future__ import annotations

import math
import tomllib
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from harness import limits
from harness.errors import ScenarioError
from harness.faults.tables import check_fault
from harness.redact import redact_url
from harness.scenario_control import ControlSpec, parse_control

__all__ = ["UNLIMITED", "PayloadSpec", "PostgresSpec", "RedisSpec", "Scenario", "control_spec", "load_scenario",
           "session_name", "session_names"]

#: ``ops = "unlimited"`` (``--ops unlimited``): as many ops as fit in the duration; held as
#: ``Scenario.ops = None``.
UNLIMITED = "unlimited"

DEFAULT_WEIGHTS = {"append": 6, "read": 3, "snapshot": 1, "rollback": 1, "list_snapshots": 1}
PERSISTENCE = ("always", "everysec", "none")
START_METHODS = ("fork", "forkserver", "spawn")


@dataclass(frozen=True, slots=True)
class PayloadSpec:
    max_bytes: int = 100_000
    long_rate: float = 0.01


@dataclass(frozen=True, slots=True)
class RedisSpec:
    url: str = ""
    persistence: str = "always"


@dataclass(frozen=True, slots=True)
class PostgresSpec:
    url: str = ""  # a user's server (the run's objects in a schema of its own); "": managed


@dataclass(frozen=True, slots=True)
class Scenario:
    """One run's parameters. ``seed=None`` means "draw one and print it"."""

    name: str = "scenario"
    description: str = ""
    store: str = "sqlite"
    backend: str | None = None
    seed: int | None = None
    workers: int = 4
    ops: int | None = 200  # per worker; None: unlimited (bounded by the duration)
    sessions: int = 3
    session_lifetime: int = 250
    duration: float = 60.0
    open_timeout: float = 60.0  # seconds each worker may take to open its store
    min_ops: int = 1  # per worker slot: fewer completed ops make the run incomplete
    start_method: str = "fork"
    cold_start: bool = False  # the workers open the fresh store at once (set-up races)
    weights: dict[str, int] = field(default_factory=lambda: dict(DEFAULT_WEIGHTS))
    payload: PayloadSpec = field(default_factory=PayloadSpec)
    redis: RedisSpec = field(default_factory=RedisSpec)
    postgres: PostgresSpec = field(default_factory=PostgresSpec)
    faults: tuple[dict[str, Any], ...] = ()
    control: dict[str, Any] = field(default_factory=dict)
    source: str = ""  # the file it came from, for messages

    def with_overrides(self, **kw: Any) -> Scenario:
        """A copy with the given non-None fields replaced, validated again;
        ``ops=UNLIMITED`` makes the ops unlimited."""
        given = {k: v for k, v in kw.items() if v is not None}
        if given.get("ops") == UNLIMITED:
            given["ops"] = None
        return validate(replace(self, **given))

    def to_toml(self) -> str:
        """The scenario as TOML, so a run directory holds exactly what ran."""
        out = []
        for f in fields(self):
            v = getattr(self, f.name)
            if f.name in ("weights", "payload", "redis", "postgres", "faults", "control", "source"):
                continue
            if v is None and f.name == "ops":
                v = UNLIMITED
            elif v is None:
                continue
            out.append(f"{f.name} = {_toml_value(v)}")
        out.append("\n[weights]")
        out += [f"{k} = {v}" for k, v in self.weights.items()]
        out.append("\n[payload]")
        out += [f"max_bytes = {self.payload.max_bytes}", f"long_rate = {self.payload.long_rate}"]
        out.append("\n[redis]")
        out += [f"url = {_toml_value(redact_url(self.redis.url))}",  # no password
                f"persistence = {_toml_value(self.redis.persistence)}"]
        if self.postgres.url:
            out.append("\n[postgres]")
            out.append(f"url = {_toml_value(redact_url(self.postgres.url))}")  # no password
        if self.control:
            out.append("\n[control]")
            out += [f"{k} = {_toml_value(v)}" for k, v in self.control.items()]
        for fault in self.faults:
            out.append("\n[[faults]]")
            out += [f"{k} = {_toml_value(v)}" for k, v in fault.items()]
        return "\n".join(out) + "\n"


#: TOML basic-string escapes: quote, backslash and every control character but tab.
_ESCAPES = {**{c: f"\\u{c:04x}" for c in [*range(0x20), 0x7F] if c != 0x09},
            0x22: '\\"', 0x5C: "\\\\", 0x0A: "\\n"}


def _toml_value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int | float):
        return repr(v)
    if isinstance(v, str):
        return '"' + v.translate(_ESCAPES) + '"'
    if isinstance(v, list | tuple):
        return "[" + ", ".join(_toml_value(x) for x in v) + "]"
    if isinstance(v, dict):  # an inline table (control.streams holds op tables)
        return "{" + ", ".join(f"{k} = {_toml_value(x)}" for k, x in v.items()) + "}"
    raise TypeError(f"cannot write {v!r} as TOML")


def session_names(n: int, ops: int = 0, lifetime: int = 0) -> tuple[str, ...]:
    """Every session a plan may touch: ``s<i>``, then ``s<i>.<g>`` for generation g >= 1
    when sessions are retired every ``lifetime`` ops of a worker."""
    generations = (max(ops, 1) - 1) // lifetime + 1 if lifetime else 1
    return tuple(session_name(i, g) for g in range(generations) for i in range(n))


def session_name(slot: int, generation: int) -> str:
    return f"s{slot}" if generation == 0 else f"s{slot}.{generation}"


def session_generation(name: str) -> int:
    """The generation of a session :func:`session_name` made (0 for any other name)."""
    _, dot, g = name.partition(".")
    return int(g) if dot and g.isdigit() else 0


_TOP = {f.name for f in fields(Scenario)} - {"source"}
_TABLES = {"weights", "payload", "redis", "postgres", "control"}


def load_scenario(path: str | Path) -> Scenario:
    """Read and validate a scenario file. Raises ScenarioError with a one-line reason."""
    p = Path(path)
    try:
        raw = tomllib.loads(p.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ScenarioError(f"scenario file not found: {p}") from None
    except IsADirectoryError:
        raise ScenarioError(f"scenario is a directory, not a file: {p}") from None
    except OSError as err:
        raise ScenarioError(f"cannot read scenario {p}: {err.strerror}") from None
    except UnicodeDecodeError:
        raise ScenarioError(f"{p}: not UTF-8 text") from None
    except tomllib.TOMLDecodeError as err:
        raise ScenarioError(f"{p}: malformed TOML: {err}") from None
    return from_dict(raw, source=str(p))


def from_dict(raw: dict[str, Any], source: str = "<scenario>") -> Scenario:
    """Build a Scenario from parsed TOML, rejecting unknown keys."""
    unknown = sorted(set(raw) - _TOP)
    if unknown:
        raise ScenarioError(f"{source}: unknown key {unknown[0]!r} (known: {', '.join(sorted(_TOP))})")
    kw: dict[str, Any] = {k: v for k, v in raw.items() if k not in _TABLES and k != "faults"}
    if kw.get("ops") == UNLIMITED:
        kw["ops"] = None
    for t in _TABLES:
        if t in raw and not isinstance(raw[t], dict):
            raise ScenarioError(f"{source}: [{t}] must be a table")
    if "weights" in raw:
        kw["weights"] = dict(raw["weights"])
    if "payload" in raw:
        kw["payload"] = _sub(PayloadSpec, raw["payload"], "payload", source)
    if "redis" in raw:
        kw["redis"] = _sub(RedisSpec, raw["redis"], "redis", source)
    if "postgres" in raw:
        kw["postgres"] = _sub(PostgresSpec, raw["postgres"], "postgres", source)
    if "control" in raw:
        kw["control"] = dict(raw["control"])
    if "faults" in raw:
        if not isinstance(raw["faults"], list) or not all(isinstance(x, dict) for x in raw["faults"]):
            raise ScenarioError(f"{source}: faults must be an array of tables ([[faults]])")
        kw["faults"] = tuple(dict(x) for x in raw["faults"])
    try:
        sc = Scenario(source=source, **kw)
    except TypeError as err:
        raise ScenarioError(f"{source}: {err}") from None
    return validate(sc)


def _sub(cls: type, raw: dict[str, Any], table: str, source: str) -> Any:
    known = {f.name for f in fields(cls)}
    unknown = sorted(set(raw) - known)
    if unknown:
        raise ScenarioError(f"{source}: unknown key {table}.{unknown[0]!r} (known: {', '.join(sorted(known))})")
    return cls(**raw)


def _need(ok: bool, source: str, msg: str) -> None:
    if not ok:
        raise ScenarioError(f"{source}: {msg}")


def validate(sc: Scenario) -> Scenario:
    """Check types and ranges; return the scenario unchanged or raise ScenarioError."""
    src = sc.source or "<scenario>"
    _validate_types(sc, src)
    _validate_bounds(sc, src)
    from harness.backends import NAMES

    _need(sc.backend is None or sc.backend in NAMES, src,
          f"backend must be {' or '.join(map(repr, NAMES))}, got {sc.backend!r}")
    _need(sc.start_method in START_METHODS, src,
          f"start_method must be one of {', '.join(START_METHODS)}, got {sc.start_method!r}")
    from harness.stores.base import ALL_CAPABILITIES

    bad = sorted(set(sc.weights) - ALL_CAPABILITIES)
    _need(not bad, src, f"unknown weight {bad[0] if bad else ''!r} (known: {', '.join(sorted(ALL_CAPABILITIES))})")
    _need(all(_integer(v) and v >= 0 for v in sc.weights.values()), src,
          "weights must be non-negative integers")
    _need(sc.weights.get("append", 0) > 0, src, "weights.append must be > 0")
    _need(sc.redis.persistence in PERSISTENCE, src,
          f"redis.persistence must be one of {', '.join(PERSISTENCE)}, got {sc.redis.persistence!r}")
    control_spec(sc)  # the [control] table (controlled mode)
    for n, fault in enumerate(sc.faults):
        check_fault(fault, sc.workers, f"{src}: faults[{n}]")
    return sc


def _integer(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _validate_types(sc: Scenario, src: str) -> None:
    """Every field of the type it must have (TOML gives any type to any key)."""
    for name in ("workers", "sessions", "session_lifetime", "min_ops"):
        v = getattr(sc, name)
        _need(_integer(v), src, f"{name} must be an integer, got {v!r}")
    _need(sc.ops is None or _integer(sc.ops), src,
          f'ops must be an integer or "{UNLIMITED}", got {sc.ops!r}')
    for name, v in (("name", sc.name), ("description", sc.description), ("store", sc.store),
                    ("start_method", sc.start_method), ("redis.url", sc.redis.url),
                    ("redis.persistence", sc.redis.persistence)):
        _need(isinstance(v, str), src, f"{name} must be a string, got {v!r}")
    _need(isinstance(sc.cold_start, bool), src, f"cold_start must be true or false, got {sc.cold_start!r}")
    _need(sc.backend is None or isinstance(sc.backend, str), src,
          f"backend must be a string, got {sc.backend!r}")
    _need(bool(sc.store), src, "store must be a non-empty string")
    _need(_number(sc.duration) and math.isfinite(sc.duration) and sc.duration > 0, src,
          f"duration must be a positive number of seconds, got {sc.duration!r}")
    _need(sc.min_ops >= 0, src, f"min_ops must be >= 0, got {sc.min_ops}")
    _need(_number(sc.open_timeout) and math.isfinite(sc.open_timeout)
          and sc.open_timeout > 0, src,
          f"open_timeout must be a positive number of seconds, got {sc.open_timeout!r}")
    _need(sc.seed is None or (_integer(sc.seed) and 0 <= sc.seed <= limits.MAX_SEED), src,
          f"seed must be an integer from 0 to 2**64 - 1, got {sc.seed!r}")
    _need(isinstance(sc.weights, dict), src, "[weights] must be a table")
    _need(_integer(sc.payload.max_bytes) and sc.payload.max_bytes >= 0, src,
          "payload.max_bytes must be a non-negative integer")
    rate = sc.payload.long_rate
    _need(_number(rate) and 0 <= rate <= 1, src, "payload.long_rate must be between 0 and 1")
    problem = limits.name_problem(sc.name)
    _need(problem is None, src, problem or "")
    if sc.redis.url:
        problem = redis_url_problem(sc.redis.url)
        _need(problem is None, src, f"redis.url: {problem}")
    _need(isinstance(sc.postgres.url, str), src, f"postgres.url must be a string, got {sc.postgres.url!r}")
    _need(not sc.postgres.url or sc.postgres.url.startswith(("postgresql://", "postgres://")), src,
          f"postgres.url must start with postgresql:// (got {redact_url(str(sc.postgres.url))!r})")


def _validate_bounds(sc: Scenario, src: str) -> None:
    """Lower bounds, and the upper bounds of :mod:`harness.limits` (this machine's included)."""
    _need(sc.workers >= 1, src, f"workers must be at least 1, got {sc.workers}")
    _need(sc.ops is None or sc.ops >= 0, src, f"ops must be >= 0, got {sc.ops}")
    _need(sc.sessions >= 1, src, f"sessions must be at least 1, got {sc.sessions}")
    _need(sc.session_lifetime >= 0, src, f"session_lifetime must be >= 0, got {sc.session_lifetime}")
    problem = limits.workers_problem(sc.workers)
    _need(problem is None, src, problem or "")
    _need(sc.sessions <= limits.MAX_SESSIONS, src,
          f"sessions must be at most {limits.MAX_SESSIONS}, got {sc.sessions}")
    _need(sc.ops is None or sc.ops <= limits.MAX_OPS, src,
          f'ops must be at most {limits.MAX_OPS} per worker (or "{UNLIMITED}"), got {sc.ops}')
    _need(sc.open_timeout <= limits.MAX_DURATION_S, src,
          f"open_timeout must be at most {limits.MAX_DURATION_S:.0f} seconds (7 days), "
          f"got {sc.open_timeout!r}")
    _need(sc.duration <= limits.MAX_DURATION_S, src,
          f"duration must be at most {limits.MAX_DURATION_S:.0f} seconds (7 days), "
          f"got {sc.duration!r}")
    _need(sc.payload.max_bytes <= limits.MAX_PAYLOAD_BYTES, src,
          f"payload.max_bytes must be at most {limits.MAX_PAYLOAD_BYTES} (64 MiB), "
          f"got {sc.payload.max_bytes}")
    if sc.ops is not None:  # a finite plan's final read covers every generation
        generations = (max(sc.ops, 1) - 1) // sc.session_lifetime + 1 if sc.session_lifetime else 1
        _need(sc.sessions * generations <= limits.MAX_SESSION_NAMES, src,
              f"sessions x generations (ops / session_lifetime) must be at most "
              f"{limits.MAX_SESSION_NAMES}, got {sc.sessions} x {generations}")


def redis_url_problem(url: str) -> str | None:
    """Why redis-py would refuse ``url`` (its own ``parse_url`` says), or None. Checked
    before anything starts, so no cleanup meets the error a second time."""
    from redis.connection import parse_url

    try:
        parse_url(url)  # type: ignore[no-untyped-call]
    except (ValueError, TypeError) as err:
        return f"not a Redis URL ({err})"
    return None


def _number(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool)


def control_spec(sc: Scenario) -> ControlSpec:
    """Validate a scenario's ``[control]`` against the rest of it; raise ScenarioError."""
    src = sc.source or "<scenario>"
    spec = parse_control(sc.control, src)
    if sc.ops is None and (spec.enabled or spec.streams is not None):
        raise ScenarioError(f"{src}: controlled mode needs a number of ops (its steps are "
                            f'estimated from them): ops = "{UNLIMITED}" is for free mode')
    if spec.streams is not None:
        if len(spec.streams) != sc.workers:
            raise ScenarioError(f"{src}: control.streams has {len(spec.streams)} streams but "
                                f"workers = {sc.workers}")
        names = set(session_names(sc.sessions, sc.ops or 0, sc.session_lifetime))
        for stream in spec.streams:
            for o in stream:
                if o["session"] not in names:
                    raise ScenarioError(f"{src}: control.streams uses session "
                                        f"{o['session']!r}, outside sessions = {sc.sessions}")
    if spec.trace is not None and any(w >= sc.workers for w in spec.trace):
        raise ScenarioError(f"{src}: control.trace names a worker >= workers = {sc.workers}")
    for n, f in enumerate(spec.faults or ()):
        if f.get("worker", 0) >= sc.workers:
            raise ScenarioError(f"{src}: control.faults[{n}]: worker must be a worker slot "
                                f"from 0 to {sc.workers - 1}, got {f['worker']}")
    return spec
