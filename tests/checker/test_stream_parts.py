"""The streaming checker (harness.checker.stream) part by part, on small literal histories:
the token and append tests of its owner lookup (``_token``, ``_appends``, ``_settled``), the
writers' highest turns seen at each invoke, pairing (an invoke replacing one still open, an
op of a session already judged, junk processes and kinds, setup races), when a session is
judged (retired, nothing open, ranked, not held) and what judging leaves behind (owner
rows, the token index, totals, candidates), processes that end with an op open, the owner
lookup (retired or live, lowest rank, a tie at no rank, the first non-failed append, when
the answer is unsettled), the candidates kept between calls, ``retained()``, and the
result's stats; each against ``check()`` of the same events where a verdict is given."""

from __future__ import annotations

import time
from typing import Any

import pytest

from harness.checker import check
from harness.checker.evidence import CAP_PER_KIND, CAP_TOTAL, Evidence
from harness.checker.exact import Prover
from harness.checker.ops import SessionOps
from harness.checker.owner_table import RetiredOwners
from harness.checker.result import CheckResult, Violation
from harness.checker.stream import (
    LIVE_CAP,
    SETUP_RANK,
    STREAM_SHARE,
    StreamChecker,
    StreamError,
    _appends,
    _Lookup,
    _settled,
    _token,
)
from harness.history import Event
from tests.checker.builder import H


def ev(index: int, type: str = "invoke", f: str = "append", session: Any = "s", value: Any = None,
       process: Any = 1, error: str | None = None) -> Event:
    return Event(index=index, time=10 * (index + 1), process=process, type=type, f=f, session=session,
                 value=value, error=error)


def fed(events: list[Event], sc: StreamChecker | None = None) -> StreamChecker:
    sc = sc if sc is not None else StreamChecker()
    for e in events:
        sc.feed(e)
    return sc


def same_as_batch(got: CheckResult, events: list[Event]) -> None:
    """The streaming result is the batch one (but for the time taken)."""
    want = check(events)
    assert got.violations == want.violations
    assert got.totals == want.totals
    assert {k: v for k, v in got.stats.items() if k != "seconds"} == \
        {k: v for k, v in want.stats.items() if k != "seconds"}


class FakeProver(Prover):
    """A real prover that proves nothing first (the fast rules run on every session) and
    records the sessions it is given, with their appends as they were at that moment."""

    def __init__(self) -> None:
        super().__init__()
        self.first: list[tuple[str, list[Any]]] = []
        self.judged: list[tuple[str, int]] = []

    def prove_first(self, so: SessionOps) -> bool:
        self.first.append((so.session, list(so.appends)))
        return False

    def judge(self, so: SessionOps, found: Evidence) -> bool | None:
        self.judged.append((so.session, found.count()))
        return Prover.judge(self, so, found)


# -- constants and construction -----------------------------------------------------------


def test_constants_and_what_a_checker_is_made_with() -> None:
    """Between calls at most CAP_TOTAL violations are held; a setup race ranks at 2**60 plus
    its index; the default prover takes a quarter of the run's time. A prover or owner table
    passed in is the one used."""
    assert LIVE_CAP == CAP_TOTAL == 500
    assert SETUP_RANK == 1 << 60
    assert STREAM_SHARE == 0.25
    sc = StreamChecker()
    assert sc.prover.share == 0.25 and isinstance(sc.retired_owners, RetiredOwners)
    prover, owners = Prover(), RetiredOwners()
    sc = StreamChecker(owners=owners, prover=prover)
    assert sc.prover is prover and sc.retired_owners is owners


# -- _token, _appends, _settled -----------------------------------------------------------


@pytest.mark.parametrize("value, token", [
    (["user", "a"], "a"),
    (("user", "a"), "a"),
    ([1, "a"], "a"),  # the role is not looked at
    (["user", "a", "b"], ""),
    (["a"], ""),
    (["user", 1], ""),
    ("ab", ""),  # a string of two characters is no [role, token]
    ({"user": 1, "a": 2}, ""),
    (None, ""),
])
def test_token_of_an_append_invoke(value: Any, token: str) -> None:
    assert _token(ev(0, value=value)) == token


