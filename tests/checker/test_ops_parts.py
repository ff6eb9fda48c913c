"""The pairing and the small helpers of harness.checker.ops, on literal events: which
session and bucket each op goes to, in which order, what is counted but not modelled (faults,
junk sessions and kinds, unhashable fields), an op's end time, what counts as a list, and
how a sentence quotes a token and names an event."""

from __future__ import annotations

from typing import Any

from harness.checker.ops import INF, NEG, SessionOps, describe, group_by_session, hi_of, is_listish, short
from harness.history import Event
from tests.checker.builder import H


def test_session_ops_count_adds_every_kind() -> None:
    e = Event(0, 1, 0, "invoke", "read", "s")
    p = (e, None)
    so = SessionOps("s", appends=[p], reads=[p] * 2, snapshots=[p] * 3, rollbacks=[p] * 4, lists=[p] * 5)
    assert so.count() == 15
    assert SessionOps("s").count() == 0


def test_ops_are_grouped_by_session_and_kind_in_completion_order() -> None:
    h = H()
    h.inv(0, "append", "s", "a")
    h.append(1, "t", "b")  # t completes first: it comes first
    h.ok(0)
    h.read(1, "s", ["a"])
    h.snapshot(0, "s", "id1")
    h.rollback(1, "s", "id1")
    h.list(0, "s", ["id1"])
    h.inv(2, "read", "s")  # never completed: last, paired with None
    ev = h.events
    sessions, n = group_by_session(ev)
    assert n == 7
    assert list(sessions) == ["t", "s"]
    s, t = sessions["s"], sessions["t"]
    assert t == SessionOps("t", appends=[(ev[1], ev[2])])
    assert s == SessionOps(
        "s",
        appends=[(ev[0], ev[3])],
        reads=[(ev[4], ev[5]), (ev[12], None)],
        snapshots=[(ev[6], ev[7])],
        rollbacks=[(ev[8], ev[9])],
        lists=[(ev[10], ev[11])],
    )
    assert s.count() == 6


def test_faults_junk_sessions_and_kinds_are_counted_but_not_modelled() -> None:
    h = H()
    h.fault("kill")  # pairs with nothing: not counted
    h.inv(0, "read", None)
    h.ok(0, [])  # no session: counted, not modelled
    h.inv(1, "read", 7)  # type: ignore[arg-type]
    h.ok(1, [])  # a session that is not a string: counted, skipped
    h.inv(2, "read", ["unhashable"])  # type: ignore[arg-type]
    h.ok(2, [])  # an unhashable session: counted, skipped, and the loop goes on
    h.inv(3, "open", "s")
    h.ok(3)  # an unknown kind: counted, in no bucket
    h.inv(4, ["junk"], "s")  # type: ignore[arg-type]
    h.ok(4)  # an unhashable kind: counted, skipped
    h.read(5, "s", [])
    ev = h.events
    sessions, n = group_by_session(ev)
    assert n == 6
    assert list(sessions) == ["s"]
    assert sessions["s"] == SessionOps("s", reads=[(ev[11], ev[12])])


def test_hi_of_is_the_ok_completion_time_else_infinite() -> None:
    def comp(typ: str) -> Event:
        return Event(1, 42, 0, typ, "append", "s")

    assert hi_of(comp("ok")) == 42
    assert hi_of(comp("info")) == INF
    assert hi_of(comp("fail")) == INF
    assert hi_of(None) == INF
    assert NEG < 0 < INF and NEG == -INF


def test_is_listish_takes_exact_lists_and_tuples_only() -> None:
    class L(list[Any]):
        pass

    assert is_listish([]) and is_listish(()) and is_listish(["a"])
    assert not is_listish("ab") and not is_listish(None) and not is_listish({}) and not is_listish(L())


def test_short_quotes_and_cuts_at_the_width() -> None:
    assert short("abc") == "'abc'"
    assert short(5) == "'5'"
    assert short(("a",)) == repr("('a',)")
    forty = "x" * 40
    assert short(forty) == repr(forty)
    assert short(forty + "y") == repr("x" * 39 + "…")
    assert short("abcdef", width=4) == repr("abc…")
    assert short("abcd", width=4) == "'abcd'"


def test_describe_names_the_process_and_the_event() -> None:
    assert describe(Event(40, 1000, 2, "ok", "read", "s")) == "process 2 at event 40"
    assert describe(Event(3, 1000, "w1", "ok", "read", "s")) == "process w1 at event 3"
