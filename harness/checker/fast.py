"""The fast checker: sound per-session invariants in (near) linear time.

Sound means: no violation on any history a correct store (atomic appends, snapshots and
rollbacks, unique turns) can produce, whatever the concurrency, crashes and unknown
outcomes. It is not complete: :mod:`harness.checker.exact` decides the rest.

Per session, after pairing (:mod:`~harness.checker.ops`):

1. index the appends by token (:mod:`~harness.checker.turns`);
2. the order tree (:mod:`~harness.checker.order_tree`): reads, in completion order, form
   a tree of turns; each turn new to the tree is checked once (provenance, role, real-time
   order);
3. the required turns (:mod:`~harness.checker.required`): turns each read must or must not
   contain, rollbacks considered;
4. reads that disagree with the tree (:mod:`~harness.checker.conflicts`), and the
   checkpoints (:mod:`~harness.checker.checkpoints`).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from harness.checker.checkpoints import check_checkpoints
from harness.checker.conflicts import report_conflicts
from harness.checker.evidence import Evidence
from harness.checker.ops import SessionOps, group_by_session
from harness.checker.order_tree import OrderTree
from harness.checker.required import RequiredTurns
from harness.checker.result import CheckResult
from harness.checker.rollbacks import RollbackIndex
from harness.checker.setup import KIND as SETUP_RACE
from harness.checker.setup import setup_race
from harness.checker.turns import LazyIndexes, OwnerLookup, Owners, TurnIndex
from harness.history import Event, gc_paused

if TYPE_CHECKING:
    from harness.checker.exact import Prover

__all__ = ["check_fast", "check_sessions", "judge_session"]


def check_fast(events: Sequence[Event], flagged: set[str] | None = None,
               prover: Prover | None = None) -> CheckResult:
    """Check a merged history with the fast checker; the name of every session with a
    violation (its evidence kept or not) is added to ``flagged`` if given. With a
    ``prover``, a session without rollbacks is first proven on its raw pairs if it can be
    (the fast rules, being sound, would pass it: they are skipped), and every session the
    fast rules find nothing in is then decided exactly
    (:class:`harness.checker.exact.Prover`), in the same pass.

    >>> check_fast([]).valid
    True
    """
    t0 = time.perf_counter()
    # The checker allocates millions of small acyclic objects and frees them all at the
    # end; generational GC passes over a heap of millions of events would double its time.
    with gc_paused():
        sessions, n_ops = group_by_session(events)
        found = Evidence()
        stats = check_sessions(sessions, found, prover)
        for e in events:  # after every session, as the streaming checker finds them
            race = setup_race(e) if e.f == "open" else None
            if race is not None:
                found.add(SETUP_RACE, None, race[0], race[1], [e])
        stats.update(violations_total=found.count(), violations_by_kind=dict(found.totals))
        if flagged is not None:
            flagged.update(s for s in found.sessions if s is not None)
        # Free the per-session pairs while GC is still off: re-enabled with millions of
        # them alive, its first young-generation pass would walk every one.
        del sessions
    stats.update(
        checker="fast" if prover is None else "fast+exact",
        events=len(events),
        ops=n_ops,
        seconds=round(time.perf_counter() - t0, 6),
    )
    return CheckResult(valid=found.count() == 0, violations=found.violations(), stats=stats,
                       totals=dict(found.totals))


def check_sessions(sessions: dict[str, SessionOps], found: Evidence,
                   prover: Prover | None = None) -> dict[str, Any]:
    """Run the fast checks over grouped sessions into ``found`` (and the ``prover`` on each
    session they pass); returns the stats."""
    indexes = LazyIndexes(sessions)
    owners = Owners(indexes)
    ambiguous = 0
    conflicts = 0
    for name, so in sessions.items():
        # a session the prover proves before them (its raw pairs, the chain or a short
        # search) is one the fast rules pass, since they are sound: they run on the
        # others, and explain what is wrong
        if prover is not None and prover.prove_first(so):
            continue
        before = found.count()
        amb, conf = judge_session(so, indexes[name], owners, found)
        ambiguous += amb
        conflicts += conf
        if prover is not None and found.count() == before:
            prover.judge(so, found)
    stats: dict[str, Any] = {
        "sessions": len(sessions),
        "ambiguous_sessions": ambiguous,
        "read_conflicts": conflicts,
        "violations_total": found.count(),
        "violations_by_kind": dict(found.totals),
    }
    if prover is not None:
        stats["exact"] = prover.stats()
    return stats


def judge_session(so: SessionOps, turns: TurnIndex, owners: OwnerLookup, found: Evidence) -> tuple[int, int]:
    """Run the fast checks of one session into ``found`` (the batch and the streaming
    checker share it); returns ``(1 if ambiguous else 0, read conflicts)``."""
    tree = OrderTree(so.session, turns, owners, found)
    tree.build(so.reads)
    ambiguous = conflicts = 0
    if turns.ambiguous:
        ambiguous = 1
    else:
        rbi = RollbackIndex(so.rollbacks, so.snapshots, so.lists) if so.rollbacks else None
        RequiredTurns(so.session, tree, rbi, found).check()
        conflicts = len(tree.conflicts)
        report_conflicts(tree, found)
    check_checkpoints(so, found)
    return ambiguous, conflicts
