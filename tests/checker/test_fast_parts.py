"""The fast checker's driver (harness.checker.fast) on literal histories: the stats it
returns (sessions, ambiguous sessions, read conflicts, totals, events, ops, which checker),
the sessions it flags, the setup races it adds after every session, the garbage collector
left as it was found, which rules an ambiguous session skips, and how a prover is asked
(first, then only on sessions the fast rules found nothing in)."""

from __future__ import annotations

import gc
from typing import Any

import pytest

from harness.checker.evidence import Evidence
from harness.checker.fast import check_fast, check_sessions, judge_session
from harness.checker.ops import SessionOps, group_by_session
from harness.checker.turns import LazyIndexes, Owners
from harness.history import Event
from tests.checker.builder import H


def cold_open_failed(h: H, p: int, value: Any, error: str | None = "OperationalError: locked",
                     f: str = "open", type: str = "fail") -> Event:
    """A worker's open event (no invoke: it pairs with nothing)."""
    h.t += 10
    e = Event(index=len(h.events), time=h.t, process=p, type=type, f=f, session=None, value=value, error=error)
    h.events.append(e)
    return e


def three_sessions() -> H:
    """s: a lost turn; t: ambiguous (b appended twice), a read lacking b; u: two reads that
    disagree (a lost turn the required turns report, and a read conflict); v: fine."""
    h = H()
    h.append(0, "s", "a")
    h.read(1, "s", [])
    h.append(0, "t", "b")
    h.append(0, "t", "b")
    h.read(1, "t", [])
    h.inv(2, "append", "u", "c")
    h.inv(3, "append", "u", "d")
    h.read(4, "u", ["c", "d"])
    h.read(5, "u", ["d"])
    h.ok(2)
    h.ok(3)
    h.append(0, "v", "e")
    h.read(1, "v", ["e"])
    return h


def test_stats_of_the_fast_checker() -> None:
    h = three_sessions()
    res = check_fast(h.events)
    stats = dict(res.stats)
    seconds = stats.pop("seconds")
    assert isinstance(seconds, float) and 0 <= seconds < 5
    assert stats == {
        "sessions": 4,
        "ambiguous_sessions": 1,
        "read_conflicts": 1,
        "violations_total": 2,
        "violations_by_kind": {"lost-turn": 2},
        "checker": "fast",
        "events": 22,
        "ops": 11,
    }
    assert res.valid is False
    assert res.totals == {"lost-turn": 2}
    assert [v.session for v in res.violations] == ["s", "u"]


def test_seconds_are_rounded_to_the_microsecond() -> None:
    h = three_sessions()
    for _ in range(5):
        s = check_fast(h.events).stats["seconds"]
        assert round(s, 6) == s


def test_flagged_names_each_session_with_a_violation() -> None:
    h = three_sessions()
    cold_open_failed(h, 7, {"cold_start": True, "attempt": 1})
    flagged = {"earlier"}
    res = check_fast(h.events, flagged)
    assert flagged == {"earlier", "s", "u"}
    assert res.counts() == {"lost-turn": 2, "setup-race": 1}


def test_a_valid_history() -> None:
    h = H()
    h.append(0, "s", "a")
    h.read(1, "s", ["a"])
    flagged: set[str] = set()
    res = check_fast(h.events, flagged)
    assert res.valid is True and res.violations == () and res.totals == {}
    assert flagged == set()
    assert res.stats["violations_total"] == 0 and res.stats["violations_by_kind"] == {}


def test_setup_races_are_added_after_the_sessions() -> None:
    h = H()
    e1 = cold_open_failed(h, 7, {"cold_start": True, "attempt": 2})
    h.append(0, "s", "a")
    h.read(1, "s", [])
    cold_open_failed(h, 8, {"cold_start": False, "attempt": 1})  # not a cold start
    cold_open_failed(h, 8, {"cold_start": True, "attempt": 1}, type="ok")
    cold_open_failed(h, 8, {"cold_start": True, "attempt": 1}, f="close")
    e2 = cold_open_failed(h, 9, {"cold_start": True, "attempt": 1}, error=None)
    res = check_fast(h.events)
    assert res.counts() == {"lost-turn": 1, "setup-race": 2}
    assert res.stats["violations_total"] == 3
    assert res.stats["violations_by_kind"] == {"lost-turn": 1, "setup-race": 2}
    races = [v for v in res.violations if v.kind == "setup-race"]
    assert [(v.session, v.events) for v in races] == [(None, (e1,)), (None, (e2,))]
    assert races[0].message == (
        "Process 7 could not open the store on a cold start (attempt 2; every worker opened the fresh "
        "store at the same instant): OperationalError: locked. Set-up code (CREATE TABLE, PRAGMA, "
        "migrations) must work when several processes run it at once.")
    assert "instant): no error given. Set-up" in races[1].message


def test_each_failed_open_is_its_own_setup_race() -> None:
    """Two failed opens that read the same (same process, attempt and error) are two races."""
    h = H()
    cold_open_failed(h, 7, {"cold_start": True, "attempt": 1})
    cold_open_failed(h, 7, {"cold_start": True, "attempt": 1})
    res = check_fast(h.events)
    assert res.counts() == {"setup-race": 2}
    assert [v.events[0].index for v in res.violations] == [0, 1]


