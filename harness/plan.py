"""Seed -> per-worker operation streams (and, later, a fault schedule). Nothing random
happens anywhere else: the same scenario and seed give a byte-identical plan.

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

from harness.scenario import Scenario
from harness.stores.base import ALL_CAPABILITIES

__all__ = ["Op", "Plan", "make_plan", "session_names"]

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


def session_names(n: int) -> tuple[str, ...]:
    return tuple(f"s{i}" for i in range(n))


def make_plan(
    scenario: Scenario, seed: int, capabilities: frozenset[str] = ALL_CAPABILITIES
) -> Plan:
    """The plan for ``scenario`` under ``seed``, using only ops in ``capabilities``."""
    sessions = session_names(scenario.sessions)
    weights = [(f, w) for f, w in scenario.weights.items() if w > 0 and f in capabilities]
    streams = tuple(
        _stream(random.Random(f"{seed}:worker:{w}"), w, scenario, sessions, weights)
        for w in range(scenario.workers)
    )
    return Plan(seed=seed, sessions=sessions, streams=streams, faults=scenario.faults)


def _stream(
    rng: random.Random,
    worker: int,
    scenario: Scenario,
    sessions: tuple[str, ...],
    weights: list[tuple[str, int]],
) -> tuple[Op, ...]:
    names = [f for f, _ in weights]
    cum = [w for _, w in weights]
    ops: list[Op] = []
    for n in range(scenario.ops):
        f = rng.choices(names, cum)[0]
        session = rng.choice(sessions)
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
