"""Literal histories for every violation kind: each positive case must be reported with the
right kind and evidence, each negative case (a history a correct store can produce) must
not be reported at all. Both checkers run on every case."""

from __future__ import annotations

import pytest

from harness.checker import check
from harness.checker.exact import check_exact
from harness.checker.result import CheckResult
from tests.checker.builder import H


def kinds(h: H) -> dict[str, int]:
    return check(h.events).counts()


def assert_valid(h: H) -> None:
    fast = check(h.events)
    assert fast.valid, [v.message for v in fast.violations]
    assert check_exact(h.events, budget_s=10).valid is True


def assert_kind(h: H, kind: str) -> CheckResult:
    res = check(h.events)
    assert res.counts() == {kind: 1}, [(v.kind, v.message) for v in res.violations]
    assert check_exact(h.events, budget_s=10).valid is False
    v = res.violations[0]
    assert v.message.endswith(".") and "\n" not in v.message
    assert [e.index for e in v.events] == sorted(e.index for e in v.events)
    return res


# -- lost-turn ---------------------------------------------------------------------------------


def test_lost_turn_acknowledged_then_missing() -> None:
    h = H()
    h.append(0, "s", "a")
    h.append(1, "s", "b")
    h.read(0, "s", ["a"])
    res = assert_kind(h, "lost-turn")
    v = res.violations[0]
    assert {e.index for e in v.events} == {2, 3, 4, 5}  # b's invoke+ok, the read's invoke+ok
    assert "'b'" in v.message and "process 1 at event 3" in v.message
    assert "no rollback" in v.message


def test_stale_read_even_if_the_turn_shows_up_later() -> None:
    h = H()
    h.append(0, "s", "a")
    h.read(1, "s", [])
    h.read(1, "s", ["a"])
    assert_kind(h, "lost-turn")


def test_lost_turn_seen_by_a_read_then_gone() -> None:
    h = H()
    h.inv(0, "append", "s", "a")
    h.info(0)  # outcome unknown...
    h.read(1, "s", ["a"])  # ...but a read saw it
    h.read(2, "s", [])
    res = assert_kind(h, "lost-turn")
    assert "seen by the read" in res.violations[0].message


def test_lost_turn_by_disagreeing_reads() -> None:
    h = H()
    h.inv(0, "append", "s", "a")
    h.inv(1, "append", "s", "b")
    h.read(2, "s", ["a", "b"])
    h.read(3, "s", ["b"])  # later: b without a, yet a preceded b in an earlier read
    h.ok(0)
    h.ok(1)
    assert_kind(h, "lost-turn")


# -- back-dated-turn and incompatible-order -----------------------------------------------------


def back_dated(overlap: bool) -> H:
    """read 1 = [a, b]; read 2 = [a, c, b]: c committed late, ordered by an early stamp."""
    h = H()
    h.append(0, "s", "a")
    h.inv(2, "append", "s", "c")  # its sort key drawn now, before the lock wait
    h.append(1, "s", "b")
    if overlap:
        h.inv(4, "read", "s")
    h.read(3, "s", ["a", "b"])
    h.ok(2)
    if overlap:
        h.ok(4, ["a", "c", "b"])
    else:
        h.read(4, "s", ["a", "c", "b"])
    return h


def test_back_dated_turn() -> None:
    res = assert_kind(back_dated(overlap=False), "back-dated-turn")
    v = res.violations[0]
    assert "'c'" in v.message and "lost" not in v.message
    exact = check_exact(back_dated(overlap=False).events, budget_s=10)
    assert exact.counts() == {"back-dated-turn": 1}, [v.message for v in exact.violations]


def test_overlapping_reads_in_incompatible_order() -> None:
    res = assert_kind(back_dated(overlap=True), "incompatible-order")
    assert "overlap" in res.violations[0].message
    exact = check_exact(back_dated(overlap=True).events, budget_s=10)
    assert exact.counts() == {"incompatible-order": 1}


