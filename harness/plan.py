"""Seed -> per-worker operation streams and a fault schedule (faults at times in free
mode, at scheduling decisions in controlled mode). Nothing random happens anywhere else:
the same scenario and seed give a byte-identical plan.

Every appended content is unique within a run: it starts with ``w<worker>.<n>|`` and then
carries a payload drawn from a mix that exercises encodings (unicode, emoji, quotes,
backslashes, newlines, empty, long up to ``payload.max_bytes``).

A rollback op carries ``choice``, not an id (ids are made by the store at run time): the
worker rolls back to ``known[choice % len(known)]`` among the snapshot ids of that session
it has seen so far.
"""

from __future__ import annotations

import random
from dataclasses import asdict, dataclass
from typing import Any

import orjson

from harness.errors import ScenarioError
from harness.faults import fault_kind
from harness.scenario import Scenario, session_name, session_names
from harness.stores.base import ALL_CAPABILITIES

__all__ = ["STEPPED_KEYS", "Op", "Plan", "explicit_faults", "fault_schedule",
           "make_plan", "step_estimate", "stepped_faults"]

ROLES = ("user", "assistant", "tool", "system")
_WORDS = ("memory", "turn", "agent", "rollback", "snapshot", "tool_call", "ok", "the", "a")
_UNICODE = "éàüßøçñ漢字かなカナ한글русскийΕλληνικάעבריתالعربية"
_EMOJI = "😀🤖🧠💾🔥✅❌👍🏽👨‍👩‍👧‍👦🇫🇷"
_TRICKY = ('"', "'", "\\", "`", "{", "}", "[", "]", "\t", "%s", "${x}", "<b>", "&amp;", "--", ";")


@dataclass(frozen=True, slots=True)
class Op:
    """One planned operation of a worker. ``f`` is one of the store capabilities."""

    f: str
    session: str
    role: str | None = None
    content: str | None = None
    choice: int | None = None


@dataclass(frozen=True, slots=True)
class Plan:
    seed: int
    sessions: tuple[str, ...]
    streams: tuple[tuple[Op, ...], ...]
    faults: tuple[dict[str, Any], ...] = ()

    def to_json(self) -> bytes:
        """Canonical bytes: equal plans give equal bytes."""
        return orjson.dumps(
            {
                "seed": self.seed,
                "sessions": list(self.sessions),
                "streams": [[_op_dict(o) for o in s] for s in self.streams],
                "faults": list(self.faults),
            },
            option=orjson.OPT_SORT_KEYS,
        )

    @property
    def total_ops(self) -> int:
        return sum(len(s) for s in self.streams)


def _op_dict(op: Op) -> dict[str, Any]:
    return {k: v for k, v in asdict(op).items() if v is not None}


def make_plan(
    scenario: Scenario, seed: int, capabilities: frozenset[str] = ALL_CAPABILITIES
) -> Plan:
    """The plan for ``scenario`` under ``seed``, using only ops in ``capabilities``."""
    sessions = session_names(scenario.sessions, scenario.ops, scenario.session_lifetime)
    weights = [(f, w) for f, w in scenario.weights.items() if w > 0 and f in capabilities]
    streams = tuple(
        _stream(random.Random(f"{seed}:worker:{w}"), w, scenario, weights)
        for w in range(scenario.workers)
    )
    explicit = scenario.control.get("streams")
    if explicit:  # an explicit plan (a shrunk repro): the ops are given, not drawn
        streams = tuple(tuple(Op(**o) for o in s) for s in explicit)
    return Plan(seed=seed, sessions=sessions, streams=streams,
                faults=_faults(scenario, seed, streams))


def _faults(scenario: Scenario, seed: int,
            streams: tuple[tuple[Op, ...], ...]) -> tuple[dict[str, Any], ...]:
    """Free mode: the timed schedule. Controlled mode: ``[control] faults`` as given, else
    the timed schedule moved onto scheduling decisions."""
    control = scenario.control
    if control.get("faults") is not None:
        if not control.get("enabled"):
            raise ScenarioError(f"{scenario.source or '<scenario>'}: control.faults places "
                                "faults at scheduling decisions: it needs controlled mode "
                                "(control.enabled = true or --controlled)")
        return explicit_faults(control["faults"])
    timed = fault_schedule(scenario, seed)
    if not control.get("enabled") or not timed:
        return timed
    return stepped_faults(timed, scenario.duration,
                          step_estimate(streams, int(control.get("steps", 0))))


def _stream(
    rng: random.Random,
    worker: int,
    scenario: Scenario,
    weights: list[tuple[str, int]],
) -> tuple[Op, ...]:
    names = [f for f, _ in weights]
    cum = [w for _, w in weights]
    ops: list[Op] = []
    for n in range(scenario.ops):
        f = rng.choices(names, cum)[0]
        # Sessions are retired after ``session_lifetime`` ops of each worker (all workers
        # move on at about the same time), so reads stay bounded on long runs.
        generation = n // scenario.session_lifetime if scenario.session_lifetime else 0
        session = session_name(rng.randrange(scenario.sessions), generation)
        if f == "append":
            payload = _payload(rng, scenario.payload.max_bytes, scenario.payload.long_rate)
            ops.append(Op("append", session, rng.choice(ROLES), f"w{worker}.{n}|{payload}"))
        elif f == "rollback":
            ops.append(Op("rollback", session, choice=rng.randrange(1 << 16)))
        else:
            ops.append(Op(f, session))
    return tuple(ops)


