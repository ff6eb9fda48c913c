"""A session without rollbacks, proven linearizable on its raw pairs before any other rule.

Most sessions of a run have no rollback. For them the reads reveal the order of the
appends (:mod:`~harness.checker.chain` says why), so a linearization can be *proposed* in
one sort and *checked* in one pass, with no model ops built and no fast rule run:

1. the turns: the longest read ``L`` fixes the order; the ops go in blocks (the reads of
   ``L[:0]``, the append of ``L[0]``, the reads of ``L[:1]``, ..., then every acknowledged
   append no read shows), each block in order of completion;
2. the snapshot ids (a separate object: nothing but a rollback reads a snapshot's
   content, and there is none): the listings by size, each id's snapshot just before the
   smallest listing that shows it, the snapshots no listing shows last; an id listed that
   no acknowledged snapshot returned is given to a snapshot of unknown outcome (the
   earliest invoked to the earliest listed);
3. each proposal is then replayed (:func:`replays_turns`, :func:`replays_ids`): real time
   (no op placed after one that was invoked after it completed) and every result, by the
   model's rules (an append adds its turn at the end; a read returns the whole list; a
   snapshot adds a new id; a listing returns every id). Ops that may never have taken
   effect (no ``ok``) are left out, which the model allows: an unknown append no read shows,
   a snapshot of unknown outcome, a read that never returned.

The replay is the proof, whatever proposed the order. :func:`prove` answers only True (the
session is linearizable) or False (not proven here: anything unusual, such as a read that
failed, a turn appended twice, an id listed that no acknowledged snapshot returned, or a
proposal that does not replay); on False the caller runs the fast rules and the exact
decision of :mod:`~harness.checker.exact`, which say what is wrong, if anything.
"""

from __future__ import annotations

from typing import Any

from harness.checker.ops import INF, NEG, SessionOps
from harness.checker.order_tree import read_tokens

__all__ = ["prove", "replays_ids", "replays_turns"]

#: A proposed op: ``(block, hi, lo, seq, is_observer, value)``; sorted, it is the order.
Step = tuple[int, int, int, int, bool, Any]


def prove(so: SessionOps) -> bool:
    """Whether the session (no rollback in it) is proven linearizable by the order its
    reads and listings reveal, replayed through the model's rules. False: not proven here
    (see the module's docstring), never "not linearizable"."""
    if so.rollbacks:
        return False
    turns = _turns_order(so)
    if turns is None or not _complete(turns, so.appends, so.reads) or not replays_turns(turns):
        return False
    if so.snapshots or so.lists:
        ids = _ids_order(so)
        if ids is None or not _complete(ids, so.snapshots, so.lists) or not replays_ids(ids):
            return False
    return True


def _complete(order: list[Step], writes: list[Any], observers: list[Any]) -> bool:
    """Whether ``order`` holds every write and every observer that completed ok (counted
    apart from how the order was proposed)."""
    def ok(pairs: list[Any]) -> int:
        return sum(1 for _, comp in pairs if comp is not None and comp.type == "ok")

    placed = sum(1 for step in order if not step[4] and step[1] != INF)
    seen = sum(1 for step in order if step[4])
    return placed == ok(writes) and seen == ok(observers)


def replays_turns(order: list[Step]) -> bool:
    """Whether ``order`` of appends (value ``[role, token]``) and reads (value: the list
    read) respects real time and gives every read its result, from the empty list."""
    latest = NEG
    state: list[Any] = []
    for _, hi, lo, _, observer, value in order:
        if hi < latest:
            return False
        if lo > latest:
            latest = lo
        if not observer:
            state.append(value)
        elif value != state:
            return False
    return True


def replays_ids(order: list[Step]) -> bool:
    """Whether ``order`` of snapshots (value: the id returned) and listings (value: the ids
    listed) respects real time, every snapshot makes a new id and every listing shows
    exactly the ids made before it."""
    latest = NEG
    state: set[Any] = set()
    for _, hi, lo, _, observer, value in order:
        if hi < latest:
            return False
        if lo > latest:
            latest = lo
        if not observer:
            if value in state:
                return False
            state.add(value)
        elif len(value) != len(state) or set(value) != state:
            return False
    return True