@pytest.mark.parametrize("value, comp, token, want", [
    (["user", "a"], "ok", "a", True),
    (("user", "a"), "ok", "a", True),
    (["user", "a"], None, "a", True),
    (["user", "a"], "info", "a", True),
    (["user", "a"], "fail", "a", False),
    (["user", "a"], "ok", "b", False),
    ([1, "a"], "ok", "a", False),  # a role that is no string: malformed
    (["user", "a", "x"], "ok", "a", False),
    (["user"], "ok", "user", False),
    ("ua", "ok", "a", False),
    (None, "ok", "a", False),
])
def test_appends_is_a_non_failed_well_formed_append_of_the_token(value: Any, comp: str | None, token: str,
                                                                 want: bool) -> None:
    c = None if comp is None else ev(1, type=comp, value=value if comp == "ok" else None)
    assert _appends((ev(0, value=value), c), token) is want


def test_settled_once_the_writer_went_past_the_turn() -> None:
    """Writer 1 has appended up to n=5 (an invoke is enough): its turns up to 5 are settled,
    6 is not, nor any turn of a writer not seen yet (n=0 included), nor a token the plan
    did not make."""
    sc = fed([ev(0, value=["user", "w1.5|a"])])
    assert sc._writer_max == {1: 5}
    assert _settled(sc, "w1.5|x") is True
    assert _settled(sc, "w1.4|x") is True
    assert _settled(sc, "w1.6|x") is False
    assert _settled(sc, "w2.0|x") is False
    assert _settled(sc, "plain") is False


# -- opening: the writers' highest turns, open invokes ------------------------------------


def test_each_append_invoke_raises_its_writers_highest_turn() -> None:
    """Only an append invoke whose value is a list or tuple of two with a string token
    counts (of any session, none included); a lower turn never lowers the maximum."""
    values: list[tuple[str, Any, Any]] = [
        ("append", "s", ["user", "w1.3|a"]),
        ("append", "s", ("user", "w1.2|b")),
        ("append", "s", ["user", "w1.4|c"]),
        ("append", "s", ["user", "w2.0|d"]),
        ("read", "s", ["user", "w3.0|e"]),
        ("append", "s", ["user", "w4.0|f", "x"]),
        ("append", "s", ["user", 5]),
        ("append", "s", {0: "user", 1: "w5.0|g"}),
        ("append", None, ["user", "w6.0|h"]),
        ("append", "t", ["user", "w1.1|i"]),
        ("append", "t", ("user", "w7.0|j")),
    ]
    sc = fed([ev(i, f=f, session=s, value=v, process=i) for i, (f, s, v) in enumerate(values)])
    assert sc._writer_max == {1: 4, 2: 0, 6: 0, 7: 0}
    assert sc._live["s"].open == 8
    assert sc._live["t"].open == 2
    assert list(sc._live) == ["s", "t"]
    assert sc.retained()["open_invokes"] == 11


# -- feeding ------------------------------------------------------------------------------


def test_an_event_of_an_unhashable_process_is_counted_and_nothing_else() -> None:
    events = [ev(0, process=[1], value=["user", "w1.0|a"]), ev(1, type="ok", process=[1], value=["user", "w1.0|a"])]
    sc = fed(events)
    assert sc._writer_max == {} and sc._live == {} and sc._pending == {}
    res = sc.finish()
    assert res.stats["events"] == 2 and res.stats["ops"] == 0 and res.stats["sessions"] == 0
    same_as_batch(res, events)


def test_an_invoke_of_a_judged_session_is_refused_with_its_index() -> None:
    sc = fed([ev(0, f="read"), ev(1, type="ok", f="read", value=[])])
    sc.retire("s")
    assert sc._judged == {"s"}
    with pytest.raises(StreamError) as err:
        sc.feed(ev(2, f="read"))
    assert str(err.value) == "event 2: session 's' was already judged"
    sc.feed(ev(3, f="read", session=None, process=2))  # no session: not refused


