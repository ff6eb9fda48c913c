"""The required turns (harness.checker.required) on literal sessions: each turn's witness
(``P``, ``W``, the read that saw it), what a snapshot certainly holds (``K``), the turns a
rollback dooms, which rollbacks a read's plan names, and what is reported: the exact
violations of the fast rules (``check_fast`` without a prover, so that the rules run on
every session), their sentences and their evidence, on the boundaries where a turn becomes
required (ties in time are not "before").

Times come from ``tests/checker/builder.py``: 10 ns apart, ``same_time=True`` for a tie."""

from __future__ import annotations

from harness.checker.evidence import Evidence
from harness.checker.fast import check_fast
from harness.checker.ops import NEG, group_by_session
from harness.checker.order_tree import OrderTree
from harness.checker.required import RequiredTurns
from harness.checker.result import CheckResult
from harness.checker.rollbacks import RollbackIndex
from harness.checker.turns import LazyIndexes, Owners
from tests.checker.builder import H


def fast(h: H) -> CheckResult:
    return check_fast(h.events)


def found(h: H) -> list[tuple[str, str, list[int]]]:
    """Every violation of the fast rules (all of session ``s``): ``(kind, sentence, event
    indices)``."""
    res = fast(h)
    assert {v.session for v in res.violations} <= {"s"}
    return [(v.kind, v.message, [e.index for e in v.events]) for v in res.violations]


def valid(h: H) -> None:
    res = fast(h)
    assert res.valid, [v.message for v in res.violations]


def required(h: H, s: str = "s") -> RequiredTurns:
    """The session's RequiredTurns as ``judge_session`` builds it, not yet checked."""
    sessions, _ = group_by_session(h.events)
    so = sessions[s]
    indexes = LazyIndexes(sessions)
    ev = Evidence()
    tree = OrderTree(s, indexes[s], Owners(indexes), ev)
    tree.build(so.reads)
    rbi = RollbackIndex(so.rollbacks, so.snapshots, so.lists) if so.rollbacks else None
    return RequiredTurns(s, tree, rbi, ev)


def rbi_of(r: RequiredTurns) -> RollbackIndex:
    assert r.rbi is not None
    return r.rbi


# -- witnesses ----------------------------------------------------------------------------------


def test_witnesses_ack_or_first_read_whichever_first() -> None:
    """An ok append is its own witness (W its invoke, P its ok); a turn a read showed first
    has that read as witness (W the later of the read's and the append's invokes, P the
    read's ok); an unknown append nobody saw has none."""
    h = H()
    h.append(0, "s", "a")  # 10, 20
    h.inv(1, "append", "s", "b")  # 30
    h.info(1)  # 40
    h.read(2, "s", ["a", "b"])  # 50, 60
    h.inv(3, "append", "s", "c")  # 70
    h.read(2, "s", ["a", "b", "c"])  # 80, 90
    h.ok(3)  # 100
    h.inv(4, "append", "s", "d")  # 110
    h.info(4)  # 120
    h.inv(5, "read", "s")  # 130
    h.inv(6, "append", "s", "e")  # 140
    h.ok(5, ["a", "b", "c", "e"])  # 150
    h.ok(6)  # 160
    r = required(h)
    assert r.rbi is None
    assert r.P == {"a": 20, "b": 60, "c": 90, "e": 150}
    assert r.W == {"a": 10, "b": 50, "c": 80, "e": 140}
    assert r.seen_by == {"b": 0, "c": 1, "e": 2}
    assert r.wtok == ["a", "b", "c", "e"]
    assert r.wlo == [10, 50, 80, 140]


def test_witness_order_is_by_w_not_by_name() -> None:
    h = H()
    h.append(0, "s", "z")
    h.append(0, "s", "m")
    h.append(0, "s", "a")
    r = required(h)
    assert r.wtok == ["z", "m", "a"]
    assert r.wlo == [10, 30, 50]


def test_rollback_index_without_rollbacks_taking_effect_is_dropped() -> None:
    """A session whose only rollback failed: no rollback index, the check without rollbacks."""
    h = H()
    h.append(0, "s", "a")
    h.snapshot(0, "s", "x")
    h.inv(0, "rollback", "s", "x")
    h.fail(0)
    r = required(h)
    assert r.rbi is None
    assert r._kept == {}


# -- lost turns without rollbacks ------------------------------------------------------------


def test_lost_turn_sentence_and_evidence_without_rollbacks() -> None:
    h = H()
    h.append(0, "s", "a")
    h.append(1, "s", "b")
    h.read(2, "s", ["a"])
    assert found(h) == [(
        "lost-turn",
        "Turn 'b' was acknowledged by process 1 at event 3, but the read by process 2 at event 5 "
        "(invoked after that, at event 4) does not contain it, and no rollback on session 's' could "
        "run in between.",
        [2, 3, 4, 5],
    )]


