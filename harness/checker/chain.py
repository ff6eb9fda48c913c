"""The exact decision for a session in which no rollback takes effect, without search.

Turns are unique and every read returns the whole list, so the reads reveal the order of
the appends. With no rollback, a session is two independent objects (linearizability is
local, Herlihy and Wing): the turns (appends and reads) and the snapshot ids (snapshots,
listings and failed rollbacks to a missing id), since nothing reads a snapshot's content
but a rollback. The turns object is decided here in O(n) after the reads are compared:

1. every read must be a prefix of the longest one, ``L`` (else no order gives both);
2. the ops fall into blocks in the only order a linearization can have: the reads of the
   empty list, the append of ``L[0]``, the reads of ``L[:1]``, the append of ``L[1]``, ...,
   then every acknowledged append no read shows (after every read, since none shows it);
   inside a block any order will do (reads of one list commute; the unseen appends are
   seen by nothing);
3. a linear extension of real time (``X.hi < Y.lo``: X before Y) and of that block order
   exists iff no op of a later block must precede an op of an earlier one: a cycle in their
   union would have to step back a block, and inside one block real time alone is acyclic.
   The first such pair is the violation, with its events; otherwise the blocks, each in
   order of completion, are the linearization.

The snapshot-id object is small (a few ops in twelve) and decided by the search of
:mod:`~harness.checker.linearize` on its ops alone. An unknown-outcome rollback never has to
take effect: if the session is linearizable without any, it is linearizable; if not, and
one could have taken effect, :func:`decide` answers ``None`` and the caller searches the
whole session.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from harness.checker.linearize import linearize
from harness.checker.model import GHOST, ModelOp
from harness.checker.ops import INF

__all__ = ["Backward", "Chain", "decide", "decide_turns"]

#: The snapshot-id object's ops.
ID_KINDS = frozenset({"snapshot", "snapshot-id", "snapshot?", "list", "rollback-missing"})


@dataclass(frozen=True, slots=True)
class Chain:
    """A proof: ``order`` is a linearization of the turns ops, ``ids`` one of the snapshot-id
    ops (each replayable through the model on its own, by locality)."""

    order: tuple[ModelOp, ...]
    ids: tuple[ModelOp, ...]


@dataclass(frozen=True, slots=True)
class Backward:
    """A refutation: ``later`` (an op of a later block) completed before ``earlier`` (an op
    of an earlier block) was invoked. ``witness`` is a read showing the order of the two
    (the longest read), or None when neither is an append it shows."""

    later: ModelOp
    earlier: ModelOp
    witness: ModelOp | None


#: Why the turns object has no linearization but no pair can say it (two reads that are not
#: one a prefix of the other, a turn shown twice or never appended): the fast checker's
#: rules name these; the caller explains them.
UNORDERED = "unordered"


def decide(ops: Sequence[ModelOp], deadline: float) -> Chain | Backward | str | None:
    """Decide the session ``ops`` (:func:`harness.checker.exact.session_ops`) if no rollback
    in them must take effect: a :class:`Chain` (linearizable), a :class:`Backward` or
    :data:`UNORDERED` (not), ``"ids"`` (the snapshot ids alone have no linearization, which
    no rollback can change) or None (an acknowledged rollback, an append repeated, a
    failure of the turns an unknown rollback might explain, or the ids not decided by
    ``deadline``: search the whole session)."""
    if any(o.kind == "rollback" for o in ops):
        return None
    turns = [o for o in ops if o.kind in ("append", "read")]
    id_ops = [o for o in ops if o.kind in ID_KINDS]
    maybe_rollback = any(o.kind == "rollback?" for o in ops)
    verdict = decide_turns(turns)
    if verdict is None or (maybe_rollback and not isinstance(verdict, tuple)):
        return None
    if not isinstance(verdict, tuple):
        return verdict
    ids: tuple[ModelOp, ...] = ()
    if id_ops:
        out = linearize(id_ops, deadline)
        if out.ok is None:
            return None
        if not out.ok:
            # no rollback adds or removes an id, and every id op's result depends on the
            # ids alone: the ids' ops of a linearization of the session would be one of
            # theirs, so a rollback (unknown or not) cannot explain this
            return "ids"
        ids = tuple(id_ops[k] for k in out.order)
    return Chain(verdict, ids)


def decide_turns(ops: Sequence[ModelOp]) -> tuple[ModelOp, ...] | Backward | str | None:
    """The turns object (appends and reads only): a linearization, a :class:`Backward`,
    :data:`UNORDERED`, or None when an append's turn is repeated (two appends of one turn:
    the order of the reads no longer fixes which one a read shows)."""
    appends: dict[str, ModelOp] = {}
    reads: list[ModelOp] = []
    ghosts: list[ModelOp] = []  # acknowledged, shown by no read
    for o in ops:
        if o.kind == "read":
            reads.append(o)
        elif o.arg == GHOST:
            ghosts.append(o)
        elif o.arg in appends:
            return None
        else:
            appends[o.arg] = o
    longest: tuple[str, ...] = max((r.out for r in reads), key=len, default=())
    if len(set(longest)) != len(longest) or any(t not in appends for t in longest):
        return UNORDERED
    for r in reads:
        if r.out != longest[:len(r.out)]:
            return UNORDERED
    n = len(longest)
    # block 2k: the reads of longest[:k]; block 2k-1: the append of longest[k-1]; 2n+1: the rest
    blocks: list[list[ModelOp]] = [[] for _ in range(2 * n + 2)]
    position = {t: k for k, t in enumerate(longest, start=1)}
    for r in reads:
        blocks[2 * len(r.out)].append(r)
    for t, a in appends.items():
        k = position.get(t)
        if k is not None:
            blocks[2 * k - 1].append(a)
        elif a.hi != INF:  # an unknown-outcome append no read shows never took effect
            blocks[2 * n + 1].append(a)
    blocks[2 * n + 1] += ghosts
    later: ModelOp | None = None  # the op of a later block that completed first
    for block in reversed(blocks):
        if later is not None:
            for o in block:
                if later.hi < o.lo:
                    both = later.kind == o.kind == "append"
                    return Backward(later, o, reads_max(reads) if both else None)
        for o in block:
            if later is None or o.hi < later.hi:
                later = o
    order: list[ModelOp] = []
    for block in blocks:
        order += sorted(block, key=lambda o: (o.hi, o.lo, o.id))
    return tuple(order)


def reads_max(reads: Sequence[ModelOp]) -> ModelOp | None:
    """The read showing the most turns (the first of them), None without reads."""
    return max(reads, key=lambda r: (len(r.out), -r.id), default=None)