def test_an_invoke_on_a_process_with_one_open_closes_that_one_as_never_completed() -> None:
    h = H()
    r = h.inv(1, "read", "s")
    h.crash(1)
    a = h.inv(1, "append", "s", "w1.0|a")
    sc = fed(h.events)
    live = sc._live["s"]
    assert live.ops.reads == [(r, None)] and live.ops.appends == []
    assert live.open == 1 and live.rank == 1 and sc._ops == 1
    assert sc._pending == {1: a}
    res = sc.finish()
    assert res.stats["ops"] == 2
    same_as_batch(res, h.events)


def test_a_failed_open_on_a_cold_start_is_a_setup_race_ranked_after_every_session() -> None:
    cold = {"cold_start": True, "attempt": 1}
    e1 = ev(0, type="fail", f="open", session=None, value=cold, process=3, error="OSError: busy")
    e2 = ev(1, type="ok", f="open", session=None, value=cold, process=3)
    e3 = ev(2, type="fail", f="read", session=None, value=cold, process=3, error="OSError: busy")
    e4 = ev(3, type="fail", f="open", session=None, value=cold, process=4, error="OSError: busy")
    sc = fed([e1, e2, e3, e4])
    msg1 = ("Process 3 could not open the store on a cold start (attempt 1; every worker opened the fresh "
            "store at the same instant): OSError: busy. Set-up code (CREATE TABLE, PRAGMA, migrations) "
            "must work when several processes run it at once.")
    v1 = Violation("setup-race", None, msg1, (e1,))
    v4 = Violation("setup-race", None, msg1.replace("Process 3", "Process 4"), (e4,))
    assert sc._totals == {"setup-race": 2}
    assert sc._cands == {"setup-race": [(SETUP_RANK, 1, v1), (SETUP_RANK + 3, 2, v4)]}
    assert sc.violations_so_far() == (v1, v4)
    assert sc.violations_so_far() == ()
    res = sc.finish()
    assert res.violations == (v1, v4) and res.totals == {"setup-race": 2} and not res.valid
    same_as_batch(res, [e1, e2, e3, e4])


def test_each_kind_of_op_goes_to_its_list_and_others_are_only_counted() -> None:
    h = H()
    h.append(1, "s", "w1.0|a")
    h.read(1, "s", ["w1.0|a"])
    h.snapshot(1, "s", "k")
    h.list(1, "s", ["k"])
    h.rollback(1, "s", "k")
    h.inv(1, "zzz", "s")
    h.ok(1)
    h.events.append(ev(len(h.events), f=[1], process=2))  # type: ignore[arg-type]
    h.events.append(ev(len(h.events), type="ok", f=[1], process=2))  # type: ignore[arg-type]
    sc = fed(h.events)
    ops = sc._live["s"].ops
    e = h.events
    assert ops.appends == [(e[0], e[1])]
    assert ops.reads == [(e[2], e[3])]
    assert ops.snapshots == [(e[4], e[5])]
    assert ops.lists == [(e[6], e[7])]
    assert ops.rollbacks == [(e[8], e[9])]
    assert sc._ops == 7
    same_as_batch(sc.finish(), h.events)


def test_only_non_failed_well_formed_appends_are_indexed_by_token_once_per_session() -> None:
    h = H()
    h.append(1, "s", "a")
    h.append(1, "s", "a")
    h.inv(1, "append", "s", "b")
    h.fail(1)
    h.inv(1, "append", "s", [1, "c"])
    h.ok(1)
    h.inv(1, "read", "s", ["user", "d"])
    h.ok(1, [])
    h.append(1, "t", "a")
    sc = fed(h.events)
    assert sc._live_tokens == {"a": ["s", "t"]}
    assert sc.retained()["live_tokens"] == 1


def test_sessions_are_ranked_by_their_first_op_to_close() -> None:
    h = H()
    h.inv(1, "append", "s", "a")
    h.read(2, "t", [])
    h.ok(1)
    h.read(1, "s", ["a"])
    h.read(2, "t", [])
    sc = fed(h.events)
    assert sc._live["t"].rank == 1 and sc._live["s"].rank == 2 and sc._rank == 2


# -- when a session is judged -------------------------------------------------------------


