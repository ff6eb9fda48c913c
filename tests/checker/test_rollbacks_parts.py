"""A session's rollbacks indexed by time (harness.checker.rollbacks.RollbackIndex), part by
part, on literal sessions: which rollbacks it keeps (ok, of unknown outcome, or dropped
because no snapshot can have their id), the ids snapshots created or listings showed, the
snapshot of a rollback's target, and which rollbacks can be the last before an observation
(``candidates``, ``epoch``, ``last_hi_before``), each boundary (equal times) on both sides.

Histories are built with tests.checker.builder.H: event ``i`` is at time ``10 * (i + 1)``
unless ``same_time``; a rollback is shown as ``(lo, hi, target)``."""

from __future__ import annotations

from harness.checker.ops import INF, NEG, SessionOps, group_by_session
from harness.checker.rollbacks import Rollback, RollbackIndex
from tests.checker.builder import H


def so_of(h: H) -> SessionOps:
    (so,) = group_by_session(h.events)[0].values()
    return so


def index(h: H) -> RollbackIndex:
    so = so_of(h)
    return RollbackIndex(so.rollbacks, so.snapshots, so.lists)


def brief(rbs: list[Rollback]) -> list[tuple[int, int, str | None]]:
    return [(lo, hi, target) for lo, hi, target, _, _ in rbs]


# -- what is kept ---------------------------------------------------------------------------------


def test_ok_rollbacks_and_those_of_unknown_outcome_are_kept_failed_ones_not() -> None:
    h = H()
    h.snapshot(0, "s", "x")  # 10-20
    h.rollback(1, "s", "x")  # 30-40
    h.inv(1, "rollback", "s", "x")  # 50
    h.fail(1)  # 60
    h.inv(1, "rollback", "s", "x")  # 70
    h.info(1)  # 80
    h.inv(2, "rollback", "s", "x")  # 90, never completes
    h.crash(2)
    rbi = index(h)
    assert brief(rbi.ok) == [(30, 40, "x")]
    assert brief(rbi.maybe) == [(70, INF, "x"), (90, INF, "x")]
    so = so_of(h)
    assert rbi.ok[0][3:] == so.rollbacks[0]
    assert rbi.maybe[0][3:] == so.rollbacks[2] and rbi.maybe[1][3] is so.rollbacks[3][0]
    assert rbi.maybe[1][4] is None
    assert bool(rbi)


def test_kept_rollbacks_are_sorted_by_invocation() -> None:
    h = H()
    h.snapshot(0, "s", "x")  # 10-20
    h.inv(1, "rollback", "s", "x")  # 30
    h.inv(2, "rollback", "s", "x")  # 40
    h.inv(3, "rollback", "s", "x")  # 50
    h.inv(4, "rollback", "s", "x")  # 60
    h.ok(2)  # 70
    h.info(4)  # 80
    h.ok(1)  # 90
    h.info(3)  # 100
    rbi = index(h)
    assert brief(rbi.ok) == [(30, 90, "x"), (40, 70, "x")]
    assert brief(rbi.maybe) == [(50, INF, "x"), (60, INF, "x")]


def test_a_rollback_with_no_string_target_is_kept_with_none() -> None:
    h = H()
    h.inv(1, "rollback", "s", 5)
    h.ok(1)
    h.inv(1, "rollback", "s", None)
    h.info(1)
    rbi = index(h)
    assert brief(rbi.ok) == [(10, 20, None)]
    assert brief(rbi.maybe) == [(30, INF, None)]
    assert rbi.snapshot_of(rbi.ok[0]) is None


def test_an_unknown_rollback_to_an_id_nobody_can_have_made_did_nothing() -> None:
    h = H()
    h.snapshot(0, "s", "x")  # 10-20
    h.inv(0, "snapshot", "s")  # 30
    h.fail(0)  # 40: a failed snapshot makes no id
    h.inv(1, "rollback", "s", "nope")  # 50
    h.info(1)  # 60
    h.inv(1, "rollback", "s", "x")  # 70: x exists
    h.info(1)  # 80
    h.rollback(2, "s", "nope")  # 90-100: it succeeded, so it is kept
    rbi = index(h)
    assert brief(rbi.maybe) == [(70, INF, "x")]
    assert brief(rbi.ok) == [(90, 100, "nope")]


