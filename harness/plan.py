"""Seed -> per-worker operation streams, drawn lazily, and a fault schedule (faults at
times in free mode, at scheduling decisions in controlled mode). Nothing random happens
anywhere else: the same scenario and seed give the same ops, byte for byte, in free and
controlled mode, replay and shrink.

A :class:`Plan` is small whatever the number of ops: it holds the seed, what the ops are
drawn from (:class:`Draw`: workers, ops per worker or unlimited, sessions, weights,
payloads), the fault schedule and, only when a scenario gives them (``[control] streams``,
a shrunk repro), explicit streams. ``plan.stream(slot, start)`` yields worker ``slot``'s
ops from op ``start`` on, as they are needed; nothing ever holds a whole stream.

Ops are drawn in blocks of :data:`BLOCK` ops, each block from its own generator
(``random.Random(f"{seed}:worker:{slot}:{block}")``), so a replacement process that
continues a killed slot at op n draws at most ``BLOCK - 1`` ops to get there, however deep
into a long run n is. (This block seeding changed which ops a seed gives, once, when plans
became lazy; it is stable from then on.)

Every appended content is unique within a run: it starts with ``w<worker>.<n>|`` and then
carries a payload drawn from a mix that exercises encodings (unicode, emoji, quotes,
backslashes, newlines, empty, long up to ``payload.max_bytes``).

A rollback op carries ``choice``, not an id (ids are made by the store at run time): the
worker rolls back to ``known[choice % len(known)]`` among the snapshot ids of that session
it has seen so far.

``plan.json`` is :meth:`Plan.to_json` (canonical: equal plans, equal bytes) and
:meth:`Plan.from_json` rebuilds the plan from it; its size does not depend on the number
of ops.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass, replace
from typing import Any

import orjson

from harness.errors import ScenarioError
from harness.faults import fault_kind
from harness.scenario import Scenario, session_name, session_names
from harness.stores.base import ALL_CAPABILITIES

__all__ = ["BLOCK", "STEPPED_KEYS", "Draw", "Op", "Plan", "explicit_faults", "fault_schedule",
           "make_plan", "step_estimate", "stepped_faults", "stream_dicts"]

#: Ops drawn from one generator: a stream resumed at op n draws at most BLOCK - 1 ops first.
BLOCK = 1024

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
class Draw:
    """What a worker's ops are drawn from: the scenario's shape, with only the weights of
    ops the store can do (its capabilities). ``ops`` per worker, None for unlimited (the
    run is then bounded by its duration)."""

    workers: int
    ops: int | None
    sessions: int
    session_lifetime: int
    weights: tuple[tuple[str, int], ...]
    max_bytes: int
    long_rate: float

    def generation(self, n: int) -> int:
        """The session generation op ``n`` of a worker falls in. Sessions are retired after
        ``session_lifetime`` ops of each worker (all workers move on at about the same
        time), so reads stay bounded on long runs."""
        return n // self.session_lifetime if self.session_lifetime else 0


@dataclass(frozen=True, slots=True)
class Plan:
    """A run's plan: small and picklable whatever the number of ops (see the module
    docstring). ``explicit`` holds the streams a scenario gives (``[control] streams``),
    else None and the streams are drawn from ``draw`` and ``seed``."""

    seed: int
    draw: Draw
    faults: tuple[dict[str, Any], ...] = ()
    explicit: tuple[tuple[Op, ...], ...] | None = None

    @property
    def workers(self) -> int:
        return len(self.explicit) if self.explicit is not None else self.draw.workers

    def length(self, slot: int) -> int | None:
        """How many ops worker ``slot`` has; None when unlimited."""
        return len(self.explicit[slot]) if self.explicit is not None else self.draw.ops

    @property
    def total_ops(self) -> int | None:
        """Ops over all workers; None when unlimited."""
        lengths = [self.length(w) for w in range(self.workers)]
        return None if None in lengths else sum(n or 0 for n in lengths)

    def stream(self, slot: int, start: int = 0) -> Iterator[Op]:
        """Worker ``slot``'s ops from op ``start`` on, drawn as they are asked for: the same
        ops, byte for byte, as ``stream(slot)`` gives from op ``start`` on."""
        if self.explicit is not None:
            yield from itertools.islice(self.explicit[slot], start, None)
            return
        d = self.draw
        names = [f for f, _ in d.weights]
        cum = list(itertools.accumulate(w for _, w in d.weights))
        block = start // BLOCK
        while True:
            rng = random.Random(f"{self.seed}:worker:{slot}:{block}")
            first = block * BLOCK
            last = first + BLOCK if d.ops is None else min(first + BLOCK, d.ops)
            for n in range(first, last):
                op = _op(rng, slot, n, d, names, cum)
                if n >= start:
                    yield op
            if last < first + BLOCK:
                return
            block += 1

    def materialize(self) -> tuple[tuple[Op, ...], ...]:
        """Every stream, whole: for small finite plans only (tests, benchmarks, shrink).
        ValueError for an unlimited one."""
        if self.total_ops is None:
            raise ValueError("an unlimited plan cannot be materialized")
        return tuple(tuple(self.stream(w)) for w in range(self.workers))

    def sessions(self, progress: Sequence[int] = ()) -> tuple[str, ...]:
        """The sessions the final quiescent read covers. A finite plan: every session it
        may touch (every generation). An unlimited one: those up to the highest generation
        the workers reached, ``progress`` being the index of the last op each slot began."""
        d = self.draw
        if d.ops is not None:
            return session_names(d.sessions, d.ops, d.session_lifetime)
        top = d.generation(max(0, *progress))
        return tuple(session_name(i, g) for g in range(top + 1) for i in range(d.sessions))

    def to_json(self) -> bytes:
        """Canonical bytes (equal plans give equal bytes): what rebuilds the plan, never
        the drawn ops; explicit streams when the scenario gave them."""
        out: dict[str, Any] = {"seed": self.seed, "draw": asdict(self.draw),
                               "faults": list(self.faults)}
        if self.explicit is not None:
            out["streams"] = [[_op_dict(o) for o in s] for s in self.explicit]
        return orjson.dumps(out, option=orjson.OPT_SORT_KEYS)

    @classmethod
    def from_json(cls, data: bytes) -> Plan:
        """The plan :meth:`to_json` wrote. KeyError, TypeError or ValueError if ``data``
        is not one (a plan.json from before lazy plans has no ``draw``)."""
        raw = orjson.loads(data)
        d = raw["draw"]
        draw = Draw(**{**d, "weights": tuple((f, w) for f, w in d["weights"])})
        explicit = raw.get("streams")
        return cls(seed=int(raw["seed"]), draw=draw,
                   faults=tuple(raw["faults"]),
                   explicit=None if explicit is None
                   else tuple(tuple(Op(**o) for o in s) for s in explicit))


def _op_dict(op: Op) -> dict[str, Any]:
    return {k: v for k, v in asdict(op).items() if v is not None}


def stream_dicts(data: bytes) -> list[list[dict[str, Any]]]:
    """Every stream of the plan in a plan.json, as op tables (a controlled run's, which is
    finite), drawn again from the seed; a plan.json from before lazy plans lists them."""
    raw = orjson.loads(data)
    if "draw" not in raw:
        return [list(s) for s in raw["streams"]]
    return [[_op_dict(o) for o in s] for s in Plan.from_json(data).materialize()]


def make_plan(
    scenario: Scenario, seed: int, capabilities: frozenset[str] = ALL_CAPABILITIES
) -> Plan:
    """The plan for ``scenario`` under ``seed``, using only ops in ``capabilities``. Takes
    no time and no memory to speak of, whatever ``scenario.ops``."""
    draw = Draw(workers=scenario.workers, ops=scenario.ops, sessions=scenario.sessions,
                session_lifetime=scenario.session_lifetime,
                weights=tuple((f, w) for f, w in scenario.weights.items()
                              if w > 0 and f in capabilities),
                max_bytes=scenario.payload.max_bytes, long_rate=scenario.payload.long_rate)
    explicit = scenario.control.get("streams")
    plan = Plan(seed=seed, draw=draw, explicit=None if not explicit
                else tuple(tuple(Op(**o) for o in s) for s in explicit))
    return replace(plan, faults=_faults(scenario, seed, plan))


def _faults(scenario: Scenario, seed: int, plan: Plan) -> tuple[dict[str, Any], ...]:
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
                          step_estimate(plan, int(control.get("steps", 0))))


def _op(rng: random.Random, worker: int, n: int, d: Draw, names: list[str],
        cum: list[int]) -> Op:
    """Op ``n`` of ``worker``, drawn from ``rng`` (its block's generator, at op ``n``)."""
    f = rng.choices(names, cum_weights=cum)[0]
    session = session_name(rng.randrange(d.sessions), d.generation(n))
    if f == "append":
        payload = _payload(rng, d.max_bytes, d.long_rate)
        return Op("append", session, rng.choice(ROLES), f"w{worker}.{n}|{payload}")
    if f == "rollback":
        return Op("rollback", session, choice=rng.randrange(1 << 16))
    return Op(f, session)


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


def step_estimate(plan: Plan, steps: int = 0) -> int:
    """The scheduling decisions a controlled run is expected to take: ``steps`` when the
    scenario gives it (``[control] steps``), else two per op and two per worker. A
    controlled run's plan is finite (the scenario refuses unlimited ops there)."""
    return steps or 2 * (plan.total_ops or 0) + 2 * plan.workers


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
