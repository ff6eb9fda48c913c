"""Collecting violations (harness.checker.evidence.Evidence) part by part, on literal events:
the caps (their defaults, per kind, in all, the first of each kind always kept), the
deduplication by ``(kind, session, key)``, ``reserve``, what is counted (``totals``,
``count``, ``sessions``, ``blamed``), the evidence kept for each violation (``None`` dropped,
duplicates merged, history order) and the order of ``violations()``."""

from __future__ import annotations

import pytest

from harness.checker.evidence import CAP_PER_KIND, CAP_TOTAL, Evidence
from harness.checker.result import Violation
from harness.history import Event


def ev(i: int) -> Event:
    return Event(i, 10 * i + 10, 0, "ok", "read", "s", [])


def test_constants_and_defaults() -> None:
    assert CAP_PER_KIND == 100
    assert CAP_TOTAL == 500
    e = Evidence()
    assert (e.cap_per_kind, e.cap_total) == (100, 500)
    assert e.kept == []
    assert e.totals == {}
    assert e.sessions == set()
    assert e.blamed == set()
    assert e.count() == 0
    assert e.violations() == ()
    e2 = Evidence(3, 7)
    assert (e2.cap_per_kind, e2.cap_total) == (3, 7)


def test_unknown_kind_raises() -> None:
    e = Evidence()
    with pytest.raises(ValueError) as x:
        e.add("lost-turns", "s", "k", "m", [])
    assert str(x.value) == "unknown violation kind 'lost-turns'"
    assert e.count() == 0 and e.kept == []


def test_add_dedup_and_counts() -> None:
    e = Evidence()
    assert e.has("lost-turn", "s", "a") is False
    assert e.add("lost-turn", "s", "a", "m1", [ev(3)], blame=ev(3)) is True
    assert e.has("lost-turn", "s", "a") is True
    assert e.has("lost-turn", "t", "a") is False
    assert e.has("duplicate-turn", "s", "a") is False
    assert e.has("lost-turn", "s", "b") is False
    # the same problem again: not recorded, not counted, not blamed
    assert e.add("lost-turn", "s", "a", "m2", [ev(5)], blame=ev(5)) is False
    assert e.add("lost-turn", "t", "a", "m3", [ev(6)]) is True
    assert e.add("duplicate-turn", "s", "a", "m4", [ev(7)], blame=None) is True
    assert e.add("lost-turn", None, "b", "m5", [ev(8)], blame=ev(9)) is True
    assert e.totals == {"lost-turn": 3, "duplicate-turn": 1}
    assert e.count() == 4
    assert e.sessions == {"s", "t", None}
    assert e.blamed == {3, 9}
    assert [v.message for v in e.kept] == ["m1", "m3", "m4", "m5"]
    assert e.kept[0] == Violation("lost-turn", "s", "m1", (ev(3),))


def test_reserve_marks_without_counting() -> None:
    e = Evidence()
    assert e.reserve("lost-turn", "s", "a") is None
    assert e.has("lost-turn", "s", "a") is True
    assert e.count() == 0 and e.totals == {} and e.sessions == set() and e.kept == []
    assert e.add("lost-turn", "s", "a", "m", [ev(1)]) is False
    assert e.count() == 0
    assert e.add("lost-turn", "s", "b", "m", [ev(1)]) is True
    assert e.count() == 1


def test_evidence_events_dropped_merged_ordered() -> None:
    e = Evidence()
    e.add("phantom-turn", "s", 1, "m", [ev(9), None, ev(2), ev(9), ev(5)])
    (v,) = e.kept
    assert v.events == (ev(2), ev(5), ev(9))
    e.add("phantom-turn", "s", 2, "m", iter([None]))
    assert e.kept[1].events == ()
    # events with the same index: one kept (the last given)
    a = Event(4, 1, 0, "ok", "read", "s", [])
    b = Event(4, 2, 1, "ok", "read", "s", [])
    e.add("phantom-turn", "s", 3, "m", [a, b])
    assert e.kept[2].events == (b,)


