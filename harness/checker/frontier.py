"""The search for sessions whose rollbacks take effect: earliest deadline first, on sets of states.

A configuration is the set of ops placed so far and the set of lazy-model states they can
leave (:mod:`~harness.checker.lazy`: which content each rollback restored stays open until
a result rules it out). From a configuration, the ops that may come next are the pending
ones that no pending op must precede: invoked no later than the earliest completion among
the pending ops. The search tries them earliest completion first, so an op that runs for
a long time (a rollback that took 20 ms among hundreds of short ops) is placed where the
results need it, not tried at every point on the way. A snapshot whose content a rollback
may restore is tried first, so that its window (the states it may have captured) opens as
early as it can; a listing, which ends the open windows, is tried last while one is
open. That is an order of trying, not a restriction: every candidate is tried before the
configuration is given up, and each configuration is explored once (a visited set on
the placed ops and the states, Lowe's memoization). An op whose outcome is unknown never
has to be placed: the search succeeds when only such ops are left.

Three reductions, each exact:

- what the listings and failed rollbacks say about the snapshot ids orders some ops before
  others in every linearization (:func:`_id_order`); an op is tried only once those are
  placed;
- an observer (a read, a listing, a failed rollback to a missing id) that *every* state
  of the set allows is placed at once with no alternative, when no snapshot window is
  open: every op that must precede it is placed, so in any linearization from here it can
  move to the front, where it sees the same state (one that only some of the states allow
  may belong after ops that turn the others into it; with a window open, placing it
  could end the window early: both are tried like any op);
- the states are a set, so the search branches on the order of the ops only.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from harness.checker.lazy import LAZY_INIT, make_step
from harness.checker.linearize import OBSERVERS, Budget, Outcome, Run, drive
from harness.checker.model import ModelOp
from harness.checker.ops import INF

__all__ = ["MAX_CONFIGURATIONS", "MAX_STATES", "begin", "exact_path", "search"]

#: Configurations the search remembers at most, whatever its budget: past them the
#: session is undecided (memory, not time, is then what would run out).
MAX_CONFIGURATIONS = 150_000
#: States one configuration may hold at most (choices no result has ruled out yet).
MAX_STATES = 20_000

States = frozenset[Any]


def search(ops: Sequence[ModelOp], deadline: float, max_steps: int = 1 << 62) -> Outcome:
    """Decide whether ``ops`` (one session) have a linearization, by ``deadline`` (a
    ``time.monotonic()`` value) and within ``max_steps`` steps (each configuration counts
    the states in its set: a budget that does not depend on the machine's speed), with at
    most :data:`MAX_CONFIGURATIONS` remembered. When they do, the outcome's ``order`` and ``path`` (one
    run of the lazy model along it) are what :func:`~harness.checker.lazy.certify` needs."""
    return drive(begin(ops), deadline, max_steps)


def begin(ops: Sequence[ModelOp]) -> Run:
    """The search as a resumable run: it yields its step count from time to time (every
    256 steps), returns its outcome, and when
    :class:`~harness.checker.linearize.Budget` is thrown into it returns an undecided one
    (see :func:`~harness.checker.linearize.drive`)."""
    step = make_step(ops)
    by_lo = sorted(range(len(ops)), key=lambda n: (ops[n].lo, ops[n].hi, n))
    lo = [o.lo for o in ops]
    hi = [o.hi for o in ops]
    observer = [o.kind in OBSERVERS for o in ops]
    # observers first (placed at once); then snapshots a rollback may restore, so that
    # their windows open as early as they can; then the rest, earliest completion first
    rank = [0 if observer[n] else 1 if o.kind == "snapshot" else 2 for n, o in enumerate(ops)]
    is_list = [o.kind == "list" for o in ops]
    must = sum(1 for o in ops if o.hi != INF)  # ops that have to be placed
    needs = _id_order(ops)
    visited: set[tuple[int, States]] = set()
    start: States = frozenset({LAZY_INIT})
    # the DFS stack: (placed bitset, states, candidates left to try, number placed that must be)
    placed_order: list[int] = []
    stack: list[tuple[int, States, list[int], int]] = []
    # the ops not placed, in order of invocation: a doubly linked list over by_lo's
    # positions (``end`` heads it and ends it), from which a placed op is unlinked and
    # relinked when the search backs up (in the reverse order: dancing links), so that
    # finding the candidates walks only ops not placed (ops of unknown outcome, never
    # placed, would otherwise make every walk start at the first of them)
    end = len(ops)
    pos = [0] * len(ops)
    for k, n in enumerate(by_lo):
        pos[n] = k
    nxt_of = [*range(1, end + 1), 0]
    prv_of = [end, *range(end)]
    # the deepest dead end so far: (ops placed, the op it could not place, its states);
    # made an Outcome only at the end (picking one state of a set is costly)
    best: tuple[int, ModelOp | None, States] = (-1, None, start)
    steps = 0

    def outcome(ok: bool | None) -> Outcome:
        depth, stuck, states = best
        if depth < 0:
            return Outcome(ok, explored=steps)
        return Outcome(ok, stuck, _one(states), depth, steps)

    def candidates(lin: int, states: States) -> list[int]:
        """The pending ops no pending op must precede, earliest completion first."""
        m = INF
        out = []
        k = nxt_of[end]
        while k != end:
            n = by_lo[k]
            if lo[n] > m:
                break
            out.append(n)
            if hi[n] < m:
                m = hi[n]
            k = nxt_of[k]
        out = [n for n in out if lo[n] <= m and not (needs[n] & ~lin)]
        if any(x[3] for x in states):  # a listing ends the open windows: try it last
            out.sort(key=lambda n: (3 if is_list[n] else rank[n], hi[n], lo[n], n))
        else:
            out.sort(key=lambda n: (rank[n], hi[n], lo[n], n))
        return out

    lin, states, done = 0, start, 0
    todo = candidates(lin, states)
    while True:
        steps += 1
        if not steps & 255:
            try:
                yield steps
            except Budget:
                return outcome(None)
        if done == must:
            order = tuple(placed_order)
            path = exact_path(step, [ops[n] for n in order])
            assert path is not None, "the order the search found explains every result"
            return Outcome(True, explored=steps, order=order, path=path)
        moved = False
        while todo:
            n = todo.pop(0)
            nxt = frozenset(s2 for s1 in states for s2 in step(s1, ops[n]))
            if not nxt:
                continue
            if len(nxt) > MAX_STATES:
                return outcome(None)
            # an observer every state allows (it rules none out); other ops seldom leave
            # the states as they were, and comparing sets on every step costs
            same = observer[n] and nxt == states
            if same:
                nxt = states  # one object for both: the visited set keeps one copy
            key = (lin | 1 << n, nxt)
            sure = same and not any(x[3] for x in states)  # ... with no window open
            if key in visited:
                if sure:
                    todo = []  # placing it now is no loss, and that failed: so does this
                    break
                continue
            visited.add(key)
            steps += len(nxt)  # the work (and memory) of a configuration: its states
            if len(visited) > MAX_CONFIGURATIONS:
                return outcome(None)
            stack.append((lin, states, [] if sure else todo, done))
            placed_order.append(n)
            k = pos[n]
            nxt_of[prv_of[k]] = nxt_of[k]
            prv_of[nxt_of[k]] = prv_of[k]
            lin, states = key
            done += hi[n] != INF
            todo = candidates(lin, states)
            moved = True
            break
        if moved:
            continue
        if len(placed_order) >= best[0]:
            pend = []
            k = nxt_of[end]
            while k != end:
                if hi[by_lo[k]] != INF:
                    pend.append(by_lo[k])
                k = nxt_of[k]
            stuck = min(pend, key=lambda n: (hi[n], n)) if pend else None
            best = (len(placed_order), ops[stuck] if stuck is not None else None, states)
        if not stack:
            return outcome(False)
        lin, states, todo, done = stack.pop()
        k = pos[placed_order.pop()]
        nxt_of[prv_of[k]] = k
        prv_of[nxt_of[k]] = k


def _id_order(ops: Sequence[ModelOp]) -> list[int]:
    """For each op, the ops (a bitset) that must precede it in every linearization, by what
    the listings and the snapshot ids say: snapshot ids are never removed, so a snapshot
    that created id x comes after every listing without x and every failed rollback to x
    ("not found"), and before every listing with x and every acknowledged rollback to x.
    The search only tries an op once those are placed: a snapshot placed before a listing
    that lacks its id fails only at that listing, possibly far on."""
    creator: dict[str, int] = {}
    for n, o in enumerate(ops):
        if o.kind in ("snapshot", "snapshot-id"):
            creator.setdefault(o.out, n)
    needs = [0] * len(ops)
    for n, o in enumerate(ops):
        if o.kind == "list":
            for sid, c in creator.items():
                if sid in o.out:
                    needs[n] |= 1 << c
                else:
                    needs[c] |= 1 << n
        elif o.kind == "rollback-missing" and o.arg in creator:
            needs[creator[o.arg]] |= 1 << n
        elif o.kind == "rollback" and o.arg in creator:
            needs[n] |= 1 << creator[o.arg]
    return needs


def _one(states: States) -> Any:
    """One state of a set, the same one on every run (the shortest turns, then the least)."""
    return min(states, key=lambda x: (len(x[0]), x[0], repr(x[1:])))


def exact_path(step: Any, order: Sequence[ModelOp]) -> tuple[Any, ...] | None:
    """One sequence of lazy states along ``order`` that explains every result (the state
    before each op, then the last), or None if none does: forward with each state's
    predecessor, then back from the last state :func:`_one` picks."""
    layers: list[dict[Any, Any]] = [{LAZY_INIT: None}]
    for op in order:
        nxt: dict[Any, Any] = {}
        for s1 in layers[-1]:
            for s2 in step(s1, op):
                nxt.setdefault(s2, s1)
        if not nxt:
            return None
        layers.append(nxt)
    state = _one(frozenset(layers[-1]))
    path = [state]
    for layer in reversed(layers[1:]):
        state = layer[state]
        path.append(state)
    return tuple(reversed(path))