def _payload(rng: random.Random, max_bytes: int, long_rate: float) -> str:
    if max_bytes > 1000 and rng.random() < long_rate:
        size = rng.randint(1000, max_bytes)
        chunk = " ".join(rng.choice(_WORDS) for _ in range(40)) + rng.choice(_EMOJI) + "\n"
        return (chunk * (size // len(chunk.encode()) + 1))[: size // 2]  # // 2: multi-byte
    kind = rng.randrange(7)
    if kind == 0:
        return ""
    if kind == 1:
        return " ".join(rng.choice(_WORDS) for _ in range(rng.randint(1, 30)))
    if kind == 2:
        return "".join(rng.choice(_UNICODE) for _ in range(rng.randint(1, 40)))
    if kind == 3:
        return "".join(rng.choice(_EMOJI) for _ in range(rng.randint(1, 10)))
    if kind == 4:
        return "".join(rng.choice(_TRICKY) for _ in range(rng.randint(1, 20)))
    if kind == 5:
        return "\n".join(rng.choice(_WORDS) for _ in range(rng.randint(1, 8))) + "\r\n"
    return '{"tool": "search", "args": {"q": "it\'s \\"quoted\\""}}'


def fault_schedule(scenario: Scenario, seed: int) -> tuple[dict[str, Any], ...]:
    """The scenario's ``[[faults]]`` rules as timed faults, sorted by time.

    Each fault is ``{"id", "kind", "at", ...}``: ``at`` in seconds after the workers
    started; ``worker`` (the slot) for a kind aimed at one; the kind's own keys
    (``duration``, ``stall``), its defaults filling what the rule leaves out.
    ``every = P`` puts one fault at a random point of each period of P seconds from
    ``start`` until ``stop`` (default: the scenario's duration) or ``count`` faults.
    Example: ``{kind="kill", every=0.5}`` over 2 s gives 4 kills, each of a worker drawn
    from the seed."""
    out: list[dict[str, Any]] = []
    for n, rule in enumerate(scenario.faults):
        rng = random.Random(f"{seed}:faults:{n}")
        kind = fault_kind(rule["kind"])
        params = {k.name: rule.get(k.name, k.default) for k in kind.keys}
        for at in _fault_times(rng, rule, scenario.duration):
            fault: dict[str, Any] = {"kind": kind.name, "at": round(at, 6), **params}
            if kind.aimed:
                fault["worker"] = rule.get("worker", rng.randrange(scenario.workers))
            out.append(fault)
    out.sort(key=lambda f: (f["at"], f["kind"]))
    return tuple({"id": i, **f} for i, f in enumerate(out))


def _fault_times(rng: random.Random, rule: dict[str, Any], duration: float) -> list[float]:
    if "at" in rule:
        return [float(rule["at"])] if rule["at"] < duration else []
    every, start = float(rule["every"]), float(rule.get("start", 0.0))
    stop = min(float(rule.get("stop", duration)), duration)
    times: list[float] = []
    k = 0
    while len(times) < rule.get("count", 1 << 30):
        t = start + k * every + rng.uniform(0.0, every)
        if t >= stop:
            break
        times.append(t)
        k += 1
    return times


#: The keys of a controlled-mode fault (``[control] faults``, ``trace.json``), besides ``id``.
STEPPED_KEYS = ("kind", "at_step", "worker", "for_steps")


def step_estimate(streams: tuple[tuple[Op, ...], ...], steps: int = 0) -> int:
    """The scheduling decisions a controlled run is expected to take: ``steps`` when the
    scenario gives it (``[control] steps``), else two per op and two per worker."""
    return steps or 2 * sum(len(s) for s in streams) + 2 * len(streams)


def stepped_faults(faults: tuple[dict[str, Any], ...], duration: float,
                   steps: int) -> tuple[dict[str, Any], ...]:
    """Timed faults (:func:`fault_schedule`) as controlled-mode faults: the run's
    ``duration`` maps onto its ``steps`` estimated decisions, so a fault at ``at`` s
    lands before decision ``at_step = at / duration * steps``, and one that lasts
    ``duration`` s lasts ``for_steps`` decisions (at least one). A kind's other keys
    (``stall``) have no meaning there (a disconnect lands while the worker stands before
    its command) and are dropped.

    >>> stepped_faults(({"id": 0, "kind": "pause", "at": 1.5, "worker": 2,
    ...                  "duration": 0.6},), duration=6.0, steps=200)
    ({'id': 0, 'kind': 'pause', 'at_step': 50, 'worker': 2, 'for_steps': 20},)
    """
    out = []
    for f in faults:
        g: dict[str, Any] = {"id": f["id"], "kind": f["kind"],
                             "at_step": int(f["at"] / duration * steps)}
        if "worker" in f:
            g["worker"] = f["worker"]
        if fault_kind(f["kind"]).for_steps is not None:  # it lasts
            g["for_steps"] = max(1, round(f["duration"] / duration * steps))
        out.append(g)
    return tuple(out)


def explicit_faults(faults: Any) -> tuple[dict[str, Any], ...]:
    """``[control] faults`` (validated by :mod:`harness.faults.tables`) as a schedule: ids
    by position, ``for_steps`` defaulted to the kind's."""
    out = []
    for i, f in enumerate(faults):
        g = {"id": i, **{k: f[k] for k in STEPPED_KEYS if k in f}}
        lasts = fault_kind(f["kind"]).for_steps
        if lasts is not None:
            g.setdefault("for_steps", lasts)
        out.append(g)
    return tuple(out)