def test_an_unknown_rollback_to_a_listed_id_is_kept() -> None:
    h = H()
    h.list(0, "s", ["w", "y"])  # 10-20
    h.inv(0, "list_snapshots", "s")  # 30
    h.ok(0, ["z", ["junk"]])  # 40: unhashable junk (an unreadable listing): the ids before it count
    h.inv(0, "list_snapshots", "s")  # 50
    h.ok(0, ("q",))  # 60: not a list
    h.inv(0, "list_snapshots", "s")  # 70
    h.fail(0)  # 80
    for sid in ("y", "z", "q", "nope", "w"):
        h.inv(1, "rollback", "s", sid)
        h.info(1)
    rbi = index(h)
    assert [t for _, _, t in brief(rbi.maybe)] == ["y", "z", "w"]
    assert RollbackIndex._listed(so_of(h).lists) == {"w", "y", "z"}


def test_the_junk_of_a_listing_does_not_hide_its_ids_that_came_before() -> None:
    h = H()
    h.list(0, "s", ["a", {"b": 1}, "c"])
    assert RollbackIndex._listed(so_of(h).lists) == {"a"}


def test_a_listing_of_unknown_outcome_shows_nothing() -> None:
    h = H()
    h.inv(0, "list_snapshots", "s")
    h.info(0)
    h.inv(0, "list_snapshots", "s")
    h.crash(0)
    assert RollbackIndex._listed(so_of(h).lists) == set()


def test_an_unknown_rollback_is_kept_once_a_snapshot_of_unknown_outcome_may_have_made_its_id() -> None:
    for end in ("info", "crash"):
        h = H()
        h.inv(0, "snapshot", "s")
        if end == "info":
            h.info(0)
        else:
            h.crash(0)
        h.inv(1, "rollback", "s", "nope")
        h.info(1)
        assert brief(index(h).maybe) == [(30, INF, "nope")] if end == "info" else [(20, INF, "nope")], end


def test_the_ids_and_the_first_snapshot_of_unknown_outcome() -> None:
    h = H()
    h.snapshot(0, "s", "x")  # 10-20
    h.inv(0, "snapshot", "s")  # 30
    h.ok(0, 7)  # 40: not an id: unknown, from 30
    h.inv(1, "snapshot", "s")  # 50
    h.fail(1)  # 60
    h.inv(2, "snapshot", "s")  # 70
    h.info(2)  # 80
    h.snapshot(0, "s", "y")  # 90-100
    assert RollbackIndex._ids(so_of(h).snapshots) == ({"x", "y"}, 30)
    h2 = H()
    h2.snapshot(0, "s", "x")
    h2.inv(0, "snapshot", "s")
    h2.fail(0)
    assert RollbackIndex._ids(so_of(h2).snapshots) == ({"x"}, INF)
    h3 = H()
    h3.inv(0, "snapshot", "s")  # 10
    h3.inv(1, "snapshot", "s")  # 20
    h3.info(1)
    h3.info(0)
    assert RollbackIndex._ids(so_of(h3).snapshots) == (set(), 10)


def test_an_empty_index_is_false() -> None:
    h = H()
    h.snapshot(0, "s", "x")
    h.inv(1, "rollback", "s", "x")
    h.fail(1)
    rbi = index(h)
    assert not rbi and rbi.ok == [] and rbi.maybe == []
    h2 = H()
    h2.inv(1, "rollback", "s", "x")
    h2.info(1)
    h2.inv(0, "snapshot", "s")
    h2.info(0)
    assert bool(index(h2))  # only one of unknown outcome


# -- the snapshots of targets ---------------------------------------------------------------------