def _turns_order(so: SessionOps) -> list[Step] | None:
    reads: list[tuple[int, int, list[Any]]] = []
    longest: list[Any] = []
    for inv, comp in so.reads:
        if comp is None or comp.type == "info":
            continue  # never returned: it need not have taken effect
        value = comp.value
        if comp.type != "ok" or type(value) is not list:
            return None
        reads.append((inv.time, comp.time, value))
        if len(value) > len(longest):
            longest = value
    if read_tokens(longest) is None:
        return None
    position: dict[str, int] = {}
    for k, item in enumerate(longest, start=1):
        if position.setdefault(item[1], k) != k:
            return None  # a turn shown twice
    n = len(longest)
    order: list[Step] = []
    seen: set[str] = set()
    for seq, (inv, comp) in enumerate(so.appends):
        if comp is not None and comp.type == "fail":
            continue
        value = inv.value
        if type(value) is not list or len(value) != 2:
            return None
        role, token = value
        if type(role) is not str or type(token) is not str or token in seen:
            return None  # a turn appended twice: which one a read shows is open
        seen.add(token)
        hi = comp.time if comp is not None and comp.type == "ok" else INF
        at = position.get(token)
        if at is not None:
            if longest[at - 1] != value:
                return None  # shown with another role
            order.append((2 * at - 1, hi, inv.time, seq, False, value))
        elif hi != INF:
            order.append((2 * n + 1, hi, inv.time, seq, False, value))
    if len(seen.intersection(position)) != n:
        return None  # a turn shown that no append of the session may have made
    base = len(so.appends)
    for seq, (lo, hi, value) in enumerate(reads, start=base):
        order.append((2 * len(value), hi, lo, seq, True, value))
    order.sort()
    return order


def _ids_order(so: SessionOps) -> list[Step] | None:
    listings: list[tuple[int, int, list[Any]]] = []
    for inv, comp in so.lists:
        if comp is None or comp.type == "info":
            continue
        value = comp.value
        if comp.type != "ok" or type(value) is not list or any(type(x) is not str for x in value):
            return None
        listings.append((inv.time, comp.time, value))
    made: dict[Any, tuple[int, int]] = {}
    unknown: list[int] = []  # the invocation times of snapshots of unknown outcome
    for inv, comp in so.snapshots:
        if comp is not None and comp.type == "fail":
            continue
        if comp is None or comp.type != "ok":
            unknown.append(inv.time)
            continue
        sid = comp.value
        if type(sid) is not str or sid in made:
            return None
        made[sid] = (inv.time, comp.time)
    # each id's block: just before the smallest listing that shows it
    sizes = sorted({len(v) for _, _, v in listings})
    rank = {size: j for j, size in enumerate(sizes)}
    first: dict[Any, int] = {}
    orphans: list[tuple[int, str]] = []  # ids listed that no acknowledged snapshot returned
    for _, _, value in sorted(listings, key=lambda x: len(x[2])):
        j = rank[len(value)]
        for sid in value:
            if sid not in first:
                first[sid] = j
                if sid not in made:
                    orphans.append((j, sid))
    if len(orphans) > len(unknown):
        return None
    # the snapshots of unknown outcome made them: the earliest invoked, the earliest needed
    # (the others never took effect, which the model allows)
    for (_, sid), lo in zip(sorted(orphans), sorted(unknown), strict=False):
        made[sid] = (lo, INF)
    last = 2 * len(sizes)
    order: list[Step] = []
    for seq, (sid, (lo, hi)) in enumerate(made.items()):
        listed = first.get(sid)
        order.append((last if listed is None else 2 * listed, hi, lo, seq, False, sid))
    for seq, (lo, hi, value) in enumerate(listings, start=len(made)):
        order.append((2 * rank[len(value)] + 1, hi, lo, seq, True, value))
    order.sort()
    return order