def test_up_to_three_lost_turns_are_each_reported() -> None:
    h = H()
    for p, t in enumerate("zyx"):
        h.append(p, "s", t)
    h.read(5, "s", [])
    res = fast(h)
    assert res.counts() == {"lost-turn": 3}
    assert [v.message.split(" was ")[0] for v in res.violations] == ["Turn 'z'", "Turn 'y'", "Turn 'x'"]
    assert all("other such turns" not in v.message for v in res.violations)


def test_more_than_three_lost_turns_are_one_violation_naming_the_first() -> None:
    h = H()
    for p, t in enumerate("zyxw"):
        h.append(p, "s", t)
    h.read(5, "s", [])
    h.read(6, "s", ["z"])  # the other three, still missing, were covered by the first report
    assert found(h) == [(
        "lost-turn",
        "Turn 'z' was acknowledged by process 0 at event 1, but the read by process 5 at event 9 "
        "(invoked after that, at event 8) does not contain it (nor 3 other such turns), and no "
        "rollback on session 's' could run in between.",
        [0, 1, 8, 9],
    )]
    assert fast(h).stats["violations_total"] == 1


def test_a_turn_reported_lost_is_not_reported_again_by_a_later_read() -> None:
    h = H()
    h.append(0, "s", "a")
    h.append(1, "s", "b")
    h.read(2, "s", ["a"])
    h.read(3, "s", ["a"])
    h.append(0, "s", "c")
    h.read(3, "s", ["a"])
    res = fast(h)
    assert res.counts() == {"lost-turn": 2}
    assert [v.events[-1].index for v in res.violations] == [5, 11]
    assert [v.message[:8] for v in res.violations] == ["Turn 'b'", "Turn 'c'"]


def test_lost_turn_witnessed_by_a_read() -> None:
    h = H()
    h.inv(0, "append", "s", "b")
    h.info(0)
    h.read(1, "s", ["b"])
    h.read(2, "s", [])
    assert found(h) == [(
        "lost-turn",
        "Turn 'b' was seen by the read of process 1 at event 3, but the read by process 2 at event 5 "
        "(invoked after that, at event 4) does not contain it, and no rollback on session 's' could "
        "run in between.",
        [2, 3, 4, 5],
    )]


def test_ack_at_the_instant_the_read_is_invoked_is_not_before_it() -> None:
    h = H()
    h.append(0, "s", "a")
    h.inv(1, "append", "s", "b")
    h.inv(2, "read", "s")
    h.ok(1, same_time=True)
    h.ok(2, ["a"])
    valid(h)
    h2 = H()
    h2.append(0, "s", "a")
    h2.inv(1, "append", "s", "b")
    h2.ok(1)
    h2.inv(2, "read", "s")
    h2.ok(2, ["a"])
    assert fast(h2).counts() == {"lost-turn": 1}


def test_a_read_with_bad_turns_is_not_checked_for_missing_ones() -> None:
    """... but the reads after it are."""
    h = H()
    h.append(0, "s", "a")
    h.read(1, "s", ["zz"])
    assert fast(h).counts() == {"phantom-turn": 1}
    h.read(1, "s", [])
    assert fast(h).counts() == {"phantom-turn": 1, "lost-turn": 1}


def test_a_read_with_bad_turns_is_not_checked_for_missing_ones_with_rollbacks() -> None:
    h = H()
    h.snapshot(0, "s", "x")
    h.rollback(0, "s", "x")
    h.append(0, "s", "a")
    h.read(1, "s", ["zz"])
    assert fast(h).counts() == {"phantom-turn": 1}
    h.read(1, "s", [])
    assert fast(h).counts() == {"phantom-turn": 1, "lost-turn": 1}


# -- lost turns with rollbacks ----------------------------------------------------------------


def test_lost_turn_names_the_candidate_that_completed_last() -> None:
    """Two overlapping rollbacks: the later completion (invoked first) is named."""
    h = H()
    h.snapshot(0, "s", "x")
    h.inv(1, "rollback", "s", "x")  # 2
    h.inv(2, "rollback", "s", "x")  # 3
    h.ok(2)  # 4
    h.ok(1)  # 5
    h.inv(3, "append", "s", "b")
    h.info(3)
    h.read(4, "s", ["b"])  # 8, 9
    h.read(4, "s", [])  # 10, 11
    assert found(h) == [(
        "lost-turn",
        "Turn 'b' was seen by the read of process 4 at event 9, but the read by process 4 at event 11 "
        "(invoked after that, at event 10) does not contain it, and the last rollback that could "
        "precede the read (process 1 at event 2) completed before the turn was there.",
        [2, 5, 8, 9, 10, 11],
    )]


