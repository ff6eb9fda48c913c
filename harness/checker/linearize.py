"""Wing-Gong linearizability search with Lowe's memoization, as in Porcupine.

Calls and returns are entries of a doubly linked list sorted by time (at equal times calls
first, so ops that touch at one instant count as concurrent, as everywhere in the
checker). The search walks the list: at a call it tries to *linearize* the op (apply the
model; on success lift the op's call and return out of the list and start again from the
head); at a return of an op not yet linearized it backtracks. A state already explored with
the same set of linearized ops is never explored twice. An op with no return (outcome
unknown) never has to be linearized: that is the same as taking effect after everything.

With ``lazy=True`` the walk runs the lazy model (:mod:`~harness.checker.lazy`: a
snapshot's content chosen by the rollback that restores it), whose states are fewer: a
quick way to a proof on sessions of many writers, where the eager model's first guesses
of snapshot contents are wrong. But there a read or a listing placed at once (the shortcut
of :data:`OBSERVERS`) may close a snapshot's window earlier than needed, so the walk is
not complete: it gives linearizations (with ``path``, for
:func:`~harness.checker.lazy.certify`) and never a refutation (``ok`` None instead).

What every search returns lives here too: :class:`Outcome`, and the protocol of a search
that can be paused and resumed (:data:`Run`: :func:`advance`, :func:`stop`,
:func:`drive`), which this walk (:func:`begin`), the frontier and the just-in-time
searches follow so that :func:`harness.checker.exact.judge` can run them side by side.
"""

from __future__ import annotations

import inspect
import time
from collections.abc import Generator, Sequence
from dataclasses import dataclass
from typing import Any

from harness.checker.lazy import LAZY_INIT, make_step
from harness.checker.model import INIT, ModelOp, State, step
from harness.checker.ops import INF

__all__ = ["MAX_CACHED", "OBSERVERS", "Budget", "Outcome", "Run", "advance", "begin", "drive", "linearize",
           "resume", "stop"]

#: Explored configurations remembered at most: past them the outcome is unknown (memory,
#: not time, would run out first; a state holds the session's turns and snapshots).
MAX_CACHED = 1_000_000

#: Ops that change nothing when they succeed. One whose call the walk reaches, and whose
#: result the current state gives, is placed there and then, with no alternative tried:
#: every op that must precede it is placed already (else the walk would have met that op's
#: return first), so in any linearization from here it can move to the front, and the
#: state it sees there is the one it saw. If the search fails after placing it, the search
#: fails here too.
OBSERVERS = frozenset({"read", "list", "rollback-missing"})


@dataclass(frozen=True, slots=True)
class Outcome:
    """``ok``: True (linearizable), False (not), None (budget exhausted). When False,
    ``stuck`` is the op the deepest attempt could not place before its return, ``state``
    the model state there and ``depth`` how many ops had been placed."""

    ok: bool | None
    stuck: ModelOp | None = None
    state: State | None = None
    depth: int = 0
    explored: int = 0
    order: tuple[int, ...] = ()  # when ok: the indexes of the ops placed, in order
    path: tuple[Any, ...] = ()  # when ok: the state before each of them, then the last


#: A search that can be resumed (:func:`begin`, :func:`harness.checker.frontier.begin`,
#: :func:`harness.checker.jit.begin`): it yields its steps so far, and returns its outcome.
Run = Generator[int, None, Outcome]


class Budget(Exception):
    """Thrown into a resumable search to stop it (see :func:`stop`)."""


def drive(run: Run, deadline: float, max_steps: int) -> Outcome:
    """Run a resumable search (:data:`Run`) to its outcome, or until ``deadline`` or
    ``max_steps``, then stop it: its outcome is then unknown (``ok`` None), with how far
    it got."""
    out = advance(run, deadline, max_steps)
    return out if out is not None else stop(run)


def advance(run: Run, deadline: float, until: int) -> Outcome | None:
    """Resume ``run`` until its steps pass ``until`` or ``deadline`` passes (None: it goes
    on, and can be resumed again) or it decides (its outcome)."""
    return resume(run, deadline, until)[0]


def resume(run: Run, deadline: float, until: int) -> tuple[Outcome | None, bool]:
    """:func:`advance`, saying also why it stopped: (its outcome, False) when it decided,
    (None, True) when its steps passed ``until``, (None, False) when ``deadline`` passed."""
    try:
        while True:
            if next(run) > until:
                return None, True
            if time.monotonic() > deadline:
                return None, False
    except StopIteration as done:
        out: Outcome = done.value
        return out, False


def stop(run: Run) -> Outcome:
    """End a search that did not decide: its outcome says how far it got (``ok`` None;
    nothing, for one never resumed)."""
    if inspect.getgeneratorstate(run) == inspect.GEN_CREATED:
        run.close()
        return Outcome(None)
    try:
        run.throw(Budget())
    except StopIteration as done:
        out: Outcome = done.value
        return out
    raise AssertionError("a search went on when told to stop")


