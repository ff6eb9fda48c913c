"""The last resort of ``--exact``: one session's linearizability as a difference-logic formula
for an SMT solver (z3, the ``smt`` extra), which learns from its dead ends where the searches
back up one choice at a time.

The searches leave undecided the shape docs/checker.md names (many concurrent rollbacks,
a read that only a content captured hundreds of ops before explains): which earlier choice
a dead end blames is what a depth-first search cannot tell, and a CDCL solver can.

The formula, for a session whose appends each have a parent a read showed or are ghosts,
and whose only ops of unknown outcome are appends and rollbacks (:func:`supported`; the
others are left to the searches, ``ok`` None):

- every op has an integer position; an op that returned before another was invoked has
  the smaller one (only the pairs that transitivity does not already give);
- the turns an op sees are what the *setter* (an append or a rollback) placed last before
  it made, or the empty list with none. For each op that looks at the turns (a read, an
  append whose parent a read showed, a snapshot some rollback restores) one of the setters
  that may be that last one is chosen (those not forced after it by real time, and not
  forced before another setter that must precede it, :func:`_last`): placed before it,
  with no other such setter in between, and making the list it needs. A setter outside
  that set cannot come between the two either: it is forced after the op, or before a
  setter that returned before the op began, which the choice places before itself;
- an append makes its parent plus its turn (a constant; a ghost makes one dirty value no
  read shows); a rollback makes its snapshot's content, the value its snapshot saw;
- a rollback comes after the snapshot that created its id, a failed one ("not found")
  before it; a listing comes after the snapshots of the ids it shows and before the others;
- an append or a rollback of unknown outcome has a boolean, whether it took effect: only
  one that did is a setter (placed, it may be an op's last one, or come between two).

Lists are numbered, so every term is an integer and every atom a difference of two
(QF_IDL). Positions may tie where nothing orders the two ops; ties are broken by op number.
A model is a linearization; it is returned as an order that
:func:`~harness.checker.exact.replays` checks through the eager model like any search's
(the certificate does not trust this encoding). "unsat" means no order of the ops
explains their results: the agreement tests with brute force hold it to that.
"""

from __future__ import annotations

import time
from bisect import bisect_left
from collections.abc import Iterable, Sequence
from itertools import accumulate
from typing import Any

from harness.checker.linearize import Outcome
from harness.checker.model import GHOST, ModelOp
from harness.checker.ops import INF, NEG

__all__ = ["available", "decide", "supported"]

#: The kinds the formula knows.
KINDS = frozenset({"append", "read", "snapshot", "snapshot-id", "rollback", "rollback?",
                   "rollback-missing", "list"})
#: Memory the solver may take, in MB: past it the session is undecided. On the session
#: docs/checker.md names (``w8-rollbacks``, 1,102 ops) the whole process peaked at
#: 1,422-1,710 MB; on a 1,380-op session the searches decide in 0.1 s, at 3,588 MB
#: before the solver proved it after 396 s (2026-11-30).
SOLVER_MEMORY_MB = 2048
_DIRTY: tuple[str, ...] = ("\x00dirty",)
_SETTERS = ("append", "rollback", "rollback?")
_ROLLBACKS = ("rollback", "rollback?")


def available() -> bool:
    """Whether z3 (the ``smt`` extra) can be imported."""
    try:
        import z3  # noqa: F401
    except ImportError:
        return False
    return True


def supported(ops: Sequence[ModelOp]) -> bool:
    """Whether the formula covers ``ops``: every op of a kind in :data:`KINDS`, of known
    outcome but for appends and rollbacks (``rollback?``), every append a ghost or of a
    known parent, every snapshot id made once. (A snapshot of unknown outcome, which may
    have made any of several ids, is not in it.)"""
    ids = [o.out for o in ops if o.kind in ("snapshot", "snapshot-id")]
    return (len(ids) == len(set(ids))
            and all(o.kind in KINDS and (o.hi != INF or o.kind in _SETTERS) for o in ops)
            and all(o.arg == GHOST or o.out is not None for o in ops if o.kind == "append"))


def decide(ops: Sequence[ModelOp], deadline: float) -> Outcome:
    """Whether ``ops`` (one session, :func:`supported`) have a linearization, by
    ``deadline`` (a ``time.monotonic()`` value): ``ok`` True with ``order`` (the ops'
    indexes, to be replayed), False when the formula is unsatisfiable, None when the
    solver ran out of time or of memory (:data:`SOLVER_MEMORY_MB`) or the session is not
    :func:`supported`."""
    if not supported(ops) or time.monotonic() >= deadline:
        return Outcome(None)
    import z3

    solver, pos = _formula(ops, z3)
    left_ms = int((deadline - time.monotonic()) * 1000)
    if left_ms <= 0:
        return Outcome(None)
    solver.set("timeout", left_ms)
    solver.set("max_memory", SOLVER_MEMORY_MB)
    got = solver.check()
    if got == z3.unsat:
        return Outcome(False)
    if got != z3.sat:
        return Outcome(None)
    model = solver.model()
    at = [model.eval(p, model_completion=True).as_long() for p in pos]
    placed = [k for k in range(len(ops)) if ops[k].hi != INF or z3.is_true(
        model.eval(z3.Bool(f"e{k}"), model_completion=True))]
    return Outcome(True, order=tuple(sorted(placed, key=lambda k: (at[k], k))))