def test_the_snapshot_of_a_target_is_the_one_ok_snapshot_that_returned_it() -> None:
    h = H()
    h.snapshot(0, "s", "x")  # events 0, 1
    h.snapshot(0, "s", "y")  # 2, 3
    h.snapshot(0, "s", "y")  # 4, 5: y returned twice, no one snapshot of it
    h.snapshot(0, "s", "y")  # 6, 7
    h.inv(0, "snapshot", "s")
    h.ok(0, 7)
    h.rollback(1, "s", "x")
    h.rollback(1, "s", "y")
    h.rollback(1, "s", "z")
    rbi = index(h)
    so = so_of(h)
    assert rbi.snaps == {"x": so.snapshots[0]}
    assert [rbi.snapshot_of(rb) for rb in rbi.ok] == [so.snapshots[0], None, None]


# -- which rollbacks can be the last before an observation ------------------------------------------


def chain() -> RollbackIndex:
    """Three ok rollbacks, 10-20, 30-40 and 50-100 (the longest, 50), and one of unknown
    outcome invoked at 60."""
    h = H()
    h.rollback(1, "s", "a")  # 10-20
    h.rollback(1, "s", "b")  # 30-40
    h.inv(2, "rollback", "s", "c")  # 50
    h.inv(3, "rollback", "s", "d")  # 60
    h.info(3)  # 70
    h.inv(3, "snapshot", "s")  # 80
    h.info(3)  # 90: any id may exist
    h.ok(2)  # 100
    return index(h)


def test_the_latest_completion_before_a_time() -> None:
    rbi = chain()
    assert [rbi.last_hi_before(t) for t in (5, 20, 21, 40, 41, 100, 101)] == [NEG, NEG, 20, 20, 40, 40, 100]
    assert rbi._maxdur == 50


def test_an_observation_before_every_rollback_has_none() -> None:
    rbi = chain()
    assert rbi.candidates(1, 5) == (NEG, [])
    assert rbi.candidates(1, 9)[1] == []


def test_an_observation_overlapping_the_first_rollback_may_follow_it_or_not() -> None:
    rbi = chain()
    z, out = rbi.candidates(1, 10)  # completed at the instant the first rollback was invoked
    assert (z, brief(out)) == (NEG, [(10, 20, "a")])
    z, out = rbi.candidates(20, 25)  # invoked at the instant it completed
    assert (z, brief(out)) == (NEG, [(10, 20, "a")])


def test_a_rollback_that_completed_before_the_observation_was_invoked_sets_z() -> None:
    rbi = chain()
    z, out = rbi.candidates(21, 29)
    assert (z, brief(out)) == (10, [(10, 20, "a")])
    z, out = rbi.candidates(41, 45)  # after b: a certainly precedes b, only b is a candidate
    assert (z, brief(out)) == (30, [(30, 40, "b")])


def test_every_rollback_not_certainly_followed_by_another_before_the_observation() -> None:
    rbi = chain()
    z, out = rbi.candidates(41, 200)
    assert (z, brief(out)) == (30, [(50, 100, "c"), (30, 40, "b"), (60, INF, "d")])
    z, out = rbi.candidates(101, 200)  # after c completed: z is c's invocation
    assert (z, brief(out)) == (50, [(50, 100, "c"), (60, INF, "d")])
    z, out = rbi.candidates(41, 59)  # d invoked after the observation completed
    assert (z, brief(out)) == (30, [(50, 100, "c"), (30, 40, "b")])
    z, out = rbi.candidates(41, 60)  # d invoked at the instant it completed
    assert (z, brief(out)) == (30, [(50, 100, "c"), (30, 40, "b"), (60, INF, "d")])


def test_a_long_rollback_invoked_before_z_is_still_a_candidate() -> None:
    """b (0-100) overlaps c (40-50); an observation invoked after c completed may follow b
    (b may have taken effect after c). z = 40, b's invocation is 0 < z, but its completion is
    not before z."""
    h = H()
    h.inv(1, "rollback", "s", "b")  # 10
    h.inv(2, "rollback", "s", "c")  # 20
    h.ok(2)  # 30
    h.rollback(3, "s", "a")  # 40-50
    h.ok(1)  # 60
    rbi = index(h)
    assert rbi._maxdur == 50
    z, out = rbi.candidates(61, 70)
    assert (z, brief(out)) == (40, [(40, 50, "a"), (10, 60, "b")])
    z, out = rbi.candidates(51, 55)
    assert (z, brief(out)) == (40, [(40, 50, "a"), (10, 60, "b")])