def test_retiring_an_unknown_session_does_nothing() -> None:
    sc = StreamChecker()
    sc.retire("x")
    assert sc.retained()["live_sessions"] == 0 and sc._judged == set()


def test_a_retired_session_is_judged_once_nothing_of_it_is_open() -> None:
    h = H()
    h.append(1, "s", "w1.0|a")
    h.inv(1, "read", "s")
    sc = fed(h.events)
    sc.retire("s")
    assert list(sc._live) == ["s"] and sc._live["s"].retired is True  # the read is open
    sc.feed(h.ok(1, ["w1.0|a"]))
    assert sc._live == {} and sc._judged == {"s"}
    h.read(2, "t", [])
    sc.feed(h.events[-2])
    sc.feed(h.events[-1])
    assert list(sc._live) == ["t"]  # not retired: kept until finish
    res = sc.finish()
    assert res.stats["sessions"] == 2
    same_as_batch(res, h.events)


def test_an_ended_process_settles_its_open_op() -> None:
    """``process_ended``: of an unknown process, nothing; of an op of no session, counted
    at the end; of an op of a session, placed last as never completed (an append's turn
    indexed), and the session judged if retired and ranked."""
    sc = StreamChecker()
    sc.process_ended(9)
    h = H()
    h.read(1, "s", [])
    a = h.inv(1, "append", "s", "w1.0|a")
    r = h.inv(2, "read", "s", ["user", "w1.1|b"])
    j = h.inv(3, "read", None)
    fed(h.events, sc)
    sc.retire("s")
    sc.process_ended(3)
    assert sc._final_junk == [j] and sc._pending == {1: a, 2: r}
    sc.process_ended(2)
    assert sc._live["s"].final == [r] and sc._live["s"].open == 1
    assert sc._live_tokens == {}  # a read's value is no append
    assert sc.retained() == {
        "live_sessions": 1, "held_sessions": 0, "live_ops": 2, "live_tokens": 0, "open_invokes": 1,
        "judged_sessions": 0, "owner_rows": 0, "owner_whole_rows": 0,
        "owner_bytes": sc.retired_owners.nbytes(), "candidates": 0,
    }
    sc.process_ended(1)
    assert sc._live == {} and sc._judged == {"s"}
    assert sc.retired_owners.of("w1.0|a") == (1, "s", (a, None))
    assert sc._pending == {}
    res = sc.finish()
    assert res.stats["ops"] == 4 and res.stats["events"] == 5
    same_as_batch(res, h.events)


def test_a_session_none_of_whose_ops_closed_waits_for_finish_to_be_ranked() -> None:
    """The invoke left open at the end ranks before the ended one: ``finish`` orders them
    by index, not by where they were held."""
    h = H()
    b = h.inv(2, "append", "t", "w2.0|b")
    a = h.inv(1, "append", "s", "w1.0|a")
    sc = fed(h.events)
    sc.retire("s")
    sc.retire("t")
    sc.process_ended(2)
    assert sc._live["t"].final == [b] and sc._live["t"].rank is None
    assert sorted(sc._live) == ["s", "t"]
    res = sc.finish()
    assert sc.retired_owners.of("w2.0|b") == (1, "t", (b, None))
    assert sc.retired_owners.of("w1.0|a") == (2, "s", (a, None))
    assert res.stats["ops"] == 2 and res.stats["sessions"] == 2
    same_as_batch(res, h.events)


def test_ended_ops_are_judged_in_index_order_after_the_closed_ones() -> None:
    h = H()
    h.append(3, "s", "w3.0|c")
    a = h.inv(1, "append", "s", "w1.0|a")
    b = h.inv(2, "append", "s", "w2.0|b")
    prover = FakeProver()
    sc = fed(h.events, StreamChecker(prover=prover))
    sc.process_ended(2)
    sc.process_ended(1)
    assert sc._live["s"].final == [b, a]
    sc.retire("s")
    assert prover.first == [("s", [(h.events[0], h.events[1]), (a, None), (b, None)])]
    assert prover.judged == [("s", 0)]
    assert sc._ops == 3 and sc._live == {}
    same_as_batch(sc.finish(), h.events)