def _formula(ops: Sequence[ModelOp], z3: Any) -> tuple[Any, list[Any]]:
    n = len(ops)
    solver = z3.SolverFor("QF_IDL")
    pos = [z3.Int(f"p{k}") for k in range(n)]
    lists: dict[tuple[str, ...], int] = {(): 0, _DIRTY: 1}

    def number(turns: tuple[str, ...]) -> Any:
        return z3.IntVal(lists.setdefault(turns, len(lists)))

    # real time: b before a when b returned before a was invoked; of those, only the
    # ones that returned no earlier than the latest invocation among them (the others
    # returned before that op was invoked: ordered before it, and it before a)
    by_hi, his, latest = _by_return(ops, range(n))
    for a, o in enumerate(ops):
        j = bisect_left(his, o.lo)
        if j:
            for i in range(j - 1, -1, -1):
                b = by_hi[i]
                if ops[b].hi < latest[j - 1]:
                    break
                solver.add(pos[b] < pos[a])
    setters = [k for k, o in enumerate(ops) if o.kind in _SETTERS]
    # whether each setter took effect: one of unknown outcome may have, or not
    took = {k: z3.BoolVal(True) if ops[k].hi != INF else z3.Bool(f"e{k}") for k in setters}
    made: dict[int, Any] = {}  # what each setter makes
    content: dict[str, Any] = {}  # the value each restored snapshot saw, by id
    creator = {o.out: k for k, o in enumerate(ops) if o.kind in ("snapshot", "snapshot-id")}
    for k in setters:
        o = ops[k]
        if o.kind == "append":
            made[k] = number(_DIRTY if o.arg == GHOST else (*o.out, o.arg))
        else:
            made[k] = content.setdefault(o.arg, z3.Int(f"c{o.arg}"))
    restored = {o.arg for o in ops if o.kind in _ROLLBACKS}
    last = _last(ops, setters)
    for x, o in enumerate(ops):
        kind = o.kind
        if kind == "read":
            solver.add(_sees(x, number(tuple(o.out)), last(x), pos, made, took, z3))
        elif kind == "append" and o.arg != GHOST:  # (where it took effect)
            solver.add(z3.Implies(took[x], _sees(x, number(tuple(o.out)), last(x), pos, made,
                                                 took, z3)))
        elif kind == "snapshot" and o.out in restored:  # (its content made with the rollbacks')
            solver.add(_sees(x, content[o.out], last(x), pos, made, took, z3))
        elif kind in _ROLLBACKS:
            c = creator.get(o.arg)
            solver.add(z3.Implies(took[x], pos[c] < pos[x] if c is not None else z3.BoolVal(False)))
            if c is not None and ops[c].kind == "snapshot-id":  # its content is not kept
                solver.add(content[o.arg] == 0)
        elif kind == "rollback-missing":
            c = creator.get(o.arg)
            if c is not None:
                solver.add(pos[x] < pos[c])
        elif kind == "list":
            if not o.out <= creator.keys():
                solver.add(z3.BoolVal(False))  # an id no snapshot made
            for sid, c in creator.items():
                solver.add(pos[c] < pos[x] if sid in o.out else pos[x] < pos[c])
    return solver, pos


def _by_return(ops: Sequence[ModelOp], among: Iterable[int]) -> tuple[list[int], list[Any], list[Any]]:
    """The ops ``among`` in order of return, their returns, and the latest invocation
    among each one and those before it."""
    order = sorted(among, key=lambda k: ops[k].hi)
    return order, [ops[k].hi for k in order], list(accumulate([ops[k].lo for k in order], max))


def _last(ops: Sequence[ModelOp], setters: list[int]) -> Any:
    """For an op ``x``: the setters that may be the last placed before it, and whether
    none may be (no setter returned before it was invoked)."""
    _, his, latest = _by_return(ops, setters)

    def last(x: int) -> tuple[list[int], bool]:
        o = ops[x]
        j = bisect_left(his, o.lo)
        after = latest[j - 1] if j else NEG
        return [w for w in setters if w != x and ops[w].lo <= o.hi and ops[w].hi >= after], not j
    return last


def _sees(x: int, want: Any, last: tuple[list[int], bool], pos: list[Any], made: dict[int, Any],
          took: dict[int, Any], z3: Any) -> Any:
    """Op ``x`` sees the value ``want``: one of its possible last setters took effect, is
    placed before it with none of the others that took effect in between, and made
    ``want``; or none is before it and ``want`` is the empty list."""
    cands, empty = last
    ways = [z3.And(took[w], pos[w] < pos[x], made[w] == want,
                   *[z3.Or(z3.Not(took[v]), pos[v] < pos[w], pos[x] < pos[v])
                     for v in cands if v != w])
            for w in cands]
    if empty:
        ways.append(z3.And(want == 0, *[z3.Or(z3.Not(took[w]), pos[x] < pos[w]) for w in cands]))
    return z3.Or(*ways)
