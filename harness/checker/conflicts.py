"""Reads that disagree about what precedes a turn: which kind of violation each one is.

Two reads that both show turn ``t`` must show the same turns before it, in the same
order (see :mod:`harness.checker.paths`). When they do not:

- same turns, another order: ``reordered-turns``;
- one read lacks a turn ``m`` the other shows before ``t``: if it shows ``m`` *after*
  ``t``, ``reordered-turns``; otherwise ``lost-turn`` (``m`` was in the session when ``t``
  was appended, so every state holding ``t`` holds ``m``);
- each lacks a turn the other has: ``lost-turn``, both reads cited.
"""

from __future__ import annotations

from harness.checker.evidence import Reporter
from harness.checker.ops import describe, short
from harness.checker.paths import PathTree
from harness.checker.turns import COMP, INV
from harness.history import Event

__all__ = ["report_conflicts"]

#: ``(read invoke, read ok, its tokens, position of the disputed turn)``.
_Side = tuple[Event, Event, list[str], int]


def report_conflicts(tree: PathTree, rep: Reporter) -> None:
    """Report each read that left the tree, unless a violation already blames it or the
    read that defined the disputed turn."""
    for rno, i, t in tree.conflicts:
        inv, comp, v = tree.obs[rno]
        node = tree.nodes[t]
        inv0, comp0, v0 = tree.obs[node[0]]
        if comp.index in rep.blamed or comp0.index in rep.blamed:
            continue
        old = (inv0, comp0, [x[1] for x in v0], node[1])
        new = (inv, comp, [x[1] for x in v], i)
        _classify(tree, rep, old, new, t)


def _classify(tree: PathTree, rep: Reporter, old: _Side, new: _Side, t: str) -> None:
    pe, pn = old[2][: old[3]], new[2][: new[3]]
    se, sn = set(pe), set(pn)
    lack_new = [x for x in pe if x not in sn]
    lack_old = [x for x in pn if x not in se]
    if not lack_new and not lack_old:
        j = next(j for j in range(len(pe)) if pe[j] != pn[j])
        _reordered(tree, rep, old, new, pe[j], pn[j])
    elif not lack_old:
        _missing(tree, rep, old, new, lack_new[0], t)
    elif not lack_new:
        _missing(tree, rep, new, old, lack_old[0], t)
    else:
        m, m2 = lack_new[0], lack_old[0]
        s = tree.session
        rep.add(
            "lost-turn",
            s,
            m,
            f"The reads by {describe(old[1])} and {describe(new[1])} disagree on the turns "
            f"before turn {short(t)}: the first shows {short(m)} there and the second does "
            f"not, while the second shows {short(m2)} there and the first does not.",
            [*_append(tree, m), *_append(tree, m2), old[0], old[1], new[0], new[1]],
            blame=new[1],
        )


def _missing(tree: PathTree, rep: Reporter, has: _Side, lacks: _Side, m: str, t: str) -> None:
    """``has`` shows ``m`` before ``t``; ``lacks`` shows ``t`` without ``m`` before it."""
    after = lacks[2][lacks[3] + 1 :]
    if m in after:
        _reordered(tree, rep, has, lacks, m, t)
        return
    rep.add(
        "lost-turn",
        tree.session,
        m,
        f"Turn {short(m)} precedes turn {short(t)} in the read by {describe(has[1])}, so it "
        f"was in session {tree.session!r} when {short(t)} was appended, but the read by "
        f"{describe(lacks[1])} shows {short(t)} without it.",
        [*_append(tree, m), *_append(tree, t), has[0], has[1], lacks[0], lacks[1]],
        blame=lacks[1],
    )


def _reordered(tree: PathTree, rep: Reporter, one: _Side, two: _Side, a: str, b: str) -> None:
    """``one`` shows ``a`` before ``b``; ``two`` shows ``b`` before ``a``."""
    rep.add(
        "reordered-turns",
        tree.session,
        (min(a, b), max(a, b)),
        f"The read by {describe(one[1])} shows turn {short(a)} before {short(b)}, but the "
        f"read by {describe(two[1])} shows {short(b)} before {short(a)}.",
        [*_append(tree, a), *_append(tree, b), one[0], one[1], two[0], two[1]],
        blame=two[1],
    )


def _append(tree: PathTree, t: str) -> list[Event | None]:
    rec = tree.turns.recs.get(t)
    return [] if rec is None else [rec[INV], rec[COMP]]
