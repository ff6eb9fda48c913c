"""Feeding a whole history through the streaming checker, retiring sessions and ending
processes at random valid points, and comparing it with the batch checker."""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

from harness.checker import CheckResult, check
from harness.checker.stream import StreamChecker
from harness.history import Event


def last_positions(events: Sequence[Event]) -> tuple[dict[str, int], dict[Any, int]]:
    """The position of each session's and each process's last event."""
    sessions: dict[str, int] = {}
    procs: dict[Any, int] = {}
    for i, e in enumerate(events):
        if isinstance(e.session, str):
            sessions[e.session] = i
        try:
            procs[e.process] = i
        except TypeError:
            pass
    return sessions, procs


def stream(events: Sequence[Event], rng: random.Random | None = None) -> tuple[CheckResult, int]:
    """Feed ``events``; with ``rng``, retire each session and end each process at a random
    point after its last event (or never: left to ``finish``). Returns the result and how
    many violations :meth:`~StreamChecker.violations_so_far` gave along the way."""
    sc = StreamChecker()
    later: dict[int, list[tuple[str, Any]]] = {}
    if rng is not None:
        sessions, procs = last_positions(events)
        for s, i in sessions.items():
            if rng.random() < 0.8:
                later.setdefault(rng.randint(i, len(events) - 1), []).append(("retire", s))
        for p, i in procs.items():
            if rng.random() < 0.5:
                later.setdefault(rng.randint(i, len(events) - 1), []).append(("end", p))
    live = 0
    for i, e in enumerate(events):
        sc.feed(e)
        for what, x in later.get(i, ()):
            if what == "retire":
                sc.retire(x)
            else:
                sc.process_ended(x)
        live += len(sc.violations_so_far())
    res = sc.finish()
    return res, live + len(sc.violations_so_far())


def assert_same(events: Sequence[Event], rng: random.Random | None = None) -> CheckResult:
    """The streaming verdict equals the batch one in everything but the time taken."""
    want = check(events)
    got, live = stream(events, rng)
    assert got.valid == want.valid
    assert got.totals == want.totals
    assert [v.to_dict() for v in got.violations] == [v.to_dict() for v in want.violations]
    assert got.violations == want.violations
    drop = {"seconds"}
    assert {k: v for k, v in got.stats.items() if k not in drop} == \
        {k: v for k, v in want.stats.items() if k not in drop}
    assert live >= min(want.total(), 1)  # something was shown live when anything was found
    return got