def test_lost_turn_when_every_rollback_came_after_the_read() -> None:
    h = H()
    h.append(0, "s", "a")
    h.read(1, "s", [])
    h.snapshot(0, "s", "x")
    h.rollback(0, "s", "x")
    assert found(h) == [(
        "lost-turn",
        "Turn 'a' was acknowledged by process 0 at event 1, but the read by process 1 at event 3 "
        "(invoked after that, at event 2) does not contain it, and no rollback on session 's' could "
        "run in between.",
        [0, 1, 2, 3],
    )]


def test_append_invoked_as_the_rollback_completes_may_precede_it() -> None:
    h = H()
    h.snapshot(0, "s", "x")
    h.inv(0, "rollback", "s", "x")
    h.ok(0)
    h.inv(1, "append", "s", "b", same_time=True)
    h.ok(1)
    h.read(2, "s", [])
    valid(h)
    h2 = H()
    h2.snapshot(0, "s", "x")
    h2.rollback(0, "s", "x")
    h2.append(1, "s", "b")
    h2.read(2, "s", [])
    assert fast(h2).counts() == {"lost-turn": 1}


def test_ack_at_the_read_invoke_after_a_rollback_is_not_required() -> None:
    h = H()
    h.snapshot(0, "s", "x")
    h.rollback(0, "s", "x")
    h.append(0, "s", "a")
    h.inv(1, "append", "s", "b")
    h.inv(2, "read", "s")
    h.ok(1, same_time=True)
    h.ok(2, ["a"])
    valid(h)


def test_read_invoked_as_the_rollback_completes_may_see_the_state_before() -> None:
    """The rollback is not certainly before the read: turns it dooms may still show."""
    h = H()
    h.append(0, "s", "a")
    h.snapshot(0, "s", "x")
    h.append(0, "s", "b")
    h.inv(0, "rollback", "s", "x")
    h.ok(0)
    h.inv(1, "read", "s", same_time=True)
    h.ok(1, ["a", "b"])
    valid(h)


# -- what a snapshot certainly holds ----------------------------------------------------------


def test_kept_of_a_snapshot_after_a_rollback_is_what_the_rollback_restored() -> None:
    h = H()
    h.append(0, "s", "a")
    h.snapshot(0, "s", "x")
    h.append(1, "s", "b")
    h.rollback(0, "s", "x")
    h.snapshot(0, "s", "y")
    h.append(1, "s", "c")
    h.rollback(0, "s", "y")
    h.read(1, "s", [])
    r = required(h)
    assert r._kept == {"x": frozenset({"a"}), "y": frozenset({"a"})}
    assert found(h) == [(
        "bad-rollback",
        "The read by process 1 at event 15 lacks turn 'a', which was acknowledged by process 0 at "
        "event 1, although every rollback that can be the last before that read restores a snapshot "
        "holding the turn (the rollback by process 0 at event 12 to snapshot 'y', taken at event 9).",
        [0, 1, 8, 9, 12, 13, 14, 15],
    )]


def test_kept_only_for_snapshots_some_rollback_targets() -> None:
    h = H()
    h.append(0, "s", "a")
    h.snapshot(0, "s", "x")
    h.snapshot(0, "s", "y")
    h.inv(0, "rollback", "s", "y")
    h.info(0)
    h.inv(1, "rollback", "s", "ghost")  # no such snapshot (nor any listing): did nothing
    h.info(1)
    r = required(h)
    assert r._kept == {"y": frozenset({"a"})}


def test_kept_of_a_snapshot_concurrent_with_an_append_lacks_it() -> None:
    h = H()
    h.append(0, "s", "a")
    h.inv(1, "append", "s", "b")
    h.snapshot(0, "s", "x")
    h.ok(1)
    h.rollback(0, "s", "x")
    r = required(h)
    assert r._kept == {"x": frozenset({"a"})}


def test_kept_of_a_snapshot_whose_last_rollback_may_not_have_run() -> None:
    """A snapshot that may or may not follow a rollback (none certainly before it) holds
    only what it certainly held on its own: turns acknowledged before it began."""
    h = H()
    h.inv(9, "snapshot", "s")  # y: 10
    h.append(0, "s", "a")
    h.snapshot(0, "s", "x")
    h.rollback(0, "s", "x")
    h.ok(9, "y")
    h.rollback(0, "s", "y")
    h.read(1, "s", [])
    r = required(h)
    assert r._kept == {"x": frozenset({"a"}), "y": frozenset()}
    valid(h)


def test_kept_is_computed_in_completion_order_of_the_snapshots() -> None:
    """w began first, but x completed first; w, concurrent with the rollback to x, certainly
    holds a (acknowledged before w began) through x."""
    h = H()
    h.append(0, "s", "a")  # 10, 20
    h.inv(9, "snapshot", "s")  # 30
    h.snapshot(0, "s", "x")  # 40, 50
    h.rollback(0, "s", "x")  # 60, 70
    h.ok(9, "w")  # 80
    h.rollback(0, "s", "w")
    h.read(1, "s", [])
    r = required(h)
    assert r._kept == {"x": frozenset({"a"}), "w": frozenset({"a"})}
    assert fast(h).counts() == {"bad-rollback": 1}


