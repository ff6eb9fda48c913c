"""Reads that disagree about what precedes a turn, part by part (harness.checker.conflicts):
``classify`` on literal pairs of reads (which shape each disagreement proves, tried in
order, and the exact finding: kind, key, sentence, turns, reads, blamed read), and
``report_conflicts`` on literal sessions (the evidence it adds, the reads it skips because a
violation already blames them, one placement problem per turn).

``report_conflicts`` runs on the order tree of the session's reads alone (no other rule),
as ``fast.judge_session`` builds it; histories are built with tests.checker.builder.H (each
event 10 ns after the one before)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from harness.checker.conflicts import Finding, Side, classify, report_conflicts
from harness.checker.evidence import Evidence
from harness.checker.ops import group_by_session
from harness.checker.order_tree import OrderTree
from harness.checker.turns import LazyIndexes, Owners
from harness.history import Event
from tests.checker.builder import H


def side(n: int, lo: int, hi: int, toks: Sequence[str], t: str, p: int = 0) -> Side:
    """A read by process ``p`` invoked at time ``lo`` (event ``n``) and completed at ``hi``
    (event ``n + 1``), showing ``toks``, with the disputed turn ``t`` in it."""
    inv = Event(index=n, time=lo, process=p, type="invoke", f="read", session="s")
    comp = Event(index=n + 1, time=hi, process=p, type="ok", f="read", session="s")
    return (inv, comp, list(toks), list(toks).index(t))


def reads(one: Side, two: Side) -> tuple[Event, ...]:
    return (one[0], one[1], two[0], two[1])


def at(e: Event) -> str:
    return f"process {e.process} at event {e.index}"


# -- classify -----------------------------------------------------------------------------------


def test_reads_that_agree_on_what_precedes_the_turn_prove_nothing() -> None:
    old = side(0, 0, 10, ["a", "b", "t"], "t")
    new = side(2, 20, 30, ["a", "b", "t", "c", "d"], "t")
    assert classify("s", old, new, "t") is None
    # a turn shown twice before t by one read only: the same turns, nothing more to say
    assert classify("s", side(0, 0, 10, ["a", "a", "t"], "t"), side(2, 20, 30, ["a", "t"], "t"), "t") is None


def test_a_turn_the_first_read_shows_before_and_the_second_after_is_reordered() -> None:
    old = side(0, 0, 10, ["z", "t"], "t", p=1)
    new = side(2, 5, 30, ["t", "z", "y"], "t", p=2)  # z right after t, not the last
    msg = f"The read by {at(old[1])} shows turn 'z' before 't', but the read by {at(new[1])} shows 't' before 'z'."
    assert classify("s", old, new, "t") == Finding("reordered-turns", ("t", "z"), msg, ("z", "t"), reads(old, new),
                                                   new[1])


def test_a_turn_the_second_read_shows_before_and_the_first_after_is_reordered() -> None:
    old = side(0, 0, 10, ["t", "a", "x"], "t", p=1)  # a right after t, not the last
    new = side(2, 20, 30, ["a", "t"], "t", p=2)
    msg = f"The read by {at(new[1])} shows turn 'a' before 't', but the read by {at(old[1])} shows 't' before 'a'."
    assert classify("s", old, new, "t") == Finding("reordered-turns", ("a", "t"), msg, ("a", "t"), reads(new, old),
                                                   new[1])


def test_the_later_completion_is_blamed_for_a_reordering_whichever_side_it_is() -> None:
    old = side(4, 0, 10, ["a", "t"], "t", p=1)  # completes at event 5
    new = side(0, 5, 30, ["t", "a"], "t", p=2)  # completes at event 1
    f = classify("s", old, new, "t")
    assert f is not None and f.kind == "reordered-turns" and f.blame is old[1]


def test_a_turn_missing_from_one_read_before_the_other_shows_it_after_is_reordered_first() -> None:
    """The first read lacks ``m`` before t, the second shows it after t: reordered, though
    the second also lacks a turn the first shows there (``q``) and came later."""
    old = side(0, 0, 10, ["q", "m", "t"], "t")
    new = side(2, 20, 30, ["t", "x", "m"], "t")
    f = classify("s", old, new, "t")
    assert f is not None and (f.kind, f.key, f.turns) == ("reordered-turns", ("m", "t"), ("m", "t"))


def test_the_same_turns_in_another_order_name_the_first_place_they_differ() -> None:
    old = side(0, 0, 10, ["x", "a", "b", "t"], "t", p=1)
    new = side(2, 20, 30, ["x", "b", "a", "t"], "t", p=2)
    msg = f"The read by {at(old[1])} shows turn 'a' before 'b', but the read by {at(new[1])} shows 'b' before 'a'."
    assert classify("s", old, new, "t") == Finding("reordered-turns", ("a", "b"), msg, ("a", "b"), reads(old, new),
                                                   new[1])
    old = side(0, 0, 10, ["x", "y", "c", "b", "t"], "t", p=1)
    new = side(2, 20, 30, ["x", "y", "b", "c", "t"], "t", p=2)
    f = classify("s", old, new, "t")
    assert f is not None and (f.key, f.turns) == (("b", "c"), ("c", "b"))


def test_a_turn_gone_from_a_read_invoked_after_the_first_completed_is_lost() -> None:
    old = side(0, 0, 10, ["a", "m", "n", "t"], "t", p=1)
    new = side(2, 20, 30, ["a", "t"], "t", p=2)
    msg = (f"Turn 'm' precedes turn 't' in the read by {at(old[1])}, which completed before the read by "
           f"{at(new[1])} was invoked (event 2), but that later read shows 't' and not 'm': a turn that preceded "
           f"'t' cannot leave while 't' stays, rollbacks included.")
    assert classify("s", old, new, "t") == Finding("lost-turn", "m", msg, ("m", "t"), reads(old, new), new[1])


def test_a_lost_turn_is_preferred_to_a_back_dated_one() -> None:
    old = side(0, 0, 10, ["m", "t"], "t")
    new = side(2, 20, 30, ["c", "t"], "t")
    f = classify("s", old, new, "t")
    assert f is not None and (f.kind, f.key) == ("lost-turn", "m")


def test_a_turn_put_before_a_turn_already_visible_is_back_dated() -> None:
    old = side(0, 0, 10, ["a", "t"], "t", p=1)
    new = side(2, 20, 30, ["a", "c", "d", "t"], "t", p=2)
    msg = (f"The read by {at(new[1])} shows turn 'c' before turn 't', but the read by {at(old[1])}, which "
           f"completed before that one was invoked (event 2), showed 't' without 'c': 'c' was put behind a turn "
           f"that was already visible in session 'sess'.")
    assert classify("sess", old, new, "t") == Finding("back-dated-turn", "c", msg, ("c", "t"), reads(old, new),
                                                      new[1])


def test_reads_that_overlap_in_time_are_incompatible_the_second_showing_more() -> None:
    old = side(0, 0, 20, ["t"], "t", p=1)
    new = side(2, 20, 30, ["c", "d", "t"], "t", p=2)  # invoked at the instant the first completed
    msg = (f"The reads by {at(old[1])} and {at(new[1])}, which overlap in time, disagree on the turns before "
           f"turn 't': the read by {at(new[1])} shows 'c' there and the read by {at(old[1])} does not show 'c' at "
           f"all, so no single order of session 'sess' gives both (either 'c' was put behind 't' after one read, "
           f"or lost after the other).")
    assert classify("sess", old, new, "t") == Finding("incompatible-order", "c", msg, ("c", "t"), reads(old, new),
                                                      new[1])


def test_reads_that_overlap_in_time_are_incompatible_the_first_showing_more() -> None:
    old = side(0, 0, 25, ["m", "n", "t"], "t", p=1)
    new = side(2, 20, 30, ["t"], "t", p=2)
    msg = (f"The reads by {at(old[1])} and {at(new[1])}, which overlap in time, disagree on the turns before "
           f"turn 't': the read by {at(old[1])} shows 'm' there and the read by {at(new[1])} does not show 'm' at "
           f"all, so no single order of session 's' gives both (either 'm' was put behind 't' after one read, "
           f"or lost after the other).")
    assert classify("s", old, new, "t") == Finding("incompatible-order", "m", msg, ("m", "t"), reads(old, new),
                                                   new[1])


def test_overlapping_reads_each_showing_a_turn_the_other_lacks_name_the_second_ones() -> None:
    old = side(0, 0, 25, ["m", "t"], "t", p=1)
    new = side(2, 20, 30, ["c", "t"], "t", p=2)
    f = classify("s", old, new, "t")
    assert f is not None and (f.kind, f.key, f.turns) == ("incompatible-order", "c", ("c", "t"))
    assert f"the read by {at(new[1])} shows 'c' there" in f.message


def test_a_lost_turn_needs_the_first_read_to_complete_strictly_before() -> None:
    old = side(0, 0, 20, ["m", "t"], "t")
    assert classify("s", old, side(2, 20, 30, ["t"], "t"), "t").kind == "incompatible-order"  # type: ignore[union-attr]
    assert classify("s", old, side(2, 21, 30, ["t"], "t"), "t").kind == "lost-turn"  # type: ignore[union-attr]


# -- report_conflicts ---------------------------------------------------------------------------


def report(h: H, before: Callable[[Evidence], None] | None = None) -> Evidence:
    """Build each session's order tree from its reads, then report its conflicts."""
    sessions = group_by_session(h.events)[0]
    indexes = LazyIndexes(sessions)
    owners = Owners(indexes)
    found = Evidence()
    for name, so in sessions.items():
        kept = len(found.kept)
        tree = OrderTree(name, indexes[name], owners, found)
        tree.build(so.reads)
        assert len(found.kept) == kept  # the tree itself found nothing wrong
        if before is not None:
            before(found)
        report_conflicts(tree, found)
    return found


