"""Named shapes for the exact decision (harness.checker.chain, frontier, lazy), each as a
legal and an illegal variant, judged by the default check and by brute force.

Each shape is a few ops written out by hand: the variant that a correct store can produce
must pass (and be proven), the one it cannot must fail, and the brute-force oracle of
``test_bruteforce.py`` must say the same.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from harness.checker import check
from tests.checker.builder import H
from tests.checker.test_bruteforce import brute_force


def pairwise(legal: bool) -> H:
    """A read shows turn u but not a. Illegal when a was acknowledged before u's append
    was invoked (however late the read began); legal when a's append overlaps u's."""
    h = H()
    h.inv(2, "read", "s")
    h.inv(0, "append", "s", "a")
    if legal:
        h.inv(1, "append", "s", "u")
        h.ok(0)
    else:
        h.ok(0)
        h.inv(1, "append", "s", "u")
    h.ok(1)
    h.ok(2, ["u"])
    return h


def rollback_between(legal: bool) -> H:
    """A read shows [a]; a later read shows [u] without a. Legal only if a rollback (to a
    snapshot of the empty session) can come between the two reads."""
    h = H()
    h.snapshot(0, "s", "x")
    h.append(0, "s", "a")
    if legal:
        h.inv(1, "rollback", "s", "x")
        h.read(2, "s", ["a"])
        h.ok(1)
    else:
        h.rollback(1, "s", "x")
        h.read(2, "s", ["a"])
    h.append(0, "s", "u")
    h.read(2, "s", ["u"])
    return h


def one_snapshot_two_contents(legal: bool) -> H:
    """Two rollbacks to one snapshot, each followed by a read: the reads must show the
    same content (illegal: [a] then [a, b])."""
    h = H()
    h.append(0, "s", "a")
    h.snapshot(0, "s", "x")
    h.append(0, "s", "b")
    h.rollback(1, "s", "x")
    h.read(2, "s", ["a"])
    h.append(0, "s", "c")
    h.rollback(1, "s", "x")
    h.read(2, "s", ["a"] if legal else ["a", "b"])
    return h


def crashed_rollback_explains(legal: bool) -> H:
    """A read lacks an acknowledged turn. A rollback whose process crashed may have taken
    effect and explains it (legal); one that failed did not (illegal)."""
    h = H()
    h.snapshot(0, "s", "x")
    h.append(0, "s", "a")
    h.inv(1, "rollback", "s", "x")
    if legal:
        h.crash(1)
    else:
        h.fail(1, "OperationalError: database is locked")
    h.read(2, "s", [])
    return h


def overlapping_rollbacks(legal: bool) -> H:
    """Two rollbacks to two snapshots overlap; the read after both shows one snapshot's
    content (legal), or a content neither snapshot holds (illegal)."""
    h = H()
    h.append(0, "s", "a")
    h.snapshot(0, "s", "x")
    h.append(0, "s", "b")
    h.snapshot(0, "s", "y")
    h.inv(1, "rollback", "s", "x")
    h.inv(2, "rollback", "s", "y")
    h.ok(1)
    h.ok(2)
    h.read(3, "s", ["a"] if legal else [])
    return h


def pending_snapshot_pinned_by_listing(legal: bool) -> H:
    """A snapshot still in flight while an append lands; a listing invoked after that
    append was acknowledged does not show the id, which pins the snapshot after the
    append: a rollback to it must restore [a, b], not [a]."""
    h = H()
    h.append(0, "s", "a")
    h.inv(1, "snapshot", "s")
    h.append(0, "s", "b")
    h.list(3, "s", [])
    h.ok(1, "x")
    h.rollback(2, "s", "x")
    h.read(3, "s", ["a", "b"] if legal else ["a"])
    return h


def discarded_append(legal: bool) -> H:
    """An acknowledged append that no read shows, then a rollback that discards it: legal
    when the rollback may come after the append; illegal when the read after the rollback
    must also hold it (the rollback completed before the append was invoked)."""
    h = H()
    h.snapshot(0, "s", "x")
    if legal:
        h.append(0, "s", "a")
        h.rollback(1, "s", "x")
    else:
        h.rollback(1, "s", "x")
        h.append(0, "s", "a")
    h.read(2, "s", [])
    return h


SHAPES: dict[str, Callable[[bool], H]] = {
    "pairwise": pairwise,
    "rollback-between": rollback_between,
    "one-snapshot-two-contents": one_snapshot_two_contents,
    "crashed-rollback-explains": crashed_rollback_explains,
    "overlapping-rollbacks": overlapping_rollbacks,
    "pending-snapshot-pinned-by-listing": pending_snapshot_pinned_by_listing,
    "discarded-append": discarded_append,
}


@pytest.mark.parametrize("legal", [True, False], ids=["legal", "illegal"])
@pytest.mark.parametrize("name", sorted(SHAPES))
def test_shape(name: str, legal: bool) -> None:
    events = SHAPES[name](legal).events
    assert brute_force(events) is legal
    res = check(events)
    assert res.valid is legal, [v.message for v in res.violations]
    proof = res.proof()
    assert proof is not None and proof["proven"] is legal
    assert check(events, exact=True).valid is legal


def test_many_concurrent_rollbacks_are_decided() -> None:
    """The hard shape: eight rollbacks in flight at once over four snapshots, with reads
    in between; small enough for brute force, and the default check agrees with it."""
    h = H()
    for i in range(4):
        h.append(0, "s", f"t{i}")
        h.snapshot(0, "s", f"x{i}")
    for p in range(1, 9):
        h.inv(p, "rollback", "s", f"x{p % 4}")
    h.read(9, "s", ["t0", "t1", "t2"])
    for p in range(1, 9):
        h.ok(p)
    h.read(9, "s", ["t0", "t1"])
    res = check(h.events)
    assert res.valid is brute_force(h.events) is True