def test_kept_along_a_chain_of_snapshots_each_restored_before_the_next() -> None:
    """Each snapshot certainly holds a only through the one restored before it: computed in
    completion order (which is not the order of the ids, nor of a set's iteration)."""
    h = H()
    h.append(0, "s", "a")
    h.append(0, "s", "b")
    h.read(1, "s", ["a", "b"])
    for sid in "fedcba":
        h.snapshot(0, "s", sid)
        h.rollback(0, "s", sid)
    h.read(1, "s", [])
    r = required(h)
    assert r._kept == {sid: frozenset({"a", "b"}) for sid in "fedcba"}
    assert found(h)[0][1].startswith("The read by process 1 at event 31 lacks turn 'a' (and 1 more turns)")


def test_kept_of_a_snapshot_invoked_as_a_turn_is_acknowledged_lacks_it() -> None:
    """Snapshot y may be taken before a took effect (a acknowledged the instant y began) and
    before the rollback to x (which holds a) runs: y certainly holds nothing."""
    h = H()
    h.inv(0, "append", "s", "a")  # 10
    h.ok(0)  # 20
    h.inv(9, "snapshot", "s", same_time=True)  # 20
    h.snapshot(0, "s", "x")  # 30, 40
    h.rollback(0, "s", "x")  # 50, 60
    h.ok(9, "y")  # 70
    h.rollback(0, "s", "y")
    h.read(1, "s", [])
    r = required(h)
    assert r._kept == {"x": frozenset({"a"}), "y": frozenset()}
    valid(h)


def test_kept_of_a_snapshot_after_a_certain_rollback_keeps_every_restored_turn() -> None:
    h = H()
    h.append(0, "s", "a")
    h.snapshot(0, "s", "x")
    h.inv(1, "append", "s", "b")  # unknown: it may land in y or not
    h.info(1)
    h.rollback(0, "s", "x")
    h.snapshot(0, "s", "y")
    h.rollback(0, "s", "y")
    r = required(h)
    assert r._kept == {"x": frozenset({"a"}), "y": frozenset({"a"})}


def test_kept_through_a_rollback_certainly_before_is_not_filtered_by_time() -> None:
    """Z is not NEG (r0 certainly precedes y): what r0's snapshot certainly holds, y holds,
    even a turn acknowledged after y began. (A rollback to w before w was taken: the
    checkpoints report it; the required turns still reason from w's contents.)"""
    h = H()
    h.append(0, "s", "a")  # 10, 20
    h.rollback(0, "s", "w")  # 30, 40
    h.inv(9, "snapshot", "s")  # 50
    h.append(0, "s", "b")  # 60, 70
    h.snapshot(0, "s", "w")  # 80, 90
    h.ok(9, "y")  # 100
    h.rollback(0, "s", "y")  # 110, 120
    h.read(1, "s", [])
    r = required(h)
    assert r._kept == {"w": frozenset({"b"}), "y": frozenset({"b"})}
    assert fast(h).counts() == {"bad-rollback": 2}


def test_must_hold_of_an_interval_with_and_without_candidates() -> None:
    h = H()
    h.append(0, "s", "a")  # 10, 20
    h.snapshot(0, "s", "x")  # 30, 40
    h.append(0, "s", "b")  # 50, 60
    h.rollback(0, "s", "x")  # 70, 80
    h.append(0, "s", "c")  # 90, 100
    r = required(h)
    assert r._must_hold(5, 200) == set()
    assert r._must_hold(20, 25) == set()  # a acknowledged at 20: not before
    assert r._must_hold(21, 25) == {"a"}
    assert r._must_hold(61, 66) == {"a", "b"}
    assert r._must_hold(60, 66) == {"a"}
    assert r._must_hold(65, 200) == {"a"}  # the rollback may run in it or not: a either way
    assert r._must_hold(81, 200) == {"a"}  # b removed by the rollback, c not yet appended
    assert r._must_hold(100, 200) == {"a"}  # c acknowledged at 100: not before
    assert r._must_hold(101, 200) == {"a", "c"}


def test_must_hold_when_the_turn_appears_as_the_rollback_completes() -> None:
    h = H()
    h.snapshot(0, "s", "x")  # 10, 20
    h.inv(0, "rollback", "s", "x")  # 30
    h.ok(0)  # 40
    h.inv(1, "append", "s", "b", same_time=True)  # 40
    h.ok(1)  # 50
    r = required(h)
    assert r.W["b"] == 40
    assert r._must_hold(60, 70) == set()
    h.snapshot(0, "s", "y")
    h.rollback(0, "s", "y")
    h.read(2, "s", [])
    valid(h)


