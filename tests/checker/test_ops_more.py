"""Pairing and grouping (harness.checker.ops) part by part, on literal histories built with
tests.checker.builder.H and on literal events: the time constants, ``SessionOps`` and its
count, ``group_by_session`` (which ops go in which list, in which order, what is counted but
not modelled: faults, unknown kinds, ops without a session or with a junk one), ``hi_of``,
``is_listish``, ``short`` (the exact width) and ``describe``."""

from __future__ import annotations

from harness.checker.ops import (
    _BUCKETS,
    INF,
    NEG,
    SessionOps,
    describe,
    group_by_session,
    hi_of,
    is_listish,
    short,
)
from harness.history import Event
from tests.checker.builder import H


def test_constants() -> None:
    assert INF == 4611686018427387904
    assert NEG == -4611686018427387904
    assert _BUCKETS == {"append": "appends", "read": "reads", "snapshot": "snapshots",
                        "rollback": "rollbacks", "list_snapshots": "lists"}


def test_session_ops_defaults_and_count() -> None:
    so = SessionOps("s")
    assert so.session == "s"
    assert (so.appends, so.reads, so.snapshots, so.rollbacks, so.lists) == ([], [], [], [], [])
    assert so.count() == 0
    e = Event(0, 1, 0, "invoke", "read", "s")
    so2 = SessionOps("s")
    # a distinct length per list: any dropped or doubled term changes the sum
    so2.appends = [(e, None)] * 1
    so2.reads = [(e, None)] * 2
    so2.snapshots = [(e, None)] * 4
    so2.rollbacks = [(e, None)] * 8
    so2.lists = [(e, None)] * 16
    assert so2.count() == 31
    # the default lists are not shared between instances
    so.appends.append((e, None))
    assert SessionOps("t").appends == []


def _idx(pairs: list) -> list[tuple[int, int | None]]:
    return [(i.index, c.index if c is not None else None) for i, c in pairs]


def test_group_by_session_buckets_every_kind() -> None:
    h = H()
    h.append(0, "s", "a")                   # 0, 1
    h.read(0, "s", ["a"])                   # 2, 3
    h.snapshot(0, "s", "k")                 # 4, 5
    h.rollback(0, "s", "k")                 # 6, 7
    h.inv(0, "list_snapshots", "s")         # 8
    h.ok(0, ["k"])                          # 9
    h.append(1, "t", "b")                   # 10, 11
    h.inv(0, "open", "s")                   # 12: not modelled, counted
    h.fail(0)                               # 13
    sessions, n = group_by_session(h.events)
    assert n == 7
    assert list(sessions) == ["s", "t"]
    s = sessions["s"]
    assert s.session == "s"
    assert _idx(s.appends) == [(0, 1)]
    assert _idx(s.reads) == [(2, 3)]
    assert _idx(s.snapshots) == [(4, 5)]
    assert _idx(s.rollbacks) == [(6, 7)]
    assert _idx(s.lists) == [(8, 9)]
    assert s.count() == 5
    t = sessions["t"]
    assert _idx(t.appends) == [(10, 11)]
    assert (t.reads, t.snapshots, t.rollbacks, t.lists) == ([], [], [], [])


def test_group_by_session_order_of_completion_and_pending_last() -> None:
    h = H()
    h.inv(0, "append", "late", "a")        # 0: completes last
    h.inv(1, "append", "early", "b")       # 1
    h.ok(1)                                # 2
    h.inv(2, "append", "early", "c")       # 3: never completes
    h.ok(0)                                # 4
    h.inv(3, "append", "early", "d")       # 5
    h.ok(3)                                # 6
    sessions, n = group_by_session(h.events)
    assert n == 4
    assert list(sessions) == ["early", "late"]
    assert _idx(sessions["early"].appends) == [(1, 2), (5, 6), (3, None)]
    assert _idx(sessions["late"].appends) == [(0, 4)]


def test_group_by_session_counts_but_skips_junk() -> None:
    evs = [
        Event(0, 10, 0, "invoke", "append", None, ["user", "a"]),   # no session
        Event(1, 20, 0, "ok", "append", None, ["user", "a"]),
        Event(2, 30, 1, "invoke", "append", ["x"], ["user", "b"]),  # unhashable session
        Event(3, 40, 1, "ok", "append", ["x"], ["user", "b"]),
        Event(4, 50, 2, "invoke", "append", 7, ["user", "c"]),      # a session that is no str
        Event(5, 60, 2, "ok", "append", 7, ["user", "c"]),
        Event(6, 70, 3, "invoke", ["f"], "s", None),                # unhashable f
        Event(7, 80, 3, "ok", ["f"], "s", None),
        Event(8, 90, "nemesis", "info", "kill", None, None),        # a fault: pairs with nothing
        Event(9, 100, 4, "invoke", "frob", "s", None),              # unknown f
        Event(10, 110, 4, "ok", "frob", "s", None),
        Event(11, 120, 5, "invoke", "read", "s", None),
        Event(12, 130, 5, "ok", "read", "s", [["user", "a"]]),
    ]
    sessions, n = group_by_session(evs)
    assert n == 6
    assert list(sessions) == ["s"]
    assert _idx(sessions["s"].reads) == [(11, 12)]
    assert sessions["s"].count() == 1


def test_group_by_session_empty() -> None:
    assert group_by_session([]) == ({}, 0)


def test_hi_of() -> None:
    assert hi_of(None) == INF
    assert hi_of(Event(1, 55, 0, "ok", "read", "s", [])) == 55
    assert hi_of(Event(1, 55, 0, "info", "read", "s")) == INF
    assert hi_of(Event(1, 55, 0, "fail", "read", "s")) == INF


def test_is_listish() -> None:
    assert is_listish([]) is True
    assert is_listish((1,)) is True
    assert is_listish("ab") is False
    assert is_listish({"a": 1}) is False
    assert is_listish(None) is False

    class L(list):
        pass

    assert is_listish(L()) is False


def test_short() -> None:
    assert short("abc") == "'abc'"
    assert short(12) == "'12'"
    assert short(None) == "'None'"
    assert short(["a"]) == "\"['a']\""
    s40 = "x" * 40
    assert short(s40) == repr(s40)
    assert short("x" * 41) == repr("x" * 39 + "…")
    assert short("abcdef", width=5) == repr("abcd…")
    assert short("abcde", width=5) == repr("abcde")
    assert short("abcdef", 3) == repr("ab…")


def test_describe() -> None:
    assert describe(Event(40, 5, 2, "ok", "read", "s")) == "process 2 at event 40"
    assert describe(Event(0, 5, "nemesis", "info", "kill")) == "process nemesis at event 0"