def test_cap_per_kind() -> None:
    e = Evidence(cap_per_kind=2, cap_total=100)
    for k in range(4):
        assert e.add("lost-turn", "s", k, f"m{k}", [ev(k)]) is True
    assert [v.message for v in e.kept] == ["m0", "m1"]
    assert e.totals == {"lost-turn": 4}
    # another kind has a cap of its own
    e.add("duplicate-turn", "s", 0, "d0", [ev(0)])
    e.add("duplicate-turn", "s", 1, "d1", [ev(1)])
    e.add("duplicate-turn", "s", 2, "d2", [ev(2)])
    assert [v.message for v in e.kept] == ["m0", "m1", "d0", "d1"]
    assert e.count() == 7


def test_cap_per_kind_one() -> None:
    e = Evidence(cap_per_kind=1, cap_total=100)
    e.add("lost-turn", "s", 0, "m0", [])
    e.add("lost-turn", "s", 1, "m1", [])
    assert [v.message for v in e.kept] == ["m0"]


def test_cap_total_keeps_the_first_of_each_kind() -> None:
    e = Evidence(cap_per_kind=10, cap_total=2)
    e.add("lost-turn", "s", 0, "l0", [ev(0)])
    e.add("lost-turn", "s", 1, "l1", [ev(1)])
    e.add("lost-turn", "s", 2, "l2", [ev(2)])          # over the total: dropped
    e.add("duplicate-turn", "s", 0, "d0", [ev(3)])     # first of its kind: kept anyway
    e.add("duplicate-turn", "s", 1, "d1", [ev(4)])     # not the first: dropped
    e.add("phantom-turn", "s", 0, "p0", [ev(5)])       # first of its kind: kept anyway
    assert [v.message for v in e.kept] == ["l0", "l1", "d0", "p0"]
    assert e.totals == {"lost-turn": 3, "duplicate-turn": 2, "phantom-turn": 1}
    assert e.count() == 6


def test_cap_total_exact_boundary() -> None:
    e = Evidence(cap_per_kind=10, cap_total=3)
    for k in range(4):
        e.add("lost-turn", "s", k, f"l{k}", [])
    assert [v.message for v in e.kept] == ["l0", "l1", "l2"]
    # a total of 1: only the very first is kept
    e2 = Evidence(cap_per_kind=10, cap_total=1)
    e2.add("lost-turn", "s", 0, "l0", [])
    e2.add("lost-turn", "s", 1, "l1", [])
    e2.add("lost-turn", "s", 2, "l2", [])
    assert [v.message for v in e2.kept] == ["l0"]


def test_cap_total_zero_still_keeps_firsts() -> None:
    e = Evidence(cap_per_kind=5, cap_total=0)
    e.add("lost-turn", "s", 0, "l0", [])
    e.add("lost-turn", "s", 1, "l1", [])
    e.add("unreadable", "s", 0, "u0", [])
    assert [v.message for v in e.kept] == ["l0", "u0"]


def test_cap_per_kind_zero_keeps_nothing() -> None:
    e = Evidence(cap_per_kind=0, cap_total=5)
    assert e.add("lost-turn", "s", 0, "l0", []) is True
    assert e.kept == [] and e.count() == 1


def test_violations_order() -> None:
    e = Evidence()
    e.add("unreadable", "s", 0, "u", [ev(1)])
    e.add("lost-turn", "s", 0, "l-late", [ev(8), ev(2)])
    e.add("lost-turn", "s", 1, "l-early", [ev(4)])
    e.add("lost-turn", "s", 2, "l-none", [])
    e.add("back-dated-turn", "s", 0, "b", [ev(0)])
    e.add("setup-race", None, 0, "r", [ev(3)])
    # by kind in the order of KINDS, then by the first event's index (none: first)
    assert [v.message for v in e.violations()] == ["l-none", "l-late", "l-early", "b", "u", "r"]
    # kept itself is untouched, in the order added
    assert [v.message for v in e.kept] == ["u", "l-late", "l-early", "l-none", "b", "r"]


def test_violations_order_none_before_index_zero() -> None:
    e = Evidence()
    e.add("lost-turn", "s", 0, "zero", [ev(0)])
    e.add("lost-turn", "s", 1, "none", [])
    assert [v.message for v in e.violations()] == ["none", "zero"]