def test_a_session_showing_a_turn_nobody_appended_yet_is_held_until_finish() -> None:
    """``w1.1|b`` may still be appended by writer 1: the session is held (kept whole, its
    ended op placed once), and stays held when more of it comes; at ``finish`` it is
    judged: a phantom turn."""
    h = H()
    h.append(1, "s", "w1.0|a")
    h.read(1, "s", ["w1.0|a", "w1.1|b"])
    e = h.inv(2, "append", "s", "w2.0|c")
    sc = fed(h.events)
    sc.retire("s")
    sc.process_ended(2)
    live = sc._live["s"]
    assert live.held is True and live.final == [] and live.ops.appends[-1] == (e, None)
    assert sc.violations_so_far() == ()
    assert sc.retained() == {
        "live_sessions": 1, "held_sessions": 1, "live_ops": 3, "live_tokens": 2, "open_invokes": 0,
        "judged_sessions": 0, "owner_rows": 0, "owner_whole_rows": 0,
        "owner_bytes": sc.retired_owners.nbytes(), "candidates": 0,
    }
    h.read(3, "s", ["w1.0|a"])
    fed(h.events[-2:], sc)
    assert sc._live["s"].held is True and sc.retained()["held_sessions"] == 1
    res = sc.finish()
    assert res.counts() == {"phantom-turn": 1}
    assert res.stats["ops"] == 4
    same_as_batch(res, h.events)


def test_finish_judges_what_is_left_in_rank_order() -> None:
    """x is seen first but ranks second (y's append closes first): at ``finish`` y is
    judged first, so its violation is shown first."""
    h = H()
    h.inv(1, "read", "x")
    h.append(2, "y", "w2.0|b")
    h.read(2, "y", [])  # a lost turn
    h.ok(1, ["w1.0|a"])  # a phantom turn
    sc = fed(h.events)
    assert list(sc._live) == ["x", "y"] and sc._live["x"].rank == 2 and sc._live["y"].rank == 1
    res = sc.finish()
    shown = sc.violations_so_far()
    assert [(v.kind, v.session) for v in shown] == [("lost-turn", "y"), ("phantom-turn", "x")]
    assert [(v.kind, v.session) for v in res.violations] == [("lost-turn", "y"), ("phantom-turn", "x")]
    same_as_batch(res, h.events)


def test_a_turn_of_a_judged_session_in_a_later_read_is_a_bleed_found_at_once() -> None:
    """Writer 1 went past ``w1.0|a`` and no append of it is open: the answer is settled, so
    the reading session is judged when retired, its owner taken from the retired table."""
    h = H()
    h.append(1, "a", "w1.0|a")
    sc = fed(h.events)
    sc.retire("a")
    h.read(2, "b", ["w1.0|a"])
    fed(h.events[-2:], sc)
    sc.retire("b")
    shown = sc.violations_so_far()
    assert [v.kind for v in shown] == ["cross-session-bleed"]
    assert shown[0].events[:2] == (h.events[0], h.events[1])
    assert sc._live == {}
    res = sc.finish()
    assert res.violations == shown
    same_as_batch(res, h.events)


def test_judging_leaves_owner_rows_and_drops_the_session_from_the_token_index() -> None:
    h = H()
    h.append(1, "s", "w1.0|a")
    h.append(1, "s", "x")
    h.append(2, "t", "x")
    h.inv(1, "append", "s", "w1.1|b")
    h.fail(1)
    h.read(1, "s", ["w1.0|a", "x", "w1.1|b"])  # a failed append's turn: a phantom, settled
    sc = fed(h.events)
    sc.retire("s")
    assert sc._live_tokens == {"x": ["t"]}
    assert sc.retired_owners.of("w1.0|a") == (1, "s", (h.events[0], h.events[1]))
    assert sc.retired_owners.of("x") == (1, "s", (h.events[2], h.events[3]))
    assert len(sc.retired_owners) == 2
    sc.retire("t")
    assert sc._live_tokens == {} and sc._judged == {"s", "t"}
    assert sc.retained() == {
        "live_sessions": 0, "held_sessions": 0, "live_ops": 0, "live_tokens": 0, "open_invokes": 0,
        "judged_sessions": 2, "owner_rows": 2, "owner_whole_rows": 0,
        "owner_bytes": sc.retired_owners.nbytes(), "candidates": 1,
    }
    res = sc.finish()
    assert res.counts() == {"phantom-turn": 1}
    same_as_batch(res, h.events)