def got(found: Evidence) -> list[tuple[str, str | None, str, list[int]]]:
    return [(v.kind, v.session, v.message, [e.index for e in v.events]) for v in found.kept]


def lost_history() -> H:
    h = H()
    h.append(0, "s", "a")  # 0, 1
    h.append(0, "s", "b")  # 2, 3
    h.read(1, "s", ["a", "b"])  # 4, 5
    h.read(1, "s", ["b"])  # 6, 7
    return h


def test_a_lost_turn_is_reported_with_both_appends_and_both_reads() -> None:
    found = report(lost_history())
    msg = ("Turn 'a' precedes turn 'b' in the read by process 1 at event 5, which completed before the read by "
           "process 1 at event 7 was invoked (event 6), but that later read shows 'b' and not 'a': a turn that "
           "preceded 'b' cannot leave while 'b' stays, rollbacks included.")
    assert got(found) == [("lost-turn", "s", msg, [0, 1, 2, 3, 4, 5, 6, 7])]
    assert found.blamed == {7}


def test_a_conflict_whose_read_is_already_blamed_is_not_reported() -> None:
    def blame(index: int) -> Callable[[Evidence], None]:
        def add(found: Evidence) -> None:
            e = lost_history().events[index]
            found.add("unreadable", "s", "x", "Already blamed.", [e], blame=e)
        return add

    assert [k for k, _, _, _ in got(report(lost_history(), blame(7)))] == ["unreadable"]  # the later read
    assert [k for k, _, _, _ in got(report(lost_history(), blame(5)))] == ["unreadable"]  # the one before
    assert [k for k, _, _, _ in got(report(lost_history(), blame(3)))] == ["unreadable", "lost-turn"]


