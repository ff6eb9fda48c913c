"""Reads that disagree about what precedes a turn: which kind of violation each one is.

Two reads that both show turn ``t`` must show the same turns before it, in the same
order (see :mod:`harness.checker.order_tree`). When they do not, with ``O`` the read that
completed first and ``N`` the other, the evidence proves one of these, tried in order:

- a turn one read shows before ``t`` and the other after it, or the same turns before
  ``t`` in another order: ``reordered-turns``;
- ``O`` completed before ``N`` was invoked, ``O`` shows ``m`` before ``t`` and ``N`` shows
  ``t`` but no ``m`` anywhere: ``lost-turn`` (``m`` was in the session, then gone while
  ``t`` stayed);
- ``O`` completed before ``N`` was invoked, ``N`` shows ``c`` before ``t`` and ``O`` showed
  ``t`` with no ``c`` anywhere: ``back-dated-turn`` (``c`` was put behind a turn already
  visible; nothing is missing);
- the reads overlap in time, so neither came first: ``incompatible-order``.

:func:`classify` is a pure function of the two reads (a refuted session is explained by
the fast rules' sentences where they find one, so the shapes are named here only).
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass

from harness.checker.evidence import Evidence
from harness.checker.ops import describe, short
from harness.checker.order_tree import OrderTree
from harness.checker.turns import COMP, INV
from harness.history import Event

__all__ = ["Finding", "Side", "classify", "report_conflicts"]

#: ``(read invoke, read ok, its tokens, position of the disputed turn)``.
Side = tuple[Event, Event, Sequence[str], int]

#: Kinds that say where a turn sits: one problem per turn among them.
_PLACEMENT = ("back-dated-turn", "incompatible-order")


@dataclass(frozen=True, slots=True)
class Finding:
    """What two disagreeing reads prove: the kind, the dedup key, the sentence, the turns
    whose appends are evidence too, the reads' events, and the read to blame."""

    kind: str
    key: Hashable
    message: str
    turns: tuple[str, ...]
    reads: tuple[Event, ...]
    blame: Event


def report_conflicts(tree: OrderTree, found: Evidence) -> None:
    """Report each read that left the tree, unless a violation already blames it or the
    read that defined the disputed turn."""
    s = tree.session
    for rno, i, t in tree.conflicts:
        inv, comp, v = tree.obs[rno]
        node = tree.nodes[t]
        inv0, comp0, v0 = tree.obs[node[0]]
        if comp.index in found.blamed or comp0.index in found.blamed:
            continue
        old = (inv0, comp0, [x[1] for x in v0], node[1])
        new = (inv, comp, [x[1] for x in v], i)
        f = classify(s, old, new, t)
        if f is None or (f.kind in _PLACEMENT and any(found.has(k, s, f.key) for k in _PLACEMENT)):
            continue
        evs: list[Event | None] = []
        for x in f.turns:
            rec = tree.turns.recs.get(x)
            if rec is not None:
                evs += [rec[INV], rec[COMP]]
        found.add(f.kind, s, f.key, f.message, [*evs, *f.reads], blame=f.blame)


def classify(session: str, old: Side, new: Side, t: str) -> Finding | None:
    """What reads ``old`` and ``new`` (which completed no earlier) prove by disagreeing on
    the turns before ``t``; None if they do not disagree."""
    pe, pn = list(old[2][: old[3]]), list(new[2][: new[3]])
    if pe == pn:
        return None
    se, sn = set(pe), set(pn)
    lack_new = [x for x in pe if x not in sn]
    lack_old = [x for x in pn if x not in se]
    after_new, after_old = set(new[2][new[3] + 1 :]), set(old[2][old[3] + 1 :])
    m = next((x for x in lack_new if x in after_new), None)
    if m is not None:
        return _reordered(session, old, new, m, t)
    c = next((x for x in lack_old if x in after_old), None)
    if c is not None:
        return _reordered(session, new, old, c, t)
    if not lack_new and not lack_old:
        j = next((j for j, (x, y) in enumerate(zip(pe, pn, strict=False)) if x != y), None)
        return None if j is None else _reordered(session, old, new, pe[j], pn[j])
    if old[1].time < new[0].time:
        if lack_new:
            return _lost(session, old, new, lack_new[0], t)
        return _back_dated(session, old, new, lack_old[0], t)
    return _incompatible(session, old, new, lack_new, lack_old, t)


def _reads(one: Side, two: Side) -> tuple[Event, ...]:
    return (one[0], one[1], two[0], two[1])


def _lost(session: str, old: Side, new: Side, m: str, t: str) -> Finding:
    """``old`` (which completed before ``new`` began) shows ``m`` before ``t``; ``new``
    shows ``t`` and no ``m``."""
    return Finding(
        "lost-turn",
        m,
        f"Turn {short(m)} precedes turn {short(t)} in the read by {describe(old[1])}, "
        f"which completed before the read by {describe(new[1])} was invoked (event "
        f"{new[0].index}), but that later read shows {short(t)} and not {short(m)}: a turn "
        f"that preceded {short(t)} cannot leave while {short(t)} stays, rollbacks included.",
        (m, t),
        _reads(old, new),
        new[1],
    )


def _back_dated(session: str, old: Side, new: Side, c: str, t: str) -> Finding:
    """``old`` (which completed before ``new`` began) shows ``t`` and no ``c``; ``new``
    shows ``c`` before ``t``."""
    return Finding(
        "back-dated-turn",
        c,
        f"The read by {describe(new[1])} shows turn {short(c)} before turn {short(t)}, but "
        f"the read by {describe(old[1])}, which completed before that one was invoked (event "
        f"{new[0].index}), showed {short(t)} without {short(c)}: {short(c)} was put behind a "
        f"turn that was already visible in session {session!r}.",
        (c, t),
        _reads(old, new),
        new[1],
    )


def _incompatible(
    session: str, old: Side, new: Side, lack_new: list[str], lack_old: list[str], t: str
) -> Finding:
    """The reads overlap in time: neither a lost nor a back-dated turn is proven."""
    if lack_old:
        x, has, lacks = lack_old[0], new, old
    else:
        x, has, lacks = lack_new[0], old, new
    return Finding(
        "incompatible-order",
        x,
        f"The reads by {describe(old[1])} and {describe(new[1])}, which overlap in time, "
        f"disagree on the turns before turn {short(t)}: the read by {describe(has[1])} shows "
        f"{short(x)} there and the read by {describe(lacks[1])} does not show {short(x)} at "
        f"all, so no single order of session {session!r} gives both (either {short(x)} was "
        f"put behind {short(t)} after one read, or lost after the other).",
        (x, t),
        _reads(old, new),
        new[1],
    )


def _reordered(session: str, one: Side, two: Side, a: str, b: str) -> Finding:
    """``one`` shows ``a`` before ``b``; ``two`` shows ``b`` before ``a``."""
    later = two if two[1].index > one[1].index else one
    return Finding(
        "reordered-turns",
        (min(a, b), max(a, b)),
        f"The read by {describe(one[1])} shows turn {short(a)} before {short(b)}, but the "
        f"read by {describe(two[1])} shows {short(b)} before {short(a)}.",
        (a, b),
        _reads(one, two),
        later[1],
    )
