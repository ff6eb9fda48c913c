"""Just-in-time linearization in two passes: a joined forward sweep, then a guided walk.

The depth-first search of :mod:`~harness.checker.frontier` is quick when its first guesses
are right; when a guess is wrong hundreds of ops before it shows (a snapshot placed late
among 16 writers, its content found wrong only at a read after a rollback to it), it
backs up through every choice in between. This search walks the history's events in time
order instead (Lowe, "Testing for linearizability", 2017: just-in-time linearization):

- a configuration is the set of ops placed that have not returned yet and a lazy state
  (:mod:`~harness.checker.lazy`);
- at the return of op X, a configuration is extended by every sequence of pending ops
  that ends with X and that the model allows (:func:`_closure`): X took effect before it
  returned, and the ops placed before it are exactly those a linearization puts before X,
  so every linearization is one of the paths walked. An op whose outcome is unknown (no
  return) is never required.

**Pass 1, forward, joined.** All configurations at once, breadth first. The states that
survive a return differ mostly in which content each snapshot holds, a product of
independent choices (thousands of states after a few dozen rollbacks). States equal but
for their snapshots' candidate contents are *joined* into one whose candidates are the
unions (:func:`_join`): a superset of what they stand for (exactly them when they were a
product), since the lazy step is monotone in the candidates. So if no configuration
survives, none of the real ones would: the session has **no linearization** (sound).
Each joined state remembers the states it came from one return earlier.

**Pass 2, backward marks, then a guided depth-first walk.** From the last return back,
a state of pass 1 is *live* if it led to a live state (or survived to the end), and for
each snapshot a rollback may still restore, the contents that some way to the end
restores are *needed* (each way remembers the contents its rollbacks restored). The walk
then goes forward through the returns with real (unjoined) states, depth first, keeping
only successors that a live state covers (same turns, ids and windows, candidate contents
within its own) and in which every such snapshot still holds a needed content. A
successor that fails this has no way to the end (pass 1 over-approximates every way), so
the walk loses no linearization; what it saves is the backtracking: a rollback that
restored a content nothing later can use is cut where it happens, not hundreds of ops on.
The path it finds is a linearization with the lazy states along it, which
:func:`~harness.checker.lazy.certify` turns into an order the eager model replays
(:func:`harness.checker.exact.replays`).

Where it is slow: ops that run for a long time (a snapshot of 130 ms among hundreds of
short ops) keep many ops pending at once, and pass 1 carries every subset of them that
can have been placed (256 configurations at one return of a 16-writer session).
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Sequence
from typing import Any

from harness.checker.lazy import LAZY_INIT, ROLLBACKS, make_step, rank
from harness.checker.linearize import Budget, Outcome, Run, drive
from harness.checker.model import ModelOp
from harness.checker.ops import INF

__all__ = ["MAX_ALIVE", "begin", "search_jit"]

#: States alive at once after a return (pass 1, joined) past which the session is
#: undecided: memory, not time, would then run out.
MAX_ALIVE = 100_000

Step = Callable[[Any, ModelOp], list[Any]]


def search_jit(ops: Sequence[ModelOp], deadline: float, max_steps: int = 1 << 62) -> Outcome:
    """Decide whether ``ops`` (one session) have a linearization, by ``deadline`` (a
    ``time.monotonic()`` value) and within ``max_steps`` model steps; past either the
    outcome is unknown. A linearizable outcome has ``order`` and ``path`` (the lazy state
    before each op, then the last) for :func:`~harness.checker.lazy.certify`; an unknown
    one says how far the pass running got (``depth``: the ops that had returned before the
    furthest return it reached, each placed; ``stuck``: the op returning there)."""
    return drive(begin(ops), deadline, max_steps)


def begin(ops: Sequence[ModelOp]) -> Run:
    """The search as a resumable run (as :func:`harness.checker.frontier.begin`): it yields
    its model steps so far after each closure, returns its outcome, and returns an
    undecided one when :class:`~harness.checker.linearize.Budget` is thrown into it."""
    step = make_step(ops)
    rets = _returns(ops)
    count = [0]
    far = [0]  # the furthest return reached by the pass running
    try:
        layers = yield from _forward(ops, step, rets, count, far)
        if isinstance(layers, Outcome):
            return Outcome(False, layers.stuck, layers.state, layers.depth, count[0])
        if layers is None:
            return Outcome(None, ops[rets[far[0]][0]], None, far[0], count[0])
        live = _live(layers)
        far[0] = 0
        found = yield from _walk(ops, step, rets, live, count, far)
    except Budget:
        return Outcome(None, ops[rets[far[0]][0]] if rets else None, None, far[0], count[0])
    if isinstance(found, Outcome):
        return Outcome(False, found.stuck, found.state, found.depth, count[0])
    order, path = found
    return Outcome(True, explored=count[0], order=order, path=path)


def _returns(ops: Sequence[ModelOp]) -> list[tuple[int, int]]:
    """``(op, pending ops)`` at each return, in time order: the op returning and the ops
    invoked by then that have not returned before it (an invocation at the same instant
    as a return comes first: neither must precede the other)."""
    events = sorted([(o.lo, 0, n) for n, o in enumerate(ops)]
                    + [(o.hi, 1, n) for n, o in enumerate(ops) if o.hi != INF])
    out = []
    pending = 0
    for _, is_return, n in events:
        if is_return:
            out.append((n, pending))
            pending &= ~(1 << n)
        else:
            pending |= 1 << n
    return out


def _closure(ops: Sequence[ModelOp], step: Step, start: dict[int, dict[Any, Any]], x: int,
             pending: int, count: list[int], carry: Callable[[Any, int, Any], Any],
             gather: bool = False) -> Generator[int, None, dict[int, dict[Any, Any]]]:
    """The configurations after the return of ``x``: from each of ``start`` (key: placed
    ops not returned, a bitset; value: state -> what it carries), every sequence of
    pending ops that the model allows and that ends with ``x``; configurations met on the
    way are merged. ``carry(value, op index, new state)`` is what a new state carries: with
    ``gather``, a frozenset, and a state reached again carries the union (every way it was
    reached, which pass 2 needs); else the first way only."""
    bit = 1 << x
    after: dict[int, dict[Any, Any]] = {}
    seen: dict[int, dict[Any, Any]] = {}
    todo: list[tuple[int, dict[Any, Any]]] = []
    for k, states in start.items():
        if k & bit:  # placed already: its return changes nothing
            dest = after.setdefault(k & ~bit, {})
            for st, value in states.items():
                dest[st] = dest[st] | value if gather and st in dest else value
        else:
            seen.setdefault(k, {}).update(states)
            todo.append((k, states))
    while todo:
        k, here = todo.pop()
        free = pending & ~k
        work = 0
        while free:
            low = free & -free
            free ^= low
            n = low.bit_length() - 1
            op = ops[n]
            k2 = k | low
            dest = after.setdefault(k2 & ~bit, {}) if n == x else seen.setdefault(k2, {})
            new: dict[Any, Any] = {}
            for s1, value in here.items():
                for s2 in step(s1, op):
                    work += 1
                    old = dest.get(s2)
                    if old is None:
                        dest[s2] = new[s2] = carry(value, n, s2)
                    elif gather:
                        more = carry(value, n, s2) - old
                        if more:
                            dest[s2] = old | more
                            new[s2] = new.get(s2, frozenset()) | more
            if n != x and new:
                todo.append((k2, new))
        count[0] += work
        yield count[0]
    return {k: v for k, v in after.items() if v}


#: What a state of pass 1 came from: ``(index of a configuration one return earlier,
#: the rollbacks on the way as (id, content restored))``.
Tag = tuple[int, tuple[tuple[str, Any], ...]]
#: Pass 1's layer: ``((key, joined state), tags)``; the list index is the configuration's.
Layer = list[tuple[tuple[int, Any], frozenset[Tag]]]


def _tag(tags: frozenset[Tag], op: ModelOp, state: Any) -> frozenset[Tag]:
    """The ways to ``state``: a rollback adds the content it restored to each."""
    if op.kind not in ROLLBACKS:
        return tags
    return frozenset((o, (*ch, (op.arg, state[0]))) for o, ch in tags)


def _forward(ops: Sequence[ModelOp], step: Step, rets: list[tuple[int, int]],
             count: list[int], far: list[int]) -> Generator[int, None, list[Layer] | Outcome | None]:
    """Pass 1: the joined configurations after every return (layer 0: the start), an
    :class:`Outcome` saying where none survived, or None past :data:`MAX_ALIVE`; ``far``
    follows the return it is at."""
    layers: list[Layer] = [[((0, LAZY_INIT), frozenset())]]
    for depth, (x, pending) in enumerate(rets):
        far[0] = depth
        start: dict[int, dict[Any, frozenset[Tag]]] = {}
        for i, ((k, st), _) in enumerate(layers[-1]):
            start.setdefault(k, {})[st] = frozenset({(i, ())})
        after = yield from _closure(ops, step, start, x, pending, count,
                         lambda v, n, s2: _tag(v, ops[n], s2), gather=True)
        layer: Layer = []
        for k, states in after.items():
            for st, came in _join(states).items():
                layer.append(((k, st), came))
        if not layer:
            last = [st for (_, st), _ in layers[-1]]
            return Outcome(False, ops[x], min(last, key=rank), depth)
        if len(layer) > MAX_ALIVE:
            return None
        layers.append(layer)
    return layers


def _shape(s: Any) -> Any:
    """A lazy state without its snapshots' candidate contents (what :func:`_join` keeps)."""
    turns, ids, contents, open_ = s
    return (turns, ids, tuple((sid, c if isinstance(c, tuple) else None, n)
                              for sid, c, n in contents), open_)


