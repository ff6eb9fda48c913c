"""Stepping strategies: which ready worker takes the next step. Pure functions of the seed.

Each strategy sees, at every decision, the sorted slots of the *eligible* workers (at a
scheduling point, not waiting for a lock another worker holds), the step number and a
:class:`View` of where each worker stands in its plan (only ``window`` looks), and
returns one of them. Nothing else (no clock, no pid) enters a choice, so a seed and the
sequence of eligible sets give one schedule.

- ``random``: a random walk, uniform at every step; switches often, finds shallow races.
- ``pct``: probabilistic concurrency testing (Burckhardt et al., ASPLOS 2010): distinct
  random priorities, always the highest eligible; at ``depth - 1`` random steps the worker
  about to run drops below every initial priority. Finds a bug of depth d with
  probability >= 1/(n k^(d-1)) per schedule for n workers and k steps.
- ``rr``: round robin, one step each, starting from a slot drawn from the seed.
- ``window``: aims at the inside of ops that issue several storage commands, where
  non-atomic code breaks: when a worker stands between two commands of one op and another
  worker's next op is on the same session and one of the two writes, it holds the first
  there (with probability ``rate``, drawn from the seed), runs the other's whole op, then
  resumes it; otherwise a random walk. On 2 CPUs free-mode workers rarely land inside one
  fast op, and neither random walks nor PCT aim there.
- ``sequential`` (replay fallback): keep the last worker while it is eligible, else the
  lowest slot; the fewest context switches, what a shrunk trace falls back to.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Protocol

__all__ = ["PCT", "RandomWalk", "RoundRobin", "Sequential", "Strategy", "View", "Windows",
           "make_strategy"]

#: Ops that change a session: an intrusion needs one of the two ops to be one.
WRITES = frozenset({"append", "snapshot", "rollback"})


class View(Protocol):
    """Where each worker stands, as the grant loop knows it (all pure of timing)."""

    def op_index(self, slot: int) -> int:
        """The index of the op the worker is in (-1 before its first)."""
        ...

    def op(self, slot: int) -> tuple[str, str] | None:
        """(kind, session) of that op, from the plan; None before the first op."""
        ...

    def mid_op(self, slot: int) -> bool:
        """Whether the worker stands between two storage commands of one op (a command
        of this op was granted already)."""
        ...


class Strategy(Protocol):
    name: str

    def choose(self, eligible: Sequence[int], step: int, view: View | None = None) -> int:
        """One slot of ``eligible`` (non-empty, sorted) to grant the ``step``-th step."""
        ...


class RandomWalk:
    name = "random"

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    def choose(self, eligible: Sequence[int], step: int, view: View | None = None) -> int:
        return eligible[self.rng.randrange(len(eligible))]


class RoundRobin:
    name = "rr"

    def __init__(self, rng: random.Random, workers: int) -> None:
        self.last = rng.randrange(max(1, workers)) - 1

    def choose(self, eligible: Sequence[int], step: int, view: View | None = None) -> int:
        for w in eligible:
            if w > self.last:
                self.last = w
                return w
        self.last = eligible[0]
        return eligible[0]


class PCT:
    name = "pct"

    def __init__(self, rng: random.Random, workers: int, depth: int, steps: int) -> None:
        prio = list(range(depth, depth + workers))
        rng.shuffle(prio)
        self.priority = dict(enumerate(prio))
        k = max(steps, depth)
        points = rng.sample(range(1, k + 1), min(depth - 1, k))
        # the i-th change point (in step order) lowers to depth - 1 - i: below every start
        self.changes = {s: depth - 1 - i for i, s in enumerate(sorted(points))}

    def choose(self, eligible: Sequence[int], step: int, view: View | None = None) -> int:
        w = max(eligible, key=lambda x: self.priority.get(x, 0))
        low = self.changes.get(step)
        if low is not None:
            self.priority[w] = low
            w = max(eligible, key=lambda x: self.priority.get(x, 0))
        return w


class Sequential:
    name = "sequential"

    def __init__(self) -> None:
        self.last = -1

    def choose(self, eligible: Sequence[int], step: int, view: View | None = None) -> int:
        w = self.last if self.last in eligible else eligible[0]
        self.last = w
        return w


class Windows:
    name = "window"

    def __init__(self, rng: random.Random, rate: float = 0.5) -> None:
        self.rng = rng
        self.rate = rate
        self.walk = RandomWalk(rng)
        self.held: int | None = None  # stopped inside its op while the intruder runs
        self.intruder: int | None = None
        self.intruder_op = -1

    def choose(self, eligible: Sequence[int], step: int, view: View | None = None) -> int:
        if view is None:
            return self.walk.choose(eligible, step)
        if self.intruder is not None:
            # the intruder runs its whole op (until it stands at its next one)
            if self.intruder in eligible and view.op_index(self.intruder) == self.intruder_op:
                return self.intruder
            held, self.held, self.intruder = self.held, None, None
            if held is not None and held in eligible:
                return held
        pairs = [(w, i) for w in eligible if view.mid_op(w)
                 for i in eligible if i != w and not view.mid_op(i)
                 and _conflict(view.op(w), view.op(i))]
        if pairs and self.rng.random() < self.rate:
            self.held, self.intruder = pairs[self.rng.randrange(len(pairs))]
            self.intruder_op = view.op_index(self.intruder)
            return self.intruder
        return self.walk.choose(eligible, step)


def _conflict(a: tuple[str, str] | None, b: tuple[str, str] | None) -> bool:
    """Two ops that can break each other when one lands inside the other: same session,
    one of them a write."""
    return (a is not None and b is not None and a[1] == b[1]
            and (a[0] in WRITES or b[0] in WRITES))


def make_strategy(name: str, seed: int, workers: int, depth: int = 3,
                  steps: int = 0) -> Strategy:
    """The strategy ``name`` for a run of ``workers`` under ``seed``."""
    rng = random.Random(f"{seed}:schedule:{name}")
    if name == "random":
        return RandomWalk(rng)
    if name == "rr":
        return RoundRobin(rng, workers)
    if name == "pct":
        return PCT(rng, workers, depth, steps)
    if name == "sequential":
        return Sequential()
    if name == "window":
        return Windows(rng)
    raise ValueError(f"unknown strategy {name!r}")