def test_a_back_dated_turn_is_reported_with_both_appends_and_both_reads() -> None:
    h = H()
    h.inv(0, "append", "s", "a")  # 0
    h.append(1, "s", "b")  # 1, 2
    h.read(2, "s", ["b"])  # 3, 4
    h.ok(0)  # 5
    h.read(2, "s", ["a", "b"])  # 6, 7
    found = report(h)
    msg = ("The read by process 2 at event 7 shows turn 'a' before turn 'b', but the read by process 2 at event 4, "
           "which completed before that one was invoked (event 6), showed 'b' without 'a': 'a' was put behind a turn "
           "that was already visible in session 's'.")
    assert got(found) == [("back-dated-turn", "s", msg, [0, 1, 2, 3, 4, 5, 6, 7])]
    assert found.blamed == {7}


def test_one_placement_problem_per_turn() -> None:
    """The reads by 2 and 3 overlap (incompatible-order of a); the read by 4, after the one
    by 2, would make a back-dated a: the same turn's placement, reported once."""
    h = H()
    h.inv(0, "append", "s", "a")
    h.inv(1, "append", "s", "b")
    h.ok(0)
    h.ok(1)
    h.inv(2, "read", "s")
    h.inv(3, "read", "s")
    h.ok(2, ["b"])
    h.ok(3, ["a", "b"])
    h.read(4, "s", ["a", "b"])
    found = report(h)
    assert [(k, ix) for k, _, _, ix in got(found)] == [("incompatible-order", [0, 1, 2, 3, 4, 5, 6, 7])]
    assert found.totals == {"incompatible-order": 1}
    assert found.blamed == {7}