@pytest.mark.parametrize("was_on", [True, False])
def test_the_garbage_collector_is_left_as_it_was(was_on: bool) -> None:
    seen: list[bool] = []

    class Spy(Evidence):
        def count(self) -> int:
            seen.append(gc.isenabled())
            return super().count()

    h = three_sessions()
    prior = gc.isenabled()
    try:
        if was_on:
            gc.enable()
        else:
            gc.disable()
        import harness.checker.fast as fast_mod

        mp = pytest.MonkeyPatch()
        mp.setattr(fast_mod, "Evidence", Spy)
        try:
            check_fast(h.events)
        finally:
            mp.undo()
        assert gc.isenabled() is was_on
        # off while the sessions are checked; the verdict is taken after it is restored
        assert len(seen) == 7 and not any(seen[:-1]) and seen[-1] is was_on
    finally:
        if prior:
            gc.enable()
        else:
            gc.disable()


def test_an_ambiguous_session_skips_the_required_turns_and_the_conflicts() -> None:
    h = H()
    h.append(0, "t", "b")
    h.append(0, "t", "b")
    h.append(0, "t", "c")
    h.read(1, "t", ["b", "c"])
    h.read(1, "t", ["c"])
    h.read(1, "t", [])
    sessions, _ = group_by_session(h.events)
    idx = LazyIndexes(sessions)
    found = Evidence()
    assert judge_session(sessions["t"], idx["t"], Owners(idx), found) == (1, 0)
    assert found.count() == 0


def test_judge_session_counts_the_conflicts_and_checks_the_checkpoints() -> None:
    h = H()
    h.inv(2, "append", "u", "c")
    h.inv(3, "append", "u", "d")
    h.read(4, "u", ["c", "d"])
    h.read(5, "u", ["d"])
    h.ok(2)
    h.ok(3)
    h.snapshot(0, "u", "x")
    h.list(0, "u", [])  # x vanished
    sessions, _ = group_by_session(h.events)
    idx = LazyIndexes(sessions)
    found = Evidence()
    assert judge_session(sessions["u"], idx["u"], Owners(idx), found) == (0, 1)
    assert found.totals == {"lost-turn": 1, "vanished-checkpoint": 1}


def test_the_listings_tell_which_rollback_targets_exist() -> None:
    """A rollback of unknown outcome to an id no snapshot op returned did nothing, unless
    some listing showed that id: then it may have restored anything."""
    h = H()
    h.append(0, "s", "a")
    h.list(0, "s", ["ghost"])
    h.inv(1, "rollback", "s", "ghost")
    h.info(1)
    h.read(2, "s", [])
    assert check_fast(h.events).valid is True
    h2 = H()
    h2.append(0, "s", "a")
    h2.list(0, "s", [])
    h2.inv(1, "rollback", "s", "ghost")
    h2.info(1)
    h2.read(2, "s", [])
    assert check_fast(h2.events).counts() == {"lost-turn": 1}


def test_a_session_with_only_failed_rollbacks_is_checked_without_them() -> None:
    h = H()
    h.append(0, "s", "a")
    h.snapshot(0, "s", "x")
    h.inv(0, "rollback", "s", "x")
    h.fail(0)
    h.read(1, "s", [])
    assert check_fast(h.events).counts() == {"lost-turn": 1}


class FakeProver:
    """Proves first the sessions named in ``proves``; records what it is asked."""

    def __init__(self, proves: set[str]) -> None:
        self.proves = proves
        self.first: list[str] = []
        self.judged: list[tuple[str, int]] = []

    def prove_first(self, so: SessionOps) -> bool:
        self.first.append(so.session)
        return so.session in self.proves

    def judge(self, so: SessionOps, found: Evidence) -> None:
        self.judged.append((so.session, found.count()))

    def stats(self) -> dict[str, Any]:
        return {"asked": len(self.first)}


def test_the_prover_is_asked_first_and_judges_only_sessions_found_clean() -> None:
    h = H()
    h.append(0, "p", "a")
    h.read(1, "p", [])  # proven first (says the fake): the fast rules never see it
    h.append(0, "s", "b")
    h.read(1, "s", [])  # a lost turn: not judged
    h.append(0, "v", "c")
    h.read(1, "v", ["c"])  # clean: judged
    prover = FakeProver({"p"})
    res = check_fast(h.events, prover=prover)  # type: ignore[arg-type]
    assert prover.first == ["p", "s", "v"]
    assert prover.judged == [("v", 1)]
    assert res.counts() == {"lost-turn": 1}
    assert res.violations[0].session == "s"
    assert res.stats["checker"] == "fast+exact"
    assert res.stats["exact"] == {"asked": 3}
    assert res.stats["sessions"] == 3


def test_check_sessions_stats_without_a_prover() -> None:
    sessions, _ = group_by_session(three_sessions().events)
    found = Evidence()
    assert check_sessions(sessions, found) == {
        "sessions": 4,
        "ambiguous_sessions": 1,
        "read_conflicts": 1,
        "violations_total": 2,
        "violations_by_kind": {"lost-turn": 2},
    }