def _join(states: dict[Any, frozenset[Tag]]) -> dict[Any, frozenset[Tag]]:
    """States of one shape as one, their candidate contents the unions (what each came
    from: the union too)."""
    if len(states) < 2:
        return states
    groups: dict[Any, list[Any]] = {}
    for s in states:
        groups.setdefault(_shape(s), []).append(s)
    if len(groups) == len(states):
        return states
    out: dict[Any, frozenset[Tag]] = {}
    for group in groups.values():
        if len(group) == 1:
            out[group[0]] = states[group[0]]
            continue
        turns, ids, contents, open_ = group[0]
        merged = []
        for i, entry in enumerate(contents):
            c = entry[1]
            if isinstance(c, frozenset):
                union = c.union(*(g[2][i][1] for g in group[1:]))
                if len(union) != len(c):  # else the same objects: joins are kept by the thousand
                    entry = (entry[0], union, entry[2])
            merged.append(entry)
        out[(turns, ids, tuple(merged), open_)] = frozenset().union(*(states[g] for g in group))
    return out


#: For each live configuration of a layer: ``(key, shape) -> [(joined state, needed)]``,
#: ``needed``: for each snapshot a rollback may still restore, the contents of its
#: candidates that some way to the end restores.
Live = dict[tuple[int, Any], list[tuple[Any, dict[str, frozenset[Any]]]]]