def test_a_placement_problem_is_not_reported_when_the_other_placement_kind_has_the_turn() -> None:
    """The incompatible order of a is skipped: a back-dated a is already recorded (here
    reserved), and the read by 4 is then skipped alike."""
    h = H()
    h.inv(0, "append", "s", "a")
    h.inv(1, "append", "s", "b")
    h.ok(0)
    h.ok(1)
    h.inv(2, "read", "s")
    h.inv(3, "read", "s")
    h.ok(2, ["b"])
    h.ok(3, ["a", "b"])
    h.read(4, "s", ["a", "b"])

    def back_dated(found: Evidence) -> None:
        found.reserve("back-dated-turn", "s", "a")

    assert got(report(h, back_dated)) == []


def test_a_lost_turn_is_reported_even_after_a_placement_problem_of_the_same_turn() -> None:
    h = H()
    for p, t in ((0, "x"), (1, "u"), (2, "b")):
        h.inv(p, "append", "s", t)
    for p in (0, 1, 2):
        h.ok(p)
    h.read(3, "s", ["x", "u"])  # 6, 7
    h.read(3, "s", ["b"])  # 8, 9
    h.read(3, "s", ["x", "b"])  # 10, 11: x put before b, which the read before showed alone
    h.read(3, "s", ["u"])  # 12, 13: x, before u in the first read, is gone
    found = report(h)
    assert [(v.kind, v.message.split("'")[1], [e.index for e in v.events]) for v in found.kept] == [
        ("back-dated-turn", "x", [0, 2, 3, 5, 8, 9, 10, 11]),
        ("lost-turn", "x", [0, 1, 3, 4, 6, 7, 12, 13]),
    ]


def test_each_session_reports_its_own_conflicts() -> None:
    h = H()
    for s in ("s", "t"):
        h.append(0, s, "a" + s)
        h.append(0, s, "b" + s)
        h.read(1, s, ["a" + s, "b" + s])
        h.read(1, s, ["b" + s])
    found = report(h)
    assert [(k, s) for k, s, _, _ in got(found)] == [("lost-turn", "s"), ("lost-turn", "t")]


def test_a_conflict_skipped_because_its_read_is_blamed_does_not_stop_the_next() -> None:
    h = H()
    for p, t in ((0, "a"), (1, "b"), (2, "c")):
        h.inv(p, "append", "s", t)
    for p in (0, 1, 2):
        h.ok(p)
    h.read(3, "s", ["a", "b"])  # 6, 7
    h.read(3, "s", ["b"])  # 8, 9: a lost (blamed already)
    h.read(3, "s", ["c"])  # 10, 11
    h.read(3, "s", ["a", "c"])  # 12, 13: a put before c, which the read before showed alone

    def blame(found: Evidence) -> None:
        e = h.events[9]
        found.add("unreadable", "s", "x", "Already blamed.", [e], blame=e)

    assert [(k, ix) for k, _, _, ix in got(report(h, blame))] == [
        ("unreadable", [9]), ("back-dated-turn", [0, 2, 3, 5, 10, 11, 12, 13])]


def test_a_conflict_skipped_as_a_placement_already_reported_does_not_stop_the_next() -> None:
    h = H()
    for p, t in ((0, "a"), (1, "b"), (5, "c")):
        h.inv(p, "append", "s", t)
    for p in (0, 1, 5):
        h.ok(p)
    h.inv(2, "read", "s")
    h.inv(3, "read", "s")
    h.ok(2, ["b"])
    h.ok(3, ["a", "b"])  # overlaps the read of (b): incompatible-order of a
    h.read(4, "s", ["a", "b"])  # after the read of (b): a back-dated a, the same turn's placement
    h.read(4, "s", ["c"])
    h.read(4, "s", ["b", "c"])  # b put before c, which the read before showed alone
    found = report(h)
    assert [(k, m.split("'")[1] if k == "back-dated-turn" else m.split("'")[3]) for k, _, m, _ in got(found)] == [
        ("incompatible-order", "a"), ("back-dated-turn", "b")]