def test_a_rollback_ending_at_the_instant_z_begins_is_a_candidate() -> None:
    """a (10-20), the longest, completes at the instant b is invoked (20): a does not
    certainly precede b, so after b an observation may still follow a."""
    h = H()
    h.inv(1, "rollback", "s", "a")  # 10
    h.ok(1)  # 20
    h.inv(2, "rollback", "s", "b", same_time=True)  # 20
    h.ok(2)  # 30
    rbi = index(h)
    assert rbi._maxdur == 10
    z, out = rbi.candidates(31, 40)
    assert (z, brief(out)) == (20, [(20, 30, "b"), (10, 20, "a")])


def test_z_is_the_latest_invocation_among_the_rollbacks_completed_before() -> None:
    """a (10-60) and b (20-30): completed in the order b, a; the latest invocation is b's."""
    h = H()
    h.inv(1, "rollback", "s", "a")  # 10
    h.inv(2, "rollback", "s", "b")  # 20
    h.ok(2)  # 30
    h.inv(3, "rollback", "s", "c")  # 40
    h.ok(3)  # 50
    h.ok(1)  # 60
    rbi = index(h)
    z, out = rbi.candidates(61, 70)
    assert (z, brief(out)) == (40, [(40, 50, "c"), (10, 60, "a")])
    z, out = rbi.candidates(31, 35)
    assert (z, brief(out)) == (20, [(20, 30, "b"), (10, 60, "a")])


def test_epochs_are_equal_exactly_when_the_candidates_are() -> None:
    rbi = chain()
    assert rbi.epoch(1, 5) == (0, 0, 0)
    assert rbi.epoch(20, 30) == (0, 2, 0)  # invoked at a's completion: not yet past it
    assert rbi.epoch(21, 30) == (1, 2, 0)
    assert rbi.epoch(41, 50) == (2, 3, 0)  # c invoked at 50: counted
    assert rbi.epoch(41, 60) == (2, 3, 1)
    assert rbi.epoch(101, 200) == (3, 3, 1)
    h = H()
    h.rollback(1, "s", "a")
    only_ok = index(h)
    assert only_ok.epoch(1, 100) == (0, 1, 0)  # no rollback of unknown outcome: always 0


def test_rollbacks_invoked_at_one_instant_keep_their_order_of_completion() -> None:
    """Two ok rollbacks invoked and completed at the same instants (one with no string
    target), and two of unknown outcome invoked at one instant to the same id: sorted by
    invocation only, the order of completion kept among equals."""
    h = H()
    h.snapshot(0, "s", "x")  # 10-20
    h.inv(1, "rollback", "s", "x")  # 30
    h.inv(2, "rollback", "s", None, same_time=True)  # 30
    h.ok(1)  # 40
    h.ok(2, same_time=True)  # 40
    h.inv(3, "rollback", "s", "x")  # 50
    h.inv(4, "rollback", "s", "x", same_time=True)  # 50
    h.info(4)  # 60
    h.info(3)  # 70
    rbi = index(h)
    assert brief(rbi.ok) == [(30, 40, "x"), (30, 40, None)]
    assert brief(rbi.maybe) == [(50, INF, "x"), (50, INF, "x")]
    assert [rb[3].process for rb in rbi.maybe] == [4, 3]


def test_z_counts_the_rollbacks_completed_before_in_order_of_completion() -> None:
    """a (10-20), b (30-60) and c (40-50): c completes before b. An observation invoked at 55
    follows a and c certainly (z = 40, c's invocation), so a cannot be the last before it;
    b, still running, can."""
    h = H()
    h.rollback(1, "s", "a")  # 10-20
    h.inv(2, "rollback", "s", "b")  # 30
    h.rollback(3, "s", "c")  # 40-50
    h.ok(2)  # 60
    rbi = index(h)
    z, out = rbi.candidates(55, 70)
    assert (z, brief(out)) == (40, [(40, 50, "c"), (30, 60, "b")])
    assert [rbi.last_hi_before(t) for t in (55, 61)] == [50, 60]
    assert rbi.epoch(55, 70) == (2, 3, 0)