# -- several candidates: turns all of them keep -----------------------------------------------


def _two_concurrent_rollbacks(first: str = "y", second: str = "x") -> H:
    h = H()
    h.append(0, "s", "a")  # 0, 1
    h.snapshot(0, "s", "x")  # 2, 3
    h.append(0, "s", "b")  # 4, 5
    h.snapshot(0, "s", "y")  # 6, 7
    h.append(0, "s", "c")  # 8, 9
    h.inv(1, "rollback", "s", first)  # 10
    h.inv(2, "rollback", "s", second)  # 11
    h.ok(1)  # 12
    h.ok(2)  # 13
    return h


def test_two_candidates_require_what_both_snapshots_hold() -> None:
    for shown in (["a"], ["a", "b"]):
        h = _two_concurrent_rollbacks()
        h.read(3, "s", shown)
        valid(h)
    h = _two_concurrent_rollbacks()
    h.read(3, "s", [])
    r = required(h)
    z, cands = rbi_of(r).candidates(h.events[-2].time, h.events[-1].time)
    assert z == 120
    assert [c[2] for c in cands] == ["x", "y"]
    assert r._kept_by(cands) == frozenset({"a"})
    assert r._kept_by(cands[::-1]) == frozenset({"a"})
    assert r._kept_by(cands[1:]) == frozenset({"a", "b"})
    assert r._kept_by([]) is None
    assert found(h) == [(
        "bad-rollback",
        "The read by process 3 at event 15 lacks turn 'a', which was acknowledged by process 0 at "
        "event 1, although every rollback that can be the last before that read restores a snapshot "
        "holding the turn (the rollback by process 2 at event 11 to snapshot 'x', taken at event 3; "
        "the rollback by process 1 at event 10 to snapshot 'y', taken at event 7).",
        [0, 1, 2, 3, 6, 7, 10, 11, 12, 13, 14, 15],
    )]


def test_a_turn_doomed_by_one_of_two_candidates_may_show() -> None:
    """Only a rollback certainly the last one dooms turns: with two candidates, none."""
    h = _two_concurrent_rollbacks()
    h.read(3, "s", ["a", "b"])
    r = required(h)
    plan = r._plan(h.events[-2].time, h.events[-1].time)
    assert plan[4] is None
    assert plan[2] == 140 and plan[3] == frozenset({"a"})
    valid(h)


def test_a_candidate_whose_snapshot_holds_nothing_certain_leaves_nothing_required() -> None:
    h = H()
    h.snapshot(0, "s", "e")  # empty
    h.append(0, "s", "a")
    h.snapshot(0, "s", "x")
    h.inv(1, "rollback", "s", "x")
    h.inv(2, "rollback", "s", "e")
    h.ok(1)
    h.ok(2)
    h.read(3, "s", [])
    r = required(h)
    _, cands = rbi_of(r).candidates(h.events[-2].time, h.events[-1].time)
    assert [c[2] for c in cands] == ["e", "x"]
    assert r._kept == {"e": frozenset(), "x": frozenset({"a"})}
    assert r._kept_by(cands) is None
    assert r._kept_by(cands[::-1]) is None
    assert r._kept_by(cands[1:]) == frozenset({"a"})
    assert r._kept_by(cands[:1]) is None
    valid(h)


def test_snapshots_holding_disjoint_turns_leave_nothing_required() -> None:
    h = H()
    h.append(0, "s", "a")
    h.snapshot(0, "s", "x")
    h.rollback(0, "s", "x")
    h.snapshot(0, "s", "e")  # after the rollback: holds a
    h.inv(1, "rollback", "s", "e")
    h.inv(2, "rollback", "s", "x")
    h.ok(1)
    h.ok(2)
    r = required(h)
    _, cands = rbi_of(r).candidates(h.events[-1].time + 1, h.events[-1].time + 2)
    assert r._kept_by(cands) == frozenset({"a"})
    r._kept["e"] = frozenset({"b"})
    assert r._kept_by(cands) is None
    r._kept["e"] = frozenset({"a", "b"})
    r._kept["x"] = frozenset({"b", "c"})
    assert r._kept_by(cands) == frozenset({"b"})


def test_a_candidate_to_a_non_string_id_leaves_nothing_required() -> None:
    h = H()
    h.append(0, "s", "a")
    h.snapshot(0, "s", "x")
    h.inv(1, "rollback", "s", 7)
    h.inv(2, "rollback", "s", "x")
    h.ok(1)
    h.ok(2)
    r = required(h)
    _, cands = rbi_of(r).candidates(h.events[-1].time + 1, h.events[-1].time + 2)
    assert sorted(map(str, (c[2] for c in cands))) == ["None", "x"]
    assert r._kept_by(cands) is None
    assert r._kept_by([c for c in cands if c[2] is None]) is None
    r._kept["None"] = frozenset({"a"})  # a key that must not be looked up for None
    assert r._kept_by([c for c in cands if c[2] is None]) is None