def test_incompatible_order_when_each_read_lacks_a_turn() -> None:
    h = H()
    h.inv(0, "append", "s", "a")
    h.inv(1, "append", "s", "b")
    h.inv(2, "read", "s")
    h.inv(3, "read", "s")
    h.ok(0)
    h.ok(1)
    h.ok(2, ["a", "b"])
    h.ok(3, ["b"])  # overlapping reads: a back-dated or a lost, the history cannot tell
    assert_kind(h, "incompatible-order")


def test_no_lost_turn_for_a_read_concurrent_with_the_append() -> None:
    h = H()
    h.inv(0, "append", "s", "a")
    h.read(1, "s", [])
    h.ok(0)
    h.read(1, "s", ["a"])
    assert_valid(h)


def test_crash_mid_append_is_neither_lost_nor_phantom() -> None:
    h = H()
    h.inv(0, "append", "s", "a")
    h.crash(0)  # never completes
    h.inv(5, "append", "s", "b")
    h.info(5)
    h.read(1, "s", ["a"])  # a took effect, b did not (yet): both fine
    h.fault("kill", 0)
    h.read("final", "s", ["a"])
    assert_valid(h)


def test_rollback_explains_a_missing_turn() -> None:
    h = H()
    h.append(0, "s", "a")
    h.snapshot(0, "s", "x")
    h.append(1, "s", "b")
    h.rollback(0, "s", "x")
    h.read(1, "s", ["a"])
    assert_valid(h)


def test_rollback_with_unknown_outcome_may_explain_a_missing_turn() -> None:
    h = H()
    h.append(0, "s", "a")
    h.snapshot(0, "s", "x")
    h.append(1, "s", "b")
    h.inv(0, "rollback", "s", "x")
    h.crash(0)
    h.read(1, "s", ["a"])
    assert_valid(h)


def test_rollback_before_the_append_does_not_explain() -> None:
    h = H()
    h.snapshot(0, "s", "x")
    h.rollback(0, "s", "x")
    h.append(1, "s", "b")
    h.read(1, "s", [])
    res = assert_kind(h, "lost-turn")
    assert "completed before the turn was there" in res.violations[0].message


# -- bad-rollback ------------------------------------------------------------------------------


def _ab_snapshot_c() -> H:
    h = H()
    h.append(0, "s", "a")
    h.append(0, "s", "b")
    h.snapshot(0, "s", "x")
    h.append(1, "s", "c")
    return h


def test_reader_sees_the_session_empty_mid_rollback() -> None:
    h = _ab_snapshot_c()
    h.inv(0, "rollback", "s", "x")
    h.read(1, "s", [])
    h.ok(0)
    res = assert_kind(h, "bad-rollback")
    assert "snapshot 'x'" in res.violations[0].message


def test_rollback_restores_the_wrong_contents() -> None:
    h = _ab_snapshot_c()
    h.rollback(0, "s", "x")
    h.read(1, "s", ["a"])
    assert_kind(h, "bad-rollback")


def test_rollback_that_leaves_later_turns_behind() -> None:
    h = _ab_snapshot_c()
    h.rollback(0, "s", "x")
    h.read(1, "s", ["a", "b", "c"])
    res = assert_kind(h, "bad-rollback")
    assert "should have removed it" in res.violations[0].message


def test_rollback_to_an_id_nobody_created() -> None:
    h = H()
    h.append(0, "s", "a")
    h.rollback(0, "s", "ghost")
    assert_kind(h, "bad-rollback")


def test_reads_around_a_concurrent_rollback_see_before_or_after() -> None:
    h = _ab_snapshot_c()
    h.inv(0, "rollback", "s", "x")
    h.read(1, "s", ["a", "b", "c"])  # before it took effect
    h.read(2, "s", ["a", "b"])  # after
    h.ok(0)
    h.append(1, "s", "d")
    h.read(2, "s", ["a", "b", "d"])
    assert_valid(h)