def test_the_fast_rules_judge_and_the_prover_decides_only_sessions_they_pass() -> None:
    h = H()
    h.append(1, "s", "w1.0|a")
    h.read(1, "s", [])  # a lost turn
    h.append(2, "t", "w2.0|b")
    h.read(2, "t", ["w2.0|b"])
    prover = FakeProver()
    sc = fed(h.events, StreamChecker(prover=prover))
    sc.retire("s")
    sc.retire("t")
    assert [s for s, _ in prover.first] == ["s", "t"]
    assert prover.judged == [("t", 0)]
    res = sc.finish()
    assert res.counts() == {"lost-turn": 1}
    assert res.stats["exact"]["sessions_proven"] == 1


def test_every_violation_of_a_session_is_a_candidate_and_is_shown() -> None:
    """Two phantom turns in one read: both kept (the session's evidence has no total cap
    of its own), counted, and ranked with their session."""
    h = H()
    h.read(1, "s", ["w1.0|a", "w1.1|b"])
    h.append(1, "s", "w1.2|c")
    sc = fed(h.events)
    sc.retire("s")
    shown = sc.violations_so_far()
    assert [v.kind for v in shown] == ["phantom-turn", "phantom-turn"]
    assert sc._totals == {"phantom-turn": 2}
    assert [(r, n) for r, n, _ in sc._cands["phantom-turn"]] == [(1, 1), (1, 2)]
    res = sc.finish()
    assert res.violations == shown
    same_as_batch(res, h.events)


def test_a_session_keeps_at_most_cap_per_kind_of_one_kind() -> None:
    h = H()
    h.append(1, "s", "w1.200|z")
    h.read(1, "s", [f"w1.{n}|x" for n in range(CAP_PER_KIND + 1)])
    sc = fed(h.events)
    sc.retire("s")
    assert len(sc.violations_so_far()) == CAP_PER_KIND
    assert sc._totals == {"phantom-turn": CAP_PER_KIND + 1}
    res = sc.finish()
    assert len(res.violations) == CAP_PER_KIND
    same_as_batch(res, h.events)


def test_the_cap_keeps_the_lowest_ranked_sessions_not_the_first_judged() -> None:
    """b (rank 2) is judged first with 100 phantom turns; a (rank 1), judged at ``finish``,
    has one more: the 100 kept are a's and b's first 99, as in the batch check."""
    h = H()
    h.read(1, "a", ["w1.100|q"])
    h.append(2, "b", "w1.500|z")
    h.read(2, "b", [f"w1.{n}|x" for n in range(CAP_PER_KIND)])
    sc = fed(h.events)
    sc.retire("b")
    assert len(sc.violations_so_far()) == CAP_PER_KIND
    res = sc.finish()
    assert res.totals == {"phantom-turn": CAP_PER_KIND + 1}
    kept = [v.session for v in res.violations]
    assert len(kept) == CAP_PER_KIND and kept.count("a") == 1
    same_as_batch(res, h.events)


# -- the owner lookup ---------------------------------------------------------------------


def test_lookup_takes_a_retired_owner_and_says_when_the_answer_may_change() -> None:
    h = H()
    h.append(1, "a", "w1.0|x")
    sc = fed(h.events)
    sc.retire("a")
    look = _Lookup(sc, "b")
    assert look.unsettled is False
    assert look.of("w1.0|x") == ("a", (h.events[0], h.events[1]))
    assert look.unsettled is False
    assert look.of("w1.1|y") is None and look.unsettled is True
    look = _Lookup(sc, "b")
    assert look.of("plain") is None and look.unsettled is True
    # an append of a settled turn still open: it may still fail
    sc.feed(ev(2, f="read", session="c", value=["user", "w1.0|x"], process=2))
    look = _Lookup(sc, "b")
    look.of("w1.0|x")
    assert look.unsettled is False  # a read's value is no append
    sc.feed(ev(3, session="c", value=["user", "w1.0|y"], process=3))
    look = _Lookup(sc, "b")
    look.of("w1.0|x")
    assert look.unsettled is False  # an append of another turn
    sc.feed(ev(4, session="c", value=["user", "w1.0|x"], process=4))
    look = _Lookup(sc, "b")
    assert look.of("w1.0|x") == ("a", (h.events[0], h.events[1]))
    assert look.unsettled is True
    sc._finishing = True
    look = _Lookup(sc, "b")
    look.of("w1.1|y")
    assert look.unsettled is False  # at finish nothing can change any more