def _live(layers: list[Layer]) -> list[Live]:
    """Backward from the last layer: the live configurations of each layer (a way to the
    end exists in pass 1) and, for each, the contents its rollbacks still need."""
    needs: dict[int, dict[str, set[Any]]] = {
        i: {sid: set(c) for sid, c, _ in st[2] if isinstance(c, frozenset)}
        for i, ((_, st), _) in enumerate(layers[-1])}
    out: list[Live] = []
    for depth in range(len(layers) - 1, -1, -1):
        layer = layers[depth]
        index: Live = {}
        before: dict[int, dict[str, set[Any]]] = {}
        for i, need in needs.items():
            (k, st), tags = layer[i]
            index.setdefault((k, _shape(st)), []).append(
                (st, {sid: frozenset(c) for sid, c in need.items()}))
            if depth == 0:
                continue
            for p, choices in tags:
                (_, pst), _ = layers[depth - 1][p]
                pneed = before.setdefault(p, {})
                chosen: dict[str, Any] = {}
                for sid, c in choices:
                    chosen.setdefault(sid, c)  # the first rollback to it chose
                for sid, c, _ in pst[2]:
                    if not isinstance(c, frozenset):
                        continue
                    got = pneed.setdefault(sid, set())
                    if sid in chosen:
                        got.add(chosen[sid])
                    elif sid in need:
                        got.update(need[sid] & c)
        out.append(index)
        needs = before
    out.reverse()
    return out


def _covered(index: Live, k: int, s: Any) -> bool:
    """Whether a live joined state of the layer holds the real configuration ``(k, s)``
    and each of its snapshots still has a content some way to the end needs."""
    for j, need in index.get((k, _shape(s)), ()):
        if all(c == jc or (isinstance(c, frozenset) and c <= jc and not c.isdisjoint(need[sid]))
               for (sid, c, _), (_, jc, _) in zip(s[2], j[2], strict=True)):
            return True
    return False


def _walk(ops: Sequence[ModelOp], step: Step, rets: list[tuple[int, int]],
          live: list[Live], count: list[int], far: list[int],
          ) -> Generator[int, None, tuple[tuple[int, ...], tuple[Any, ...]] | Outcome]:
    """Pass 2: depth first through the returns with real (unjoined) states, only into
    configurations a live joined one covers; the ops placed and the states along them.

    The walk is exhaustive (it skips only states already visited and states no way to
    the end can pass), so when it runs out the session has no linearization, though pass
    1 let some joined state through (a join stands for more than its parts): the outcome
    then names no op: the furthest return the walk reached is where its marks cut every
    way, not an op the model refused, and a sentence naming it would not be true."""
    # a node: (state, op placed to reach it, previous node)
    root = (LAZY_INIT, -1, None)
    stack: list[tuple[int, int, Any, Any]] = [(0, 0, LAZY_INIT, root)]
    visited: set[tuple[int, int, Any]] = set()
    while stack:
        depth, k, s, node = stack.pop()
        if depth == len(rets):
            return _path(node)
        far[0] = max(far[0], depth)
        x, pending = rets[depth]
        after = yield from _closure(ops, step, {k: {s: node}}, x, pending, count,
                         lambda v, n, s2: (s2, n, v))
        nxt = []
        for k2, states in after.items():
            for s2, node2 in states.items():
                key = (depth + 1, k2, s2)
                if key not in visited and _covered(live[depth + 1], k2, s2):
                    visited.add(key)
                    nxt.append((depth + 1, k2, s2, node2))
        stack.extend(reversed(nxt))
    return Outcome(False)


def _path(node: Any) -> tuple[tuple[int, ...], tuple[Any, ...]]:
    order: list[int] = []
    path: list[Any] = [node[0]]
    while node[2] is not None:
        order.append(node[1])
        node = node[2]
        path.append(node[0])
    order.reverse()
    path.reverse()
    return tuple(order), tuple(path)