# -- vanished-checkpoint -----------------------------------------------------------------------


def test_acknowledged_snapshot_missing_from_a_later_listing() -> None:
    h = H()
    h.snapshot(0, "s", "x")
    h.snapshot(0, "s", "y")
    h.rollback(1, "s", "x")
    h.list(1, "s", ["x"])
    res = assert_kind(h, "vanished-checkpoint")
    assert "'y'" in res.violations[0].message


def test_vanished_id_was_known_from_a_listing_before_its_snapshot_returned() -> None:
    # the sentence names what made the id known first: here the listing, not the snapshot
    # that returned after the later listing had already gone by
    h = H()
    h.inv(0, "snapshot", "s")
    h.list(1, "s", ["x"])
    h.list(1, "s", [])
    h.ok(0, "x")
    res = assert_kind(h, "vanished-checkpoint")
    v = res.violations[0]
    shown_first = next(e for e in v.events if e.f == "list_snapshots" and e.value == ["x"])
    assert f"known since process 1 at event {shown_first.index}," in v.message


def test_rollback_to_an_acknowledged_snapshot_not_found() -> None:
    h = H()
    h.snapshot(0, "s", "x")
    h.inv(1, "rollback", "s", "x")
    h.fail(1, "SnapshotNotFound: x")
    assert_kind(h, "vanished-checkpoint")


def test_snapshot_id_returned_twice() -> None:
    h = H()
    h.append(0, "s", "a")
    h.snapshot(0, "s", "x")
    h.snapshot(1, "s", "x")
    res = assert_kind(h, "reused-snapshot-id")
    assert "overwr" not in res.violations[0].message
    assert check_exact(h.events, budget_s=10).counts() == {"reused-snapshot-id": 1}


@pytest.mark.parametrize("error", ["SnapshotNotFound: x", "KeyError: 'x'"])
def test_not_found_for_an_unacknowledged_snapshot_is_fine(error: str) -> None:
    h = H()
    h.inv(0, "snapshot", "s")
    h.info(0)  # its id is unknown: maybe it never happened
    h.inv(1, "rollback", "s", "x")
    h.fail(1, error)
    h.inv(2, "list_snapshots", "s")
    h.snapshot(3, "s", "y")  # concurrent with the listing
    h.ok(2, [])
    assert_valid(h)


def test_rollback_failing_for_another_reason_is_fine() -> None:
    h = H()
    h.snapshot(0, "s", "x")
    h.inv(1, "rollback", "s", "x")
    h.fail(1, "OperationalError: database is locked")
    h.list(1, "s", ["x"])
    assert_valid(h)


# -- duplicate-turn, phantom-turn, cross-session-bleed -----------------------------------------


def test_duplicate_turn() -> None:
    h = H()
    h.append(0, "s", "a")
    h.append(0, "s", "b")
    h.read(1, "s", ["a", "b", "a"])
    res = assert_kind(h, "duplicate-turn")
    assert "2 times" in res.violations[0].message


def test_a_retried_append_may_show_twice() -> None:
    h = H()
    h.append(0, "s", "a")
    h.append(0, "s", "a")
    h.read(1, "s", ["a", "a"])
    assert check(h.events).valid


@pytest.mark.parametrize("case", ["nobody", "failed", "future", "role"])
def test_phantom_turn(case: str) -> None:
    h = H()
    h.append(0, "s", "a")
    if case == "failed":
        h.inv(1, "append", "s", "z")
        h.fail(1)
        h.read(2, "s", ["a", "z"])
    elif case == "future":
        h.read(2, "s", ["a", "z"])
        h.append(1, "s", "z")
    elif case == "role":
        h.inv(2, "read", "s")
        h.ok(2, [["assistant", "a"]])  # appended as "user"
    else:
        h.read(2, "s", ["a", "z"])
    res = check(h.events)
    assert "phantom-turn" in res.counts(), [v.message for v in res.violations]
    assert check_exact(h.events, budget_s=10).valid is False