def test_bad_rollback_names_at_most_three_candidates() -> None:
    h = H()
    h.append(0, "s", "a")  # 0, 1
    for sid in "wxyz":
        h.snapshot(0, "s", sid)  # 2..9
    for p, sid in enumerate("wxyz", start=1):
        h.inv(p, "rollback", "s", sid)  # 10..13
    for p in range(1, 5):
        h.ok(p)  # 14..17
    h.read(9, "s", [])  # 18, 19
    assert found(h) == [(
        "bad-rollback",
        "The read by process 9 at event 19 lacks turn 'a', which was acknowledged by process 0 at "
        "event 1, although every rollback that can be the last before that read restores a snapshot "
        "holding the turn (the rollback by process 4 at event 13 to snapshot 'z', taken at event 9; "
        "the rollback by process 3 at event 12 to snapshot 'y', taken at event 7; the rollback by "
        "process 2 at event 11 to snapshot 'x', taken at event 5).",
        [0, 1, 4, 5, 6, 7, 8, 9, 11, 12, 13, 15, 16, 17, 18, 19],
    )]


def test_bad_rollback_with_several_turns_names_the_first_by_witness() -> None:
    """The first turn missing (by W) is reported, the others are covered by it."""
    h = H()
    h.append(0, "s", "z")
    h.append(0, "s", "m")
    h.append(0, "s", "a")
    h.snapshot(0, "s", "x")  # 6, 7
    h.append(0, "s", "q")
    h.rollback(0, "s", "x")  # 10, 11
    h.read(1, "s", ["z"])  # 12, 13
    h.read(1, "s", ["z", "m"])  # 14, 15: a still missing, covered by the first report
    assert found(h) == [(
        "bad-rollback",
        "The read by process 1 at event 13 lacks turn 'm' (and 1 more turns), which was "
        "acknowledged by process 0 at event 3, although every rollback that can be the last before "
        "that read restores a snapshot holding the turn (the rollback by process 0 at event 10 to "
        "snapshot 'x', taken at event 7).",
        [2, 3, 6, 7, 10, 11, 12, 13],
    )]
    assert fast(h).stats["violations_total"] == 1
    h.read(1, "s", [])  # 16, 17: z missing now too, m and a already covered
    assert found(h)[0] == (
        "bad-rollback",
        "The read by process 1 at event 17 lacks turn 'z', which was acknowledged by process 0 at "
        "event 1, although every rollback that can be the last before that read restores a snapshot "
        "holding the turn (the rollback by process 0 at event 10 to snapshot 'x', taken at event 7).",
        [0, 1, 6, 7, 10, 11, 16, 17],
    )
    assert fast(h).stats["violations_total"] == 2


def test_a_turn_reported_missing_after_a_rollback_is_passed_over_for_the_next() -> None:
    """A later read lacking a turn already reported and a new one (later by W) reports the
    new one."""
    h = H()
    h.append(0, "s", "a")
    h.append(0, "s", "m")
    h.append(0, "s", "z")
    h.snapshot(0, "s", "x")
    h.append(0, "s", "q")
    h.rollback(0, "s", "x")  # 10, 11
    h.read(1, "s", ["m", "z"])  # 12, 13: lacks a
    h.read(1, "s", [])  # 14, 15: lacks a, m and z
    res = fast(h)
    assert res.counts() == {"bad-rollback": 2}
    assert [v.message[:55] for v in res.violations] == [
        "The read by process 1 at event 13 lacks turn 'a', which",
        "The read by process 1 at event 15 lacks turn 'm' (and 1",
    ]


def test_a_read_blamed_for_a_bad_rollback_is_not_reported_for_its_conflict() -> None:
    h = H()
    h.append(0, "s", "a")
    h.append(0, "s", "b")
    h.snapshot(0, "s", "x")
    h.read(1, "s", ["a", "b"])
    h.rollback(0, "s", "x")
    h.read(1, "s", ["b"])  # lacks a (bad-rollback), and disagrees with the first read on b
    assert len(required(h).tree.conflicts) == 1
    assert fast(h).counts() == {"bad-rollback": 1}


def test_a_read_blamed_for_a_zombie_is_not_reported_for_its_conflict() -> None:
    h = H()
    h.append(0, "s", "a")
    h.snapshot(0, "s", "x")
    h.inv(1, "append", "s", "b")
    h.info(1)
    h.read(2, "s", ["a", "b"])  # b was there before the rollback
    h.rollback(0, "s", "x")
    h.append(0, "s", "c")
    h.read(2, "s", ["a", "c", "b"])  # b should be gone (and c is not where b's read put it)
    assert len(required(h).tree.conflicts) == 1
    res = fast(h)
    assert res.counts() == {"bad-rollback": 1}
    assert "should have removed it" in res.violations[0].message


