"""Collecting violations (harness.checker.evidence.Evidence), part by part: one violation
per (kind, session, key), every distinct problem counted in the totals, the evidence kept
under the per-kind and total caps (the first of each kind always kept), each violation's
events deduplicated and in history order, reserved problems, and the order of
``violations()`` (by kind in the order of KINDS, then by the first event)."""

from __future__ import annotations

import pytest

from harness.checker.evidence import CAP_PER_KIND, CAP_TOTAL, Evidence
from harness.checker.result import KINDS, Violation
from harness.history import Event


def ev(i: int) -> Event:
    return Event(index=i, time=10 * i, process=0, type="ok", f="read", session="s")


def test_the_caps_are_100_of_a_kind_and_500_in_all() -> None:
    assert (CAP_PER_KIND, CAP_TOTAL) == (100, 500)
    found = Evidence()
    assert (found.cap_per_kind, found.cap_total) == (100, 500)


def test_an_unknown_kind_is_refused() -> None:
    found = Evidence()
    with pytest.raises(ValueError, match=r"^unknown violation kind 'lost turn'$"):
        found.add("lost turn", "s", "k", "m", [])
    assert found.totals == {} and found.kept == [] and found.count() == 0


def test_one_violation_per_kind_session_and_key() -> None:
    found = Evidence()
    assert found.add("lost-turn", "s", "a", "first", [ev(3)], blame=ev(3)) is True
    assert found.add("lost-turn", "s", "a", "again", [ev(5)], blame=ev(5)) is False
    assert found.add("lost-turn", "t", "a", "other session", [ev(6)]) is True
    assert found.add("phantom-turn", "s", "a", "other kind", [ev(7)]) is True
    assert found.add("lost-turn", "s", "b", "other key", [ev(8)], blame=ev(8)) is True
    assert [v.message for v in found.kept] == ["first", "other session", "other kind", "other key"]
    assert found.totals == {"lost-turn": 3, "phantom-turn": 1}
    assert found.count() == 4
    assert found.sessions == {"s", "t"}
    assert found.blamed == {3, 8}  # not 5 (not recorded), not 6 or 7 (no blame)
    assert found.has("lost-turn", "s", "a") and found.has("lost-turn", "t", "a")
    assert not found.has("lost-turn", "u", "a") and not found.has("phantom-turn", "s", "b")


def test_a_problem_without_a_session_is_recorded_under_none() -> None:
    found = Evidence()
    assert found.add("setup-race", None, 1, "raced", [ev(0)])
    assert found.sessions == {None} and found.has("setup-race", None, 1)


def test_the_evidence_is_deduplicated_in_history_order_without_nones() -> None:
    found = Evidence()
    found.add("lost-turn", "s", "a", "m", [ev(7), None, ev(2), ev(7), ev(4), None])
    assert found.kept == [Violation("lost-turn", "s", "m", (ev(2), ev(4), ev(7)))]


def test_a_reserved_problem_is_not_recorded_nor_counted() -> None:
    found = Evidence()
    found.reserve("lost-turn", "s", "a")
    assert found.has("lost-turn", "s", "a")
    assert found.add("lost-turn", "s", "a", "m", [ev(1)], blame=ev(1)) is False
    assert found.totals == {} and found.kept == [] and found.sessions == set() and found.blamed == set()


def test_at_most_cap_per_kind_are_kept_and_all_are_counted() -> None:
    found = Evidence(cap_per_kind=3, cap_total=10)
    for i in range(5):
        assert found.add("lost-turn", "s", i, f"lost {i}", [ev(i)], blame=ev(i))
    found.add("phantom-turn", "s", 0, "phantom", [ev(9)])
    assert [v.message for v in found.kept] == ["lost 0", "lost 1", "lost 2", "phantom"]
    assert found.totals == {"lost-turn": 5, "phantom-turn": 1}
    assert found.count() == 6
    assert found.blamed == {0, 1, 2, 3, 4}  # blamed, kept or not


def test_the_total_cap_keeps_the_first_of_each_kind_anyway() -> None:
    found = Evidence(cap_per_kind=5, cap_total=3)
    for i in range(4):
        found.add("lost-turn", "s", i, f"lost {i}", [ev(i)])
    found.add("phantom-turn", "s", 0, "phantom 0", [ev(10)])
    found.add("phantom-turn", "s", 1, "phantom 1", [ev(11)])
    found.add("unreadable", "s", 0, "unreadable 0", [ev(12)])
    assert [v.message for v in found.kept] == ["lost 0", "lost 1", "lost 2", "phantom 0", "unreadable 0"]
    assert found.totals == {"lost-turn": 4, "phantom-turn": 2, "unreadable": 1}


def test_the_total_cap_is_reached_exactly() -> None:
    found = Evidence(cap_per_kind=10, cap_total=2)
    found.add("lost-turn", "s", 0, "lost 0", [ev(0)])
    found.add("lost-turn", "s", 1, "lost 1", [ev(1)])
    found.add("lost-turn", "s", 2, "lost 2", [ev(2)])
    assert [v.message for v in found.kept] == ["lost 0", "lost 1"]


def test_the_per_kind_cap_is_reached_exactly() -> None:
    found = Evidence(cap_per_kind=2, cap_total=10)
    for i in range(3):
        found.add("lost-turn", "s", i, f"lost {i}", [ev(i)])
    assert [v.message for v in found.kept] == ["lost 0", "lost 1"]
    one = Evidence(cap_per_kind=1, cap_total=10)
    one.add("lost-turn", "s", 0, "lost 0", [ev(0)])
    one.add("lost-turn", "s", 1, "lost 1", [ev(1)])
    assert [v.message for v in one.kept] == ["lost 0"]


def test_violations_are_grouped_by_kind_in_the_order_of_kinds_then_by_first_event() -> None:
    found = Evidence()
    found.add("unreadable", "s", 0, "u", [ev(1)])
    found.add("lost-turn", "s", 0, "l9", [ev(9), ev(12)])
    found.add("lost-turn", "s", 1, "l4", [ev(4), ev(20)])
    found.add("bad-rollback", "s", 0, "b", [])
    found.add("bad-rollback", "s", 1, "b0", [ev(0)])
    found.add("back-dated-turn", "s", 0, "d", [ev(30)])
    assert [v.message for v in found.violations()] == ["l4", "l9", "d", "b", "b0", "u"]
    assert KINDS.index("lost-turn") < KINDS.index("back-dated-turn") < KINDS.index("bad-rollback")
    assert [v.message for v in found.kept] == ["u", "l9", "l4", "b", "b0", "d"]  # as added
