"""Interleaving coverage: how often each pair of op kinds overlapped on one session, read
from a history alone (a pure function, so ``harness check`` gives it for old runs too).

A passing run only means something if the ops that can break each other overlapped. For
every unordered pair of op kinds (a kind with itself included), this counts how many times
an op of one kind was invoked on a session while an op of the other kind was in flight on
the same session, per session and in total, and names the pairs the store can do that
never overlapped ("rollback never overlapped a read: this run says nothing about what
readers see during a rollback").

An op is in flight from its invoke to its completion, as :func:`harness.history.pair_ops`
pairs them. One never completed is in flight until its process's next event, the ``kill``
fault that ended its process (the nemesis names the process it killed), or the end of the
history. The quiescent reads (:func:`harness.history.is_reader`) are the harness's own, not
the workload's: they are not counted.

Cost: one sweep in history order, per session a count of in-flight ops per kind; each
invoke adds the counts of the kinds in flight on its session, so time is linear in the
history and memory is the open ops plus one small row of counters per session.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from contextlib import suppress
from dataclasses import dataclass
from typing import Any

from harness.history import Event, is_reader

__all__ = ["KINDS", "TOP_SESSIONS", "Coverage", "Sweep", "interleavings", "pair_name", "sentence"]

#: The op kinds, in the order pair names use (``append+read``, never ``read+append``).
KINDS = ("append", "read", "snapshot", "rollback", "list_snapshots")
#: Sessions written in full by :meth:`Coverage.to_dict` (the most overlapped first).
TOP_SESSIONS = 10

_IDX = {k: n for n, k in enumerate(KINDS)}
_N = len(KINDS)
#: How much an op of a kind disturbs what overlaps it: the never-sentence puts the more
#: disturbing kind "during", and the never list names the pairs with a write first.
_RANK = {"rollback": 4, "append": 3, "snapshot": 2, "list_snapshots": 1, "read": 0}
_A = {"append": "an append", "read": "a read", "snapshot": "a snapshot",
      "rollback": "a rollback", "list_snapshots": "a listing of snapshots"}
_WHAT = {"append": "what an append does", "read": "what readers see",
         "snapshot": "what a snapshot captures", "rollback": "what a rollback restores",
         "list_snapshots": "what a listing of snapshots shows"}
_MANY = {"append": "appends", "read": "reads", "snapshot": "snapshots",
         "rollback": "rollbacks", "list_snapshots": "listings of snapshots"}


def pair_name(a: str, b: str) -> str:
    """The name of an unordered pair of kinds: ``append+read``, in :data:`KINDS` order."""
    x, y = sorted((a, b), key=_IDX.__getitem__)
    return f"{x}+{y}"


def sentence(a: str, b: str) -> str:
    """What a pair that never overlapped leaves unsaid, in one sentence.

    >>> sentence("rollback", "read")
    'rollback never overlapped a read: this run says nothing about what readers see during a rollback'
    """
    if a == b:
        return (f"{a} never overlapped another {a}: this run says nothing about two "
                f"{_MANY[a]} of one session at once")
    seen, during = sorted((a, b), key=_RANK.__getitem__)
    return (f"{during} never overlapped {_A[seen]}: this run says nothing about "
            f"{_WHAT[seen]} during {_A[during]}")


def _slot(i: int, j: int) -> int:
    """The counter index of the unordered pair of kind indices (i, j)."""
    return i * _N + j if i <= j else j * _N + i


@dataclass(frozen=True, slots=True)
class Coverage:
    """The interleaving coverage of one history.

    ``kinds``: the kinds whose pairs count (the store's capabilities, or the kinds the
    history holds); ``ops``: worker ops per kind; ``totals``: overlaps per pair name, every
    pair of ``kinds`` present (0 when it never overlapped), plus any other pair seen;
    ``sessions``: per session, its nonzero pairs."""

    kinds: tuple[str, ...]
    ops: Mapping[str, int]
    totals: Mapping[str, int]
    sessions: Mapping[str, Mapping[str, int]]

    def never(self) -> list[tuple[str, str]]:
        """The pairs of ``kinds`` that never overlapped, those with a write first."""
        out = [(a, b) for n, a in enumerate(self.kinds) for b in self.kinds[n:]
               if self.totals.get(pair_name(a, b), 0) == 0]
        return sorted(out, key=lambda p: (-max(_RANK[p[0]], _RANK[p[1]]),
                                          -min(_RANK[p[0]], _RANK[p[1]])))

    def weakest(self, n: int = 3) -> list[tuple[str, int]]:
        """The ``n`` pairs of ``kinds`` that overlapped least, but at least once."""
        seen = [(p, c) for p, c in self.totals.items() if c > 0 and _within(p, self.kinds)]
        return sorted(seen, key=lambda pc: (pc[1], pc[0]))[:n]

    def to_dict(self, top: int = TOP_SESSIONS) -> dict[str, Any]:
        """The ``coverage`` section of report.json (docs/design.md, "report.json")."""
        per = sorted(self.sessions.items(), key=lambda kv: (-sum(kv[1].values()), kv[0]))
        return {
            "kinds": list(self.kinds),
            "ops": dict(self.ops),
            "pairs": dict(self.totals),
            "overlaps": sum(self.totals.values()),
            "sessions": {s: dict(c) for s, c in per[:top]},
            "sessions_total": len(self.sessions),
            "sessions_shown": min(top, len(self.sessions)),
            "never": [{"pair": pair_name(a, b), "sentence": sentence(a, b)}
                      for a, b in self.never()],
        }


def _within(pair: str, kinds: tuple[str, ...]) -> bool:
    a, _, b = pair.partition("+")
    return a in kinds and b in kinds


#: _SLOTS[k]: (j, counter index of the pair (k, j)) for every kind index j.
_SLOTS = tuple(tuple((j, _slot(k, j)) for j in range(_N)) for k in range(_N))


class Sweep:
    """Interleaving coverage folded over a history one event at a time (:meth:`feed`, in
    merged order), with the pairing of :func:`harness.history.pair_ops`: the next event of
    a process after its invoke completes the op, a new invoke of a process ends its op
    never completed, and a ``kill`` fault ends the op of the process it killed.

    State: the open op of each process, and per session the kinds in flight and the pair
    counters (a row of small integers per session)."""

    __slots__ = ("counts", "flight", "open", "ops")

    def __init__(self) -> None:
        self.flight: dict[str, list[int]] = {}
        self.counts: dict[str, list[int]] = {}
        self.open: dict[object, tuple[list[int], int]] = {}  # process -> (flight, kind)
        self.ops = [0] * _N

    def close(self, process: object) -> None:
        """End ``process``'s op in flight, if it has one."""
        op = self.open.pop(process, None)
        if op is not None:
            op[0][op[1]] -= 1

    def feed(self, e: Event) -> None:
        """The next event of the history. (Runs once per event: one function, locals.)"""
        p = e.process
        try:
            op = self.open.pop(p, None)  # whatever p does next ends its op in flight
        except TypeError:  # an unhashable process (a foreign history): pair_ops skips it
            return
        if op is not None:
            op[0][op[1]] -= 1
        if e.type != "invoke":
            if e.f == "kill" and p == "nemesis" and isinstance(e.value, dict):
                with suppress(TypeError):  # an unhashable name names no op
                    self.close(e.value.get("process"))
            return
        k, s = _IDX.get(e.f), e.session
        if k is None or s is None or is_reader(p):
            return
        fl = self.flight.get(s)
        if fl is None:
            fl = self.flight[s] = [0] * _N
            self.counts[s] = [0] * (_N * _N)
        self.open[p] = (fl, k)
        if any(fl):
            cs = self.counts[s]
            for j, slot in _SLOTS[k]:
                if fl[j]:
                    cs[slot] += fl[j]
        fl[k] += 1
        self.ops[k] += 1

    def result(self, kinds: Iterable[str] | None = None) -> Coverage:
        """The coverage of what was fed. ``kinds``: the op kinds the store can do (its
        capabilities), whose pairs are named when they never overlapped; None: the kinds
        of the worker ops fed."""
        allowed = tuple(k for k in KINDS if (self.ops[_IDX[k]] > 0 if kinds is None
                                             else k in set(kinds)))
        names = {_slot(i, j): pair_name(KINDS[i], KINDS[j])
                 for i in range(_N) for j in range(i, _N)}
        totals = {pair_name(a, b): 0 for n, a in enumerate(allowed) for b in allowed[n:]}
        sessions: dict[str, dict[str, int]] = {}
        for s, cs in self.counts.items():
            row = {names[n]: c for n, c in enumerate(cs) if c}
            sessions[s] = row
            for p, c in row.items():
                totals[p] = totals.get(p, 0) + c
        ops = {k: self.ops[_IDX[k]] for k in KINDS if self.ops[_IDX[k]] or k in allowed}
        return Coverage(allowed, ops, totals, sessions)


def interleavings(events: Iterable[Event], kinds: Iterable[str] | None = None) -> Coverage:
    """The interleaving coverage of a history in merged (time) order, streamed once
    (:class:`Sweep`; ``kinds`` as :meth:`Sweep.result` takes them)."""
    sweep = Sweep()
    for e in events:
        sweep.feed(e)
    return sweep.result(kinds)