def test_unknown_append_may_appear_any_time_after_its_invoke() -> None:
    h = H()
    h.inv(0, "append", "s", "a")
    h.read(1, "s", ["a"])  # took effect before its completion was even logged
    h.info(0)
    assert_valid(h)


def test_cross_session_bleed() -> None:
    h = H()
    h.append(0, "s1", "a")
    h.append(1, "s2", "b")
    h.read(2, "s2", ["b", "a"])
    res = assert_kind(h, "cross-session-bleed")
    assert "'s1'" in res.violations[0].message and "'s2'" in res.violations[0].message


# -- reordered-turns ---------------------------------------------------------------------------


def test_reordered_against_real_time() -> None:
    h = H()
    h.append(0, "s", "a")
    h.append(1, "s", "b")
    h.read(2, "s", ["b", "a"])
    assert_kind(h, "reordered-turns")


def test_reads_disagree_on_order() -> None:
    h = H()
    h.inv(0, "append", "s", "a")
    h.inv(1, "append", "s", "b")
    h.ok(0)
    h.ok(1)
    h.read(2, "s", ["a", "b"])
    h.read(3, "s", ["b", "a"])
    assert_kind(h, "reordered-turns")


def test_concurrent_appends_in_either_order() -> None:
    h = H()
    h.inv(0, "append", "s", "a")
    h.inv(1, "append", "s", "b")
    h.ok(1)
    h.ok(0)
    h.read(2, "s", ["b", "a"])
    h.read(3, "s", ["b", "a"])
    assert_valid(h)


def test_equal_timestamps_are_concurrent() -> None:
    h = H()
    h.inv(0, "append", "s", "a")
    h.ok(0)
    h.inv(1, "append", "s", "b", same_time=True)  # invoked at the instant a completed
    h.ok(1)
    h.read(2, "s", ["b", "a"])
    assert_valid(h)


# -- unreadable --------------------------------------------------------------------------------


@pytest.mark.parametrize("value", ["garbage", [["user"]], [[1, 2]], {"a": 1}, None])
def test_malformed_read(value: object) -> None:
    h = H()
    h.append(0, "s", "a")
    h.inv(1, "read", "s")
    h.ok(1, value)
    res = assert_kind(h, "unreadable")
    assert "malformed" in res.violations[0].message


def test_read_that_raised() -> None:
    h = H()
    h.inv(1, "read", "s")
    h.fail(1, "ValueError: bad pickle")
    res = assert_kind(h, "unreadable")
    assert "ValueError" in res.violations[0].message


def test_listing_that_raised_or_returned_garbage() -> None:
    h = H()
    h.inv(1, "list_snapshots", "s")
    h.fail(1, "RuntimeError")
    h.inv(1, "list_snapshots", "s")
    h.ok(1, "x")
    assert check(h.events).counts() == {"unreadable": 2}


def test_read_with_unknown_outcome_proves_nothing() -> None:
    h = H()
    h.append(0, "s", "a")
    h.inv(1, "read", "s")
    h.info(1)
    assert_valid(h)


# -- reporting ---------------------------------------------------------------------------------


def test_one_lost_turn_seen_by_many_reads_is_one_violation() -> None:
    h = H()
    h.append(0, "s", "a")
    h.append(0, "s", "b")
    for _ in range(50):
        h.read(1, "s", ["a"])
    res = check(h.events)
    assert res.counts() == {"lost-turn": 1}
    assert res.stats["violations_total"] == 1


def test_faults_and_sessionless_events_are_ignored() -> None:
    h = H()
    h.fault("pause", {"pid": 1})
    h.append(0, "s", "a")
    h.fault("resume")
    h.read("final", "s", ["a"])
    assert_valid(h)