def test_a_read_blamed_for_a_lost_turn_is_not_reported_for_its_conflict() -> None:
    h = H()
    h.append(0, "s", "a")
    h.append(0, "s", "b")
    h.read(1, "s", ["a", "b"])
    h.read(1, "s", ["b"])
    assert len(required(h).tree.conflicts) == 1
    res = fast(h)
    assert res.counts() == {"lost-turn": 1}
    assert "no rollback on session 's' could run in between" in res.violations[0].message


def test_bad_rollback_leaves_a_turn_already_lost_to_the_lost_turn() -> None:
    h = H()
    h.append(0, "s", "a")
    h.snapshot(0, "s", "x")
    h.read(1, "s", [])  # a lost here, before any rollback
    h.rollback(0, "s", "x")
    h.read(1, "s", [])
    assert fast(h).counts() == {"lost-turn": 1}


def test_a_read_concurrent_with_every_rollback_needs_only_what_preceded_it() -> None:
    """No rollback certainly before the read (Z is NEG): a turn the snapshot holds but
    acknowledged after the read began is not required."""
    h = H()
    h.inv(9, "read", "s")
    h.append(0, "s", "a")
    h.snapshot(0, "s", "x")
    h.rollback(0, "s", "x")
    h.ok(9, [])
    r = required(h)
    assert r._kept == {"x": frozenset({"a"})}
    valid(h)


def test_a_read_invoked_as_the_turn_is_acknowledged_need_not_show_it_after_a_rollback() -> None:
    h = H()
    h.inv(0, "append", "s", "a")
    h.ok(0)
    h.inv(9, "read", "s", same_time=True)
    h.snapshot(0, "s", "x")
    h.rollback(0, "s", "x")
    h.ok(9, [])
    valid(h)


def test_a_read_concurrent_with_the_rollback_still_needs_what_preceded_it() -> None:
    h = H()
    h.append(0, "s", "a")
    h.snapshot(0, "s", "x")
    h.inv(9, "read", "s")
    h.rollback(0, "s", "x")
    h.ok(9, [])
    res = fast(h)
    assert res.counts() == {"bad-rollback": 1}


# -- doomed turns -----------------------------------------------------------------------------


def test_zombie_sentence_and_evidence() -> None:
    h = H()
    h.append(0, "s", "a")  # 0, 1
    h.snapshot(0, "s", "x")  # 2, 3
    h.append(1, "s", "z")  # 4, 5
    h.append(1, "s", "c")  # 6, 7
    h.rollback(0, "s", "x")  # 8, 9
    h.read(1, "s", ["a", "z", "c"])  # 10, 11
    assert found(h) == [(
        "bad-rollback",
        "Turn 'z' was appended (process 1 at event 4) after snapshot 'x' was taken (event 3) and "
        "before the rollback to it by process 0 at event 8 completed, so the rollback should have "
        "removed it, yet the later read by process 1 at event 11 still shows it.",
        [2, 3, 4, 5, 8, 9, 10, 11],
    )]


def test_zombie_names_the_first_doomed_turn_by_witness() -> None:
    h = H()
    h.snapshot(0, "s", "x")  # 0, 1
    h.append(1, "s", "z")  # 2, 3
    h.append(1, "s", "c")  # 4, 5
    h.rollback(0, "s", "x")  # 6, 7
    h.read(1, "s", ["z", "c"])  # 8, 9
    res = fast(h)
    assert res.counts() == {"bad-rollback": 1}
    assert res.violations[0].message.startswith("Turn 'z' was appended (process 1 at event 2)")
    h2 = H()
    h2.snapshot(0, "s", "x")
    h2.append(1, "s", "c")
    h2.append(1, "s", "z")
    h2.rollback(0, "s", "x")
    h2.read(1, "s", ["c", "z"])
    assert fast(h2).violations[0].message.startswith("Turn 'c' was appended (process 1 at event 2)")


def test_doomed_turns_of_a_rollback() -> None:
    """After the snapshot and after the last ok rollback before it (the earlier ones were
    removed by that one), acknowledged before it began."""
    h = H()
    h.append(0, "s", "a")  # 10, 20
    h.snapshot(0, "s", "x")  # 30, 40
    h.append(0, "s", "b")  # 50, 60
    h.rollback(0, "s", "x")  # 70, 80
    h.append(0, "s", "c")  # 90, 100
    h.inv(1, "append", "s", "d")  # 110: acknowledged after the rollback began
    h.inv(2, "append", "s", "e")  # 120: never acknowledged nor seen
    h.inv(0, "rollback", "s", "x")  # 130
    h.ok(1)  # 140
    h.ok(0)  # 150
    h.info(2)  # 160
    r = required(h)
    first, second = rbi_of(r).ok
    assert r._doomed_by(second) == {"c"}
    assert r._doomed_by(first) == {"b"}
    assert r._atok == ["a", "b", "c", "d"]
    assert r._alo == [10, 50, 90, 110]
    assert r._doomed == {6: {"b"}, 12: {"c"}}
    once = r._doomed_by(second)
    assert r._doomed_by(second) is once and r._doomed[12] is once  # computed once per rollback


