"""Stepping strategies: which ready worker takes the next step. Pure functions of the seed.

Each strategy sees, at every decision, the sorted slots of the *eligible* workers (at a
scheduling point, not waiting for a lock another worker holds) and the step number, and
returns one of them. Nothing else (no clock, no pid) enters a choice, so a seed and the
sequence of eligible sets give one schedule.

- ``random``: a random walk, uniform at every step; switches often, finds shallow races.
- ``pct``: probabilistic concurrency testing (Burckhardt et al., ASPLOS 2010): distinct
  random priorities, always the highest eligible; at ``depth - 1`` random steps the worker
  about to run drops below every initial priority. Finds a bug of depth d with
  probability >= 1/(n k^(d-1)) per schedule for n workers and k steps.
- ``rr``: round robin, one step each, starting from a slot drawn from the seed.
- ``sequential`` (replay fallback): keep the last worker while it is eligible, else the
  lowest slot; the fewest context switches, what a shrunk trace falls back to.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Protocol

__all__ = ["PCT", "RandomWalk", "RoundRobin", "Sequential", "Strategy", "make_strategy"]


class Strategy(Protocol):
    name: str

    def choose(self, eligible: Sequence[int], step: int) -> int:
        """One slot of ``eligible`` (non-empty, sorted) to grant the ``step``-th step."""
        ...


class RandomWalk:
    name = "random"

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    def choose(self, eligible: Sequence[int], step: int) -> int:
        return eligible[self.rng.randrange(len(eligible))]


class RoundRobin:
    name = "rr"

    def __init__(self, rng: random.Random, workers: int) -> None:
        self.last = rng.randrange(max(1, workers)) - 1

    def choose(self, eligible: Sequence[int], step: int) -> int:
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

    def choose(self, eligible: Sequence[int], step: int) -> int:
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

    def choose(self, eligible: Sequence[int], step: int) -> int:
        w = self.last if self.last in eligible else eligible[0]
        self.last = w
        return w


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
    raise ValueError(f"unknown strategy {name!r}")
