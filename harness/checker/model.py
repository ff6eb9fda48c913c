"""The model of a memory store's session: a pure ``INIT``/``step`` pair (Porcupine style).

State: the turns (tokens, oldest first) and the snapshots (id -> turns), both immutable.
``step(state, op)`` returns every state the op can lead to given what it returned: none if
the result is impossible in ``state``, several when an op's outcome is unknown (an ``info``
snapshot may have created any id that something later refers to).

Semantics (docs/design.md): append adds at the end; snapshot records the current turns under a
new id; rollback makes the turns the snapshot's and removes no snapshot; list_snapshots
returns the session's ids. An op whose outcome is unknown (``info``, or never completed)
may take effect at any point after its invocation, or never, which the search expresses by
giving it no return time: such an op never *has* to be applied, so ``step`` offers only the
outcomes that something can observe. An unknown snapshot that created an id nothing refers
to, or an unknown rollback to an id that does not exist (it failed), changes nothing any
later op can see but a listing, which it could only contradict: "never" covers both.
"""

from __future__ import annotations

from bisect import bisect_left
from dataclasses import dataclass, fields
from operator import itemgetter
from typing import Any

from harness.history import Event

__all__ = ["GHOST", "INIT", "OP_KINDS", "ModelOp", "State", "new_op", "step"]

Turns = tuple[str, ...]
Snaps = tuple[tuple[str, Turns], ...]
#: ``(turns, snapshots sorted by id)``
State = tuple[Turns, Snaps]

INIT: State = ((), ())

#: The turn of every acknowledged append that no read shows (see
#: :func:`harness.checker.exact.session_ops`): nothing can tell such turns apart.
GHOST = "\x00ghost"

#: The kinds of ModelOp: append; read (ok); snapshot (ok, known id); snapshot-id (the same, its
#: content not kept: no rollback targets it); snapshot? (outcome unknown);
#: rollback (ok); rollback? (outcome unknown); rollback-missing (failed: "not found");
#: list (ok list_snapshots).
OP_KINDS = ("append", "read", "snapshot", "snapshot-id", "snapshot?", "rollback", "rollback?",
            "rollback-missing", "list")


@dataclass(frozen=True, slots=True)
class ModelOp:
    """One operation of a session as the search sees it.

    ``arg``: the token (append; its ``out``, if known, is the state it must be applied
    to, since a read showed what precedes the turn), the target id (rollbacks) or the ids an unknown snapshot
    may have created (``snapshot?``). ``out``: the tokens read (a tuple), the id created, or
    the ids listed (a frozenset). ``hi`` is ``ops.INF`` when the op has no return."""

    id: int
    kind: str
    lo: int
    hi: int
    arg: Any = None
    out: Any = None
    inv: Event | None = None
    comp: Event | None = None


_new = object.__new__
# each field's slot, set directly (the descriptors of the dataclass's __slots__, in order)
_set_id, _set_kind, _set_lo, _set_hi, _set_arg, _set_out, _set_inv, _set_comp = (
    vars(ModelOp)[f.name].__set__ for f in fields(ModelOp))


def new_op(id: int, kind: str, lo: int, hi: int, arg: Any, out: Any, inv: Event | None,
           comp: Event | None) -> ModelOp:
    """``ModelOp(id, kind, lo, hi, arg, out, inv, comp)``, the same object, made in half
    the time: its slots set directly, where a frozen dataclass's ``__init__`` sets each
    field through ``object.__setattr__`` (0.33 against 0.62 µs here; a session has
    thousands of ops, each made once)."""
    op = _new(ModelOp)
    _set_id(op, id)
    _set_kind(op, kind)
    _set_lo(op, lo)
    _set_hi(op, hi)
    _set_arg(op, arg)
    _set_out(op, out)
    _set_inv(op, inv)
    _set_comp(op, comp)
    return op


def _get(snaps: Snaps, sid: str) -> Turns | None:
    # snapshots are sorted by id, and ids are unique: (sid,) sorts just before (sid, turns)
    i = bisect_left(snaps, (sid,))
    return snaps[i][1] if i < len(snaps) and snaps[i][0] == sid else None


def _put(snaps: Snaps, sid: str, turns: Turns) -> Snaps:
    i = bisect_left(snaps, (sid,))
    return (*snaps[:i], (sid, turns), *snaps[i:])


_ids = itemgetter(0)


def step(state: State, op: ModelOp) -> list[State]:
    """Every state ``op`` can lead to from ``state`` given its result (empty: impossible)."""
    turns, snaps = state
    kind = op.kind
    if kind == "append":
        if op.out is not None and turns != op.out:
            return []
        return [((*turns, op.arg), snaps)]
    if kind == "read":
        return [state] if turns == op.out else []
    if kind == "snapshot":
        return [] if _get(snaps, op.out) is not None else [(turns, _put(snaps, op.out, turns))]
    if kind == "snapshot-id":
        return [] if _get(snaps, op.out) is not None else [(turns, _put(snaps, op.out, ()))]
    if kind == "snapshot?":
        return [(turns, _put(snaps, sid, turns)) for sid in op.arg if _get(snaps, sid) is None]
    if kind == "list":  # the ids are unique: as many, each listed, is the same set
        return [state] if len(snaps) == len(op.out) and op.out.issuperset(map(_ids, snaps)) else []
    target = _get(snaps, op.arg)
    if kind == "rollback":
        return [] if target is None else [(target, snaps)]
    if kind == "rollback?":
        return [] if target is None else [(target, snaps)]
    if kind == "rollback-missing":
        return [state] if target is None else []
    raise ValueError(f"unknown op kind {kind!r}")