class _Search:
    def __init__(self, ops: Sequence[ModelOp]) -> None:
        entries: list[tuple[int, int, int]] = []
        for n, op in enumerate(ops):
            entries.append((op.lo, 0, n))
            if op.hi != INF:
                entries.append((op.hi, 1, n))
        entries.sort()
        m = len(entries)
        self.ops = ops
        self.end = m + 1
        self.nxt = [*range(1, m + 2), m + 1]
        self.prv = [0, *range(0, m + 1)]
        self.is_ret = [False] * (m + 2)
        self.op_of = [0] * (m + 2)
        self.call = [0] * len(ops)
        self.ret = [0] * len(ops)
        for k, (_, r, n) in enumerate(entries, start=1):
            self.is_ret[k] = bool(r)
            self.op_of[k] = n
            if r:
                self.ret[n] = k
            else:
                self.call[n] = k
        self.remaining = sum(1 for r in self.ret if r)

    def lift(self, n: int) -> None:
        nxt, prv = self.nxt, self.prv
        for e in (self.call[n], self.ret[n]):
            if e:
                nxt[prv[e]] = nxt[e]
                prv[nxt[e]] = prv[e]
        if self.ret[n]:
            self.remaining -= 1

    def unlift(self, n: int) -> None:
        nxt, prv = self.nxt, self.prv
        for e in (self.ret[n], self.call[n]):
            if e:
                nxt[prv[e]] = e
                prv[nxt[e]] = e
        if self.ret[n]:
            self.remaining += 1


def linearize(ops: Sequence[ModelOp], deadline: float, max_steps: int = 1 << 62,
              lazy: bool = False) -> Outcome:
    """Decide whether ``ops`` (one session) have a linearization, by ``deadline`` (a
    ``time.monotonic()`` value) and within ``max_steps`` steps of the walk (a budget that
    does not depend on the machine's speed); past either the outcome is unknown. ``lazy``:
    walk the lazy model, which finds linearizations (with their ``path``) but refutes
    nothing (see the module's docstring)."""
    return drive(begin(ops, lazy), deadline, max_steps)


def begin(ops: Sequence[ModelOp], lazy: bool = False) -> Run:
    """:func:`linearize` as a resumable run (:data:`Run`): it yields its steps every 1,024,
    and returns an undecided outcome when :class:`Budget` is thrown into it or past
    :data:`MAX_CACHED` configurations."""
    s = _Search(ops)
    model: Any = make_step(ops) if lazy else step
    observer = [op.kind in OBSERVERS for op in ops]
    cache: set[tuple[int, Any]] = set()
    stack: list[tuple[int, Any, int, list[Any], int, bool]] = []
    state: Any = LAZY_INIT if lazy else INIT
    lin = 0
    best = Outcome(False)
    e = s.nxt[0]
    steps = 0
    while s.remaining:
        steps += 1
        if not steps & 1023:
            if len(cache) > MAX_CACHED:
                return Outcome(None, best.stuck, best.state, best.depth, steps)
            try:
                yield steps
            except Budget:
                return Outcome(None, best.stuck, best.state, best.depth, steps)
        if not s.is_ret[e]:
            n = s.op_of[e]
            alts = model(state, ops[n])
            sure = observer[n]
            k = _first_new(alts, 0, lin | (1 << n), cache)
            if k < 0:
                if alts and sure:
                    # placing it now is no loss, and that configuration failed: so does
                    # this one (observers always return: go back as from their return)
                    e = s.ret[n]
                    continue
                e = s.nxt[e]
                continue
            stack.append((e, state, lin, alts, k + 1, sure))
            s.lift(n)
            state, lin = alts[k], lin | (1 << n)
            e = s.nxt[0]
            continue
        if len(stack) >= best.depth:
            best = Outcome(False, ops[s.op_of[e]], state, len(stack))
        while True:
            if not stack:
                return Outcome(None if lazy else False, best.stuck, best.state, best.depth, steps)
            e0, state, lin, alts, k0, sure = stack.pop()
            n = s.op_of[e0]
            s.unlift(n)
            if sure:
                continue  # placing it when it was placed is no loss: fail further back
            k = _first_new(alts, k0, lin | (1 << n), cache)
            if k >= 0:
                stack.append((e0, state, lin, alts, k + 1, sure))
                s.lift(n)
                state, lin = alts[k], lin | (1 << n)
                e = s.nxt[0]
            else:
                e = s.nxt[e0]
            break
    return Outcome(True, explored=steps, order=tuple(s.op_of[entry[0]] for entry in stack),
                   path=(*(entry[1] for entry in stack), state) if lazy else ())


def _first_new(alts: list[Any], k0: int, lin: int, cache: set[tuple[int, Any]]) -> int:
    """Index of the first alternative from ``k0`` not explored yet (marking it), or -1."""
    for k in range(k0, len(alts)):
        key = (lin, alts[k])
        if key not in cache:
            cache.add(key)
            return k
    return -1