def test_lookup_takes_the_lowest_ranked_owner_retired_or_live() -> None:
    h = H()
    h.read(1, "y", [])  # y: rank 1
    h.append(2, "x", "t")  # x: rank 2, indexed first
    h.append(1, "y", "t")
    h.append(3, "r", "u")  # r: rank 3, retired below
    h.append(4, "z", "u")  # z: rank 4
    h.append(5, "q", "v")  # q: rank 5
    sc = fed(h.events)
    assert sc._live_tokens["t"] == ["x", "y"]
    sc.retire("r")
    assert sc._judged == {"r"}  # r reads nothing: judged at once
    look = _Lookup(sc, "w")
    assert look.of("t") == ("y", (h.events[4], h.events[5]))
    assert look.of("u") == ("r", (h.events[6], h.events[7]))
    assert look.of("v") == ("q", (h.events[10], h.events[11]))
    # a live owner ranked before the retired one
    h2 = H()
    h2.read(1, "y", [])
    h2.append(2, "r", "t")
    h2.append(1, "y", "t")
    sc = fed(h2.events)
    sc.retire("r")
    assert sc._judged == {"r"} and sc.retired_owners.of("t") is not None
    assert _Lookup(sc, "w").of("t") == ("y", (h2.events[4], h2.events[5]))


def test_lookup_among_unranked_owners_takes_the_first_indexed() -> None:
    h = H()
    a = h.inv(1, "append", "x", "t")
    b = h.inv(2, "append", "y", "t")
    sc = fed(h.events)
    sc.process_ended(2)
    sc.process_ended(1)
    assert sc._live_tokens == {"t": ["y", "x"]}
    assert sc._live["x"].rank is None and sc._live["y"].rank is None
    assert _Lookup(sc, "w").of("t") == ("y", (b, None))
    assert sc._live["x"].final == [a] and sc._live["y"].final == [b]


def test_lookup_ranks_an_unranked_live_owner_after_a_retired_one() -> None:
    h = H()
    h.append(1, "a", "w1.0|x")
    sc = fed(h.events)
    sc.retire("a")
    sc.feed(h.inv(2, "append", "b", "w1.0|x"))
    sc.process_ended(2)
    assert sc._live["b"].rank is None and sc._live_tokens == {"w1.0|x": ["b"]}
    assert _Lookup(sc, "w").of("w1.0|x") == ("a", (h.events[0], h.events[1]))


def test_lookup_gives_a_live_owners_first_non_failed_append() -> None:
    """x's failed append and its malformed one are skipped; y's ended append, though
    invoked first, comes after its closed one (pairing places never-completed ops last)."""
    h = H()
    h.inv(1, "append", "x", "t")
    h.fail(1)
    h.inv(1, "append", "x", [1, "t"])
    h.ok(1)
    h.append(1, "x", "t")
    h.append(1, "x", "t")
    sc = fed(h.events)
    assert _Lookup(sc, "w").of("t") == ("x", (h.events[4], h.events[5]))
    h = H()
    e = h.inv(2, "append", "y", "t")
    h.append(3, "y", "t")
    sc = fed(h.events)
    sc.process_ended(2)
    assert sc._live["y"].final == [e] and sc._live_tokens == {"t": ["y"]}
    assert _Lookup(sc, "w").of("t") == ("y", (h.events[1], h.events[2]))


# -- candidates, results ------------------------------------------------------------------