def test_doomed_by_a_rollback_to_no_known_snapshot_is_nothing() -> None:
    h = H()
    h.append(0, "s", "a")
    h.inv(0, "rollback", "s", "x")
    h.ok(0)
    r = required(h)
    (rb,) = rbi_of(r).ok
    assert r._doomed_by(rb) == set()
    assert r._doomed == {2: set()}
    assert r._alo == [] and r._atok == []


def test_a_turn_appended_as_the_snapshot_completes_may_be_in_it() -> None:
    h = H()
    h.inv(0, "snapshot", "s")
    h.ok(0, "x")
    h.inv(1, "append", "s", "b", same_time=True)
    h.ok(1)
    h.rollback(0, "s", "x")
    h.read(2, "s", ["b"])
    r = required(h)
    assert r._doomed_by(rbi_of(r).ok[0]) == set()
    valid(h)


def test_a_turn_appended_as_the_rollback_is_invoked_may_follow_it() -> None:
    h = H()
    h.snapshot(0, "s", "x")
    h.inv(1, "append", "s", "b")
    h.inv(0, "rollback", "s", "x", same_time=True)
    h.ok(1)
    h.ok(0)
    h.read(2, "s", ["b"])
    r = required(h)
    assert r._doomed_by(rbi_of(r).ok[0]) == set()
    valid(h)


def test_a_turn_acknowledged_as_the_rollback_is_invoked_may_follow_it() -> None:
    h = H()
    h.snapshot(0, "s", "x")
    h.inv(1, "append", "s", "b")
    h.inv(0, "rollback", "s", "x")
    h.ok(1, same_time=True)
    h.ok(0)
    h.read(2, "s", ["b"])
    r = required(h)
    assert r._doomed_by(rbi_of(r).ok[0]) == set()
    valid(h)


def test_a_turn_appended_as_an_earlier_rollback_completes_is_left_to_it() -> None:
    h = H()
    h.snapshot(0, "s", "x")  # 10, 20
    h.inv(0, "rollback", "s", "x")  # 30
    h.ok(0)  # 40
    h.inv(1, "append", "s", "b", same_time=True)  # 40
    h.ok(1)  # 50
    h.append(1, "s", "c")  # 60, 70
    h.rollback(0, "s", "x")  # 80, 90
    r = required(h)
    assert r._doomed_by(rbi_of(r).ok[1]) == {"c"}


def test_the_plan_of_reads_between_the_same_rollback_events_is_shared() -> None:
    h = H()
    h.append(0, "s", "a")
    h.snapshot(0, "s", "x")
    h.append(0, "s", "b")
    h.rollback(0, "s", "x")  # 70, 80
    h.read(1, "s", ["a"])  # 90, 100
    h.read(1, "s", ["a"])  # 110, 120
    r = required(h)
    p1 = r._plan(90, 100)
    assert p1 == (70, [rbi_of(r).ok[0]], 80, frozenset({"a"}), {"b"})
    assert r._plan(110, 120) is p1
    assert list(r._plans) == [rbi_of(r).epoch(90, 100)]
    assert r._plan(75, 120) == (NEG, [rbi_of(r).ok[0]], 80, frozenset({"a"}), {"b"})
    assert len(r._plans) == 2


def test_plan_without_candidates() -> None:
    h = H()
    h.append(0, "s", "a")
    h.snapshot(0, "s", "x")
    h.rollback(0, "s", "x")  # 50, 60
    r = required(h)
    assert r._plan(10, 40) == (NEG, [], NEG, None, None)


def test_plan_dooms_nothing_when_the_rollback_removes_nothing() -> None:
    h = H()
    h.append(0, "s", "a")
    h.snapshot(0, "s", "x")
    h.rollback(0, "s", "x")  # 50, 60
    r = required(h)
    assert r._plan(70, 80) == (50, [rbi_of(r).ok[0]], 60, frozenset({"a"}), None)


def test_zombie_check_runs_once_per_read_and_once_per_rollback() -> None:
    h = H()
    h.snapshot(0, "s", "x")
    h.append(1, "s", "b")
    h.rollback(0, "s", "x")
    h.read(1, "s", ["b"])
    h.read(2, "s", ["b"])
    res = fast(h)
    assert res.counts() == {"bad-rollback": 2}
    assert [v.events[-1].index for v in res.violations] == [7, 9]