def test_candidates_keep_the_first_cap_per_kind_in_batch_order() -> None:
    """Past twice CAP_PER_KIND of a kind, the list is cut to the CAP_PER_KIND first by
    (rank, discovery); at most LIVE_CAP are held for ``violations_so_far``."""
    sc = StreamChecker()
    vs = [Violation("lost-turn", "s", f"m{i}") for i in range(2 * CAP_PER_KIND + 1)]
    ranks = [1000 - i // 2 for i in range(len(vs))]  # falling, two of each rank
    for r, v in zip(ranks[:-1], vs[:-1], strict=True):
        sc._candidate(r, v)
    assert len(sc._cands["lost-turn"]) == 2 * CAP_PER_KIND
    sc._candidate(ranks[-1], vs[-1])
    kept = sc._cands["lost-turn"]
    assert len(kept) == CAP_PER_KIND
    want = sorted(zip(ranks, range(1, len(vs) + 1), vs, strict=True), key=lambda c: (c[0], c[1]))
    assert kept == want[:CAP_PER_KIND]
    assert kept[:3] == [(900, 201, vs[200]), (901, 199, vs[198]), (901, 200, vs[199])]
    assert sc._seq == 2 * CAP_PER_KIND + 1
    assert len(sc._new) == 2 * CAP_PER_KIND + 1
    for i in range(LIVE_CAP):
        sc._candidate(1, Violation("phantom-turn", "t", f"p{i}"))
    assert len(sc._new) == LIVE_CAP
    assert sc.violations_so_far()[:2] == (vs[0], vs[1])
    assert sc.violations_so_far() == ()


def test_the_result_replays_candidates_in_rank_order_with_all_the_stats() -> None:
    h = H()
    h.append(1, "s", "w1.0|a")
    h.read(1, "s", [])  # s: rank 1, a lost turn
    h.append(2, "t", "w2.0|b")  # t: rank 2
    h.inv(2, "append", "t", "w2.1|c")
    h.fail(2)
    h.read(2, "t", ["w2.0|b", "w2.1|c"])  # a phantom turn
    h.append(3, "u", "w3.0|d")
    h.append(3, "u", "w3.0|d")  # u: ambiguous (d twice), rank 3
    h.inv(4, "read", "v")
    sc = fed(h.events)
    sc.retire("t")
    sc.retire("s")
    assert sc.violations_so_far()[0].kind == "phantom-turn"
    res = sc.finish()
    assert [v.session for v in res.violations] == ["s", "t"]
    assert res.valid is False and res.totals == {"phantom-turn": 1, "lost-turn": 1}
    stats = dict(res.stats)
    exact = stats.pop("exact")
    assert isinstance(stats.pop("seconds"), float)
    assert stats == {
        "sessions": 4,
        "ambiguous_sessions": 1,
        "read_conflicts": 0,
        "violations_total": 2,
        "violations_by_kind": {"phantom-turn": 1, "lost-turn": 1},
        "checker": "fast+exact",
        "events": 15,
        "ops": 8,
    }
    assert exact == sc.prover.stats()
    same_as_batch(res, h.events)


def test_seconds_is_the_time_since_the_checker_was_made_to_the_microsecond() -> None:
    before = time.perf_counter()
    sc = StreamChecker()
    res = sc.finish()
    seconds = [res.stats["seconds"], *(sc._result().stats["seconds"] for _ in range(20))]
    after = time.perf_counter()
    assert all(0 <= x <= after - before + 1e-6 for x in seconds)
    assert all(x == round(x, 6) for x in seconds)
    assert seconds == sorted(seconds)


def test_a_valid_history_streams_to_a_valid_result() -> None:
    h = H()
    h.append(1, "s", "w1.0|a")
    h.read(1, "s", ["w1.0|a"])
    sc = fed(h.events)
    sc.retire("s")
    res = sc.finish()
    assert res.valid is True and res.violations == () and res.totals == {}
    assert res.stats["ambiguous_sessions"] == 0 and res.stats["read_conflicts"] == 0
    assert res.stats["violations_total"] == 0 and res.stats["sessions"] == 1
    same_as_batch(res, h.events)
