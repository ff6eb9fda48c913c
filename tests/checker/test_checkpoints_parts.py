"""The checkpoint rules on literal sessions, condition by condition
(harness.checker.checkpoints): which snapshot ids a listing or a rollback must know, when a
snapshot id counts as reused, which listings are unreadable and which successful rollbacks
restore an id nobody can have created; each with its exact kind, sentence, evidence and
blamed event, and each boundary (equal times) on both sides.

The rules run on their own (``check_checkpoints`` into a fresh ``Evidence``), as
``fast.judge_session`` runs them; histories are built with tests.checker.builder.H (each
event 10 ns after the one before, unless ``same_time``)."""

from __future__ import annotations

from harness.checker import check
from harness.checker.checkpoints import NOT_FOUND, check_checkpoints, not_found, say_reused
from harness.checker.evidence import Evidence
from harness.checker.ops import group_by_session
from harness.history import Event
from tests.checker.builder import H

Got = list[tuple[str, str | None, str, list[int]]]


def judge(h: H) -> Evidence:
    found = Evidence()
    for so in group_by_session(h.events)[0].values():
        check_checkpoints(so, found)
    return found


def got(found: Evidence) -> Got:
    """The kept violations in the order they were found: kind, session, sentence, events."""
    return [(v.kind, v.session, v.message, [e.index for e in v.events]) for v in found.kept]


def at(e: Event) -> str:
    return f"process {e.process} at event {e.index}"


# -- not_found ----------------------------------------------------------------------------------


def test_not_found_reads_the_error_class_at_the_start_of_the_message() -> None:
    assert not_found("SnapshotNotFound: 'x'")
    assert not_found("SnapshotNotFound")
    assert not_found("KeyError: 'x'")
    assert not_found("harness.stores.base.SnapshotNotFound: x")
    assert not_found("mod_1.KeyError")
    assert not not_found("SnapshotNotFoundError: x")  # another class: \b after the name
    assert not not_found("KeyErrors")
    assert not not_found("RuntimeError: SnapshotNotFound")  # anchored at the start
    assert not not_found(" SnapshotNotFound")
    assert not not_found("Error: boom")
    assert not not_found("")
    assert not not_found(None)
    assert not not_found(b"SnapshotNotFound")
    assert NOT_FOUND.match("a.b.KeyError: 1") is not None


# -- reused-snapshot-id -------------------------------------------------------------------------


def test_two_ok_snapshots_returning_one_id_are_reported_once_with_both() -> None:
    h = H()
    a = h.inv(0, "snapshot", "s")
    b = h.ok(0, "x")
    c = h.inv(1, "snapshot", "s")
    d = h.ok(1, "x")
    h.inv(0, "snapshot", "s")
    h.ok(0, "x")  # a third time: the same problem (kind, session, id), not reported again
    found = judge(h)
    msg = (f"The snapshots of session 's' by {at(b)} and by {at(d)} both returned id 'x', but every "
           f"snapshot must get a new id.")
    assert say_reused("s", "x", b, d) == msg
    assert got(found) == [("reused-snapshot-id", "s", msg, [a.index, b.index, c.index, d.index])]
    assert found.totals == {"reused-snapshot-id": 1}
    assert found.blamed == {d.index}


def test_snapshots_that_did_not_return_a_string_id_are_never_reused() -> None:
    h = H()
    h.inv(0, "snapshot", "s")
    h.ok(0, 7)
    h.inv(0, "snapshot", "s")
    h.ok(0, 7)  # not a string id: not a snapshot that returned an id
    h.inv(0, "snapshot", "s")
    h.fail(0)
    h.inv(0, "snapshot", "s")
    h.info(0)
    h.inv(1, "snapshot", "s")
    h.crash(1)
    h.snapshot(0, "s", "y")
    h.snapshot(0, "s", "z")
    assert got(judge(h)) == []


def test_each_reused_id_is_its_own_problem() -> None:
    h = H()
    h.snapshot(0, "s", "x")
    h.snapshot(0, "s", "y")
    h.snapshot(0, "s", "x")
    h.snapshot(0, "s", "y")
    found = judge(h)
    assert [(k, m.split("'")[-2]) for k, _, m, _ in got(found)] == [("reused-snapshot-id", "x"),
                                                                    ("reused-snapshot-id", "y")]
    assert found.totals == {"reused-snapshot-id": 2}


def test_a_reused_id_is_one_problem_per_session() -> None:
    h = H()
    h.snapshot(0, "s", "x")
    h.snapshot(0, "s", "x")
    h.snapshot(0, "t", "x")
    h.snapshot(0, "t", "x")
    found = judge(h)
    assert [(k, s) for k, s, _, _ in got(found)] == [("reused-snapshot-id", "s"), ("reused-snapshot-id", "t")]
    assert found.totals == {"reused-snapshot-id": 2}


# -- unreadable listings ------------------------------------------------------------------------


def test_a_failed_listing_is_unreadable_with_its_error() -> None:
    h = H()
    a = h.inv(0, "list_snapshots", "s")
    b = h.fail(0, "OSError: disk")
    c = h.inv(0, "list_snapshots", "s")
    d = h.fail(0, "")  # no error text
    found = judge(h)
    assert got(found) == [
        ("unreadable", "s", f"The list_snapshots of session 's' by {at(b)} raised OSError: disk.",
         [a.index, b.index]),
        ("unreadable", "s", f"The list_snapshots of session 's' by {at(d)} raised an error.",
         [c.index, d.index]),
    ]
    assert found.blamed == {b.index, d.index}


def test_a_listing_that_is_not_a_list_of_strings_is_unreadable() -> None:
    h = H()
    for value in (("x",), ["x", 3], "x", None, {"x": 1}, [None]):
        h.inv(0, "list_snapshots", "s")
        h.ok(0, value)
    found = judge(h)
    oks = [e for e in h.events if e.type == "ok"]
    assert got(found) == [
        ("unreadable", "s",
         f"The list_snapshots of session 's' by {at(e)} returned something other than a list of snapshot ids.",
         [e.index - 1, e.index])
        for e in oks
    ]
    assert found.totals == {"unreadable": 6}


def test_listings_of_unknown_outcome_are_neither_read_nor_unreadable() -> None:
    h = H()
    h.snapshot(0, "s", "x")
    h.inv(0, "list_snapshots", "s")
    h.info(0)
    h.inv(1, "list_snapshots", "s")
    h.crash(1)
    h.list(0, "s", ["x"])
    h.list(0, "s", [])  # shows no x: vanished
    found = judge(h)
    assert [k for k, _, _, _ in got(found)] == ["vanished-checkpoint"]


def test_a_listing_of_strings_is_read_and_the_empty_one_too() -> None:
    h = H()
    h.list(0, "s", [])
    h.list(0, "s", ["a", "b"])
    h.list(0, "s", ["a"])  # a, shown by the listing before, is gone
    found = judge(h)
    assert [(k, m) for k, _, m, _ in got(found)] == [
        ("vanished-checkpoint",
         "Snapshot 'b' was known since process 0 at event 3, but the later list_snapshots by process 0 at "
         "event 5 does not show it."),
    ]


# -- vanished-checkpoint by a listing -----------------------------------------------------------


def test_a_listing_invoked_after_the_snapshot_returned_must_show_it() -> None:
    h = H()
    a = h.inv(0, "snapshot", "s")
    b = h.ok(0, "x")
    c = h.inv(1, "list_snapshots", "s")
    d = h.ok(1, [])
    found = judge(h)
    msg = f"Snapshot 'x' was known since {at(b)}, but the later list_snapshots by {at(d)} does not show it."
    assert got(found) == [("vanished-checkpoint", "s", msg, [a.index, b.index, c.index, d.index])]
    assert found.blamed == {d.index}
    assert found.totals == {"vanished-checkpoint": 1}


def test_a_listing_invoked_at_the_instant_the_snapshot_returned_need_not_show_it() -> None:
    h = H()
    h.inv(0, "snapshot", "s")
    h.ok(0, "x")
    h.inv(1, "list_snapshots", "s", same_time=True)
    h.ok(1, [])
    assert got(judge(h)) == []
    h.list(1, "s", ["y"])  # invoked after: must show x
    assert [k for k, _, _, _ in got(judge(h))] == ["vanished-checkpoint"]


def test_a_listing_overlapping_the_snapshot_need_not_show_it() -> None:
    h = H()
    h.inv(0, "snapshot", "s")
    h.inv(1, "list_snapshots", "s")
    h.ok(0, "x")
    h.ok(1, [])
    assert got(judge(h)) == []


def test_an_id_a_listing_showed_must_stay_listed() -> None:
    h = H()
    a = h.inv(0, "list_snapshots", "s")
    b = h.ok(0, ["x"])
    c = h.inv(1, "list_snapshots", "s")
    d = h.ok(1, [])
    found = judge(h)
    msg = f"Snapshot 'x' was known since {at(b)}, but the later list_snapshots by {at(d)} does not show it."
    assert got(found) == [("vanished-checkpoint", "s", msg, [a.index, b.index, c.index, d.index])]


def test_a_listing_invoked_at_the_instant_an_earlier_listing_returned_need_not_agree() -> None:
    h = H()
    h.inv(0, "list_snapshots", "s")
    h.ok(0, ["x"])
    h.inv(1, "list_snapshots", "s", same_time=True)
    h.ok(1, [])
    assert got(judge(h)) == []


def test_overlapping_listings_need_not_agree() -> None:
    h = H()
    h.inv(0, "list_snapshots", "s")
    h.inv(1, "list_snapshots", "s")
    h.ok(0, ["x"])
    h.ok(1, [])
    assert got(judge(h)) == []


def test_listings_are_taken_in_order_of_invocation_not_of_completion() -> None:
    """A long listing invoked before the snapshot returned need not show it, though a short
    listing invoked later (which must) completed first."""
    h = H()
    h.inv(2, "list_snapshots", "s")  # long: invoked first
    h.inv(0, "snapshot", "s")
    h.ok(0, "x")
    h.inv(1, "list_snapshots", "s")
    h.ok(1, ["x"])
    h.ok(2, [])  # completes last, invoked before x was known
    assert got(judge(h)) == []


def test_what_listings_showed_is_required_in_order_of_their_completion() -> None:
    """A listing invoked first but still running does not stop one that completed later in
    invocation order from making its ids known."""
    h = H()
    h.inv(2, "list_snapshots", "s")  # invoked first, completes last, shows nothing
    a = h.inv(1, "list_snapshots", "s")
    b = h.ok(1, ["y"])
    c = h.inv(0, "list_snapshots", "s")  # invoked after y was listed
    d = h.ok(0, [])
    h.ok(2, [])
    found = judge(h)
    msg = f"Snapshot 'y' was known since {at(b)}, but the later list_snapshots by {at(d)} does not show it."
    assert got(found) == [("vanished-checkpoint", "s", msg, [a.index, b.index, c.index, d.index])]


def test_every_missing_id_is_reported_in_sorted_order() -> None:
    h = H()
    ids = ["m", "c", "q", "a", "k", "z", "e", "h"]
    for sid in ids:
        h.snapshot(0, "s", sid)
    h.list(1, "s", ["k"])
    found = judge(h)
    assert [m.split("'")[1] for _, _, m, _ in got(found)] == sorted(set(ids) - {"k"})
    assert found.totals == {"vanished-checkpoint": 7}


def test_a_listing_with_as_many_ids_as_required_but_other_ones_misses_them() -> None:
    h = H()
    h.snapshot(0, "s", "x")
    h.snapshot(0, "s", "y")
    h.list(1, "s", ["x", "w"])  # two ids, two required, y missing
    h.list(1, "s", ["y", "x", "w"])  # more than required, all there
    found = judge(h)
    assert [(k, m.split("'")[1]) for k, _, m, _ in got(found)] == [("vanished-checkpoint", "y")]


def test_a_listing_showing_every_required_id_passes_whatever_else_it_shows() -> None:
    h = H()
    h.snapshot(0, "s", "x")
    h.list(1, "s", ["x"])
    h.list(1, "s", ["q", "x", "r"])
    h.list(1, "s", ["x", "q", "r"])
    assert got(judge(h)) == []


def test_the_first_to_make_an_id_known_is_named_a_listing_before_its_snapshot_returned() -> None:
    """The snapshot op returned x after a listing had already shown it: the listing made x
    known first, and is named."""
    h = H()
    h.inv(0, "snapshot", "s")
    a = h.inv(1, "list_snapshots", "s")
    b = h.ok(1, ["x"])
    h.ok(0, "x")
    c = h.inv(1, "list_snapshots", "s")
    d = h.ok(1, [])
    found = judge(h)
    msg = f"Snapshot 'x' was known since {at(b)}, but the later list_snapshots by {at(d)} does not show it."
    assert got(found) == [("vanished-checkpoint", "s", msg, [a.index, b.index, c.index, d.index])]


def test_the_first_to_make_an_id_known_is_named_its_snapshot_before_a_listing() -> None:
    h = H()
    a = h.inv(0, "snapshot", "s")
    b = h.ok(0, "x")
    h.list(1, "s", ["x"])
    h.list(1, "s", ["x"])
    c = h.inv(1, "list_snapshots", "s")
    d = h.ok(1, [])
    found = judge(h)
    msg = f"Snapshot 'x' was known since {at(b)}, but the later list_snapshots by {at(d)} does not show it."
    assert got(found) == [("vanished-checkpoint", "s", msg, [a.index, b.index, c.index, d.index])]


def test_a_snapshot_and_a_listing_that_made_an_id_known_at_one_instant_name_the_snapshot() -> None:
    h = H()
    a = h.inv(0, "snapshot", "s")
    h.inv(1, "list_snapshots", "s")
    b = h.ok(0, "x")
    h.ok(1, ["x"], same_time=True)
    c = h.inv(1, "list_snapshots", "s")
    d = h.ok(1, [])
    found = judge(h)
    msg = f"Snapshot 'x' was known since {at(b)}, but the later list_snapshots by {at(d)} does not show it."
    assert got(found) == [("vanished-checkpoint", "s", msg, [a.index, b.index, c.index, d.index])]


def test_the_first_listing_to_show_an_id_is_named_among_several() -> None:
    h = H()
    h.list(1, "s", ["w"])
    a = h.inv(1, "list_snapshots", "s")
    b = h.ok(1, ["x", "w"])
    h.list(1, "s", ["w", "x"])
    c = h.inv(2, "list_snapshots", "s")
    d = h.ok(2, ["w"])
    found = judge(h)
    msg = f"Snapshot 'x' was known since {at(b)}, but the later list_snapshots by {at(d)} does not show it."
    assert got(found) == [("vanished-checkpoint", "s", msg, [a.index, b.index, c.index, d.index])]


def test_a_listing_invoked_before_the_snapshot_that_showed_its_id_first_is_named() -> None:
    """The listing by process 2, invoked before x's snapshot, completed (showing x) before
    the snapshot returned: it made x known first."""
    h = H()
    h.inv(2, "list_snapshots", "s")
    h.inv(0, "snapshot", "s")
    h.ok(2, ["x"])  # completes before the snapshot returns, shows x
    a, b = h.events[1], h.ok(0, "x")
    c = h.inv(1, "list_snapshots", "s")
    d = h.ok(1, [])
    found = judge(h)
    assert got(found) == [
        ("vanished-checkpoint", "s",
         f"Snapshot 'x' was known since {at(h.events[2])}, but the later list_snapshots by {at(d)} does not "
         f"show it.", [0, 2, c.index, d.index]),
    ]
    assert (a.index, b.index) == (1, 3)


# -- vanished-checkpoint by a rollback ----------------------------------------------------------


def test_a_rollback_invoked_after_the_snapshot_returned_must_find_it() -> None:
    h = H()
    a = h.inv(0, "snapshot", "s")
    b = h.ok(0, "x")
    c = h.inv(1, "rollback", "s", "x")
    d = h.fail(1, "SnapshotNotFound: 'x' is not a snapshot of session s (it never was)")
    found = judge(h)
    msg = (f"Snapshot 'x' was known since {at(b)}, but the later rollback to it by {at(d)} failed with "
           f"\"SnapshotNotFound: 'x' is not a snapshot of session s (it ne…\".")
    assert got(found) == [("vanished-checkpoint", "s", msg, [a.index, b.index, c.index, d.index])]
    assert found.blamed == {d.index}


def test_a_rollback_failing_otherwise_or_unknown_is_no_vanished_checkpoint() -> None:
    h = H()
    h.snapshot(0, "s", "x")
    h.inv(1, "rollback", "s", "x")
    h.fail(1, "TimeoutError: slow")
    h.inv(1, "rollback", "s", "x")
    h.info(1, "SnapshotNotFound: x")
    h.inv(2, "rollback", "s", "x")
    h.crash(2)
    assert got(judge(h)) == []


def test_a_rollback_overlapping_the_snapshot_may_not_find_it() -> None:
    h = H()
    h.inv(0, "snapshot", "s")
    h.inv(1, "rollback", "s", "x")
    h.ok(0, "x")
    h.fail(1, "KeyError: 'x'")
    assert got(judge(h)) == []


def test_a_rollback_invoked_at_the_instant_the_snapshot_returned_may_not_find_it() -> None:
    h = H()
    h.inv(0, "snapshot", "s")
    h.ok(0, "x")
    h.inv(1, "rollback", "s", "x", same_time=True)
    h.fail(1, "KeyError: 'x'")
    assert got(judge(h)) == []


def test_a_rollback_must_find_an_id_a_listing_showed_before_it_was_invoked() -> None:
    h = H()
    h.list(2, "s", ["w"])
    a = h.inv(2, "list_snapshots", "s")
    b = h.ok(2, ["x", "w"])
    h.list(2, "s", ["w", "x"])
    c = h.inv(1, "rollback", "s", "x")
    d = h.fail(1, "KeyError: 'x'")
    found = judge(h)
    msg = (f"Snapshot 'x' was known since {at(b)}, but the later rollback to it by {at(d)} failed with "
           f"\"KeyError: 'x'\".")
    assert got(found) == [("vanished-checkpoint", "s", msg, [a.index, b.index, c.index, d.index])]


def test_a_listing_that_completed_at_or_after_the_rollbacks_invocation_makes_nothing_known() -> None:
    h = H()
    h.inv(2, "list_snapshots", "s")
    h.inv(1, "rollback", "s", "x")
    h.ok(2, ["x"])
    h.fail(1, "KeyError: 'x'")
    h.inv(2, "list_snapshots", "s")
    h.ok(2, ["x", "y"])
    h.inv(1, "rollback", "s", "y", same_time=True)
    h.fail(1, "KeyError: 'y'")
    assert got(judge(h)) == []


def test_a_snapshot_returned_late_leaves_the_listing_to_name_the_id() -> None:
    """x's snapshot returned only after the rollback was invoked, but a listing had shown x
    before: the listing is named."""
    h = H()
    h.inv(0, "snapshot", "s")
    a = h.inv(2, "list_snapshots", "s")
    b = h.ok(2, ["x"])
    c = h.inv(1, "rollback", "s", "x")
    h.ok(0, "x")
    d = h.fail(1, "KeyError: 'x'")
    found = judge(h)
    msg = (f"Snapshot 'x' was known since {at(b)}, but the later rollback to it by {at(d)} failed with "
           f"\"KeyError: 'x'\".")
    assert got(found) == [("vanished-checkpoint", "s", msg, [a.index, b.index, c.index, d.index])]


def test_each_rollback_is_judged_not_only_the_first() -> None:
    h = H()
    h.snapshot(0, "s", "x")
    h.snapshot(0, "s", "y")
    h.inv(1, "rollback", "s", None)
    h.fail(1, "KeyError: None")  # not a string id: skipped
    h.inv(1, "rollback", "s", "x")
    h.fail(1, "TimeoutError")
    h.rollback(1, "s", "x")
    h.inv(1, "rollback", "s", "y")
    h.fail(1, "KeyError: 'y'")
    found = judge(h)
    assert [(k, m.split("'")[1]) for k, _, m, _ in got(found)] == [("vanished-checkpoint", "y")]


# -- bad-rollback -------------------------------------------------------------------------------


def test_a_rollback_to_an_id_nobody_created_is_a_bad_rollback() -> None:
    h = H()
    h.snapshot(0, "s", "x")
    h.list(0, "s", ["x"])
    a = h.inv(1, "rollback", "s", "zz")
    b = h.ok(1)
    found = judge(h)
    msg = f"The rollback by {at(b)} succeeded, but no snapshot op of session 's' created 'zz'."
    assert got(found) == [("bad-rollback", "s", msg, [a.index, b.index])]
    assert found.blamed == {b.index}
    assert found.totals == {"bad-rollback": 1}


def test_a_rollback_to_an_id_created_only_later_is_a_bad_rollback() -> None:
    h = H()
    a = h.inv(1, "rollback", "s", "x")
    b = h.ok(1)
    c = h.inv(0, "snapshot", "s")
    d = h.ok(0, "x")
    found = judge(h)
    msg = (f"The rollback by {at(b)} succeeded, but snapshot 'x' was only created later, by "
           f"{at(c)}.")
    assert got(found) == [("bad-rollback", "s", msg, [a.index, b.index, c.index, d.index])]


def test_a_rollback_overlapping_its_snapshot_or_after_it_is_fine() -> None:
    h = H()
    h.inv(1, "rollback", "s", "x")
    h.inv(0, "snapshot", "s")
    h.ok(1)
    h.ok(0, "x")
    h.rollback(1, "s", "x")
    assert got(judge(h)) == []


def test_a_snapshot_invoked_at_the_instant_the_rollback_returned_can_have_created_its_id() -> None:
    h = H()
    h.inv(1, "rollback", "s", "x")
    h.ok(1)
    h.inv(0, "snapshot", "s", same_time=True)
    h.ok(0, "x")
    assert got(judge(h)) == []


def test_two_bad_rollbacks_are_two_problems() -> None:
    h = H()
    h.rollback(1, "s", "p")
    h.rollback(1, "s", "p")
    h.rollback(1, "s", "q")
    found = judge(h)
    assert [k for k, _, _, _ in got(found)] == ["bad-rollback"] * 3
    assert found.blamed == {1, 3, 5}


def test_a_rollback_to_an_id_some_listing_showed_is_not_a_bad_rollback() -> None:
    """Any listing, even one that completed after the rollback: the id existed."""
    h = H()
    h.rollback(1, "s", "x")
    h.rollback(1, "s", "y")
    h.list(0, "s", ["w"])
    h.list(0, "s", ["w", "x"])
    h.list(0, "s", ["y", "w", "x"])
    h.rollback(1, "s", "x")
    h.rollback(1, "s", "z")
    found = judge(h)
    assert [(k, m.split("'")[-2]) for k, _, m, _ in got(found)] == [("bad-rollback", "z")]


def test_a_rollback_to_a_created_id_after_a_listing_is_fine() -> None:
    """The snapshot created the id before the rollback; listings that do not show it are
    judged on their own (the second misses x)."""
    h = H()
    h.list(0, "s", [])
    h.snapshot(0, "s", "x")
    h.rollback(1, "s", "x")
    h.list(0, "s", [])
    found = judge(h)
    assert [k for k, _, _, _ in got(found)] == ["vanished-checkpoint"]


def test_a_rollback_with_no_string_id_is_not_judged() -> None:
    h = H()
    h.inv(1, "rollback", "s", 5)
    h.ok(1)
    h.inv(1, "rollback", "s", None)
    h.ok(1)
    h.inv(1, "rollback", "s", "x")
    h.crash(1)
    assert got(judge(h)) == []


def test_a_snapshot_of_unknown_outcome_invoked_before_the_rollback_returned_may_have_made_the_id() -> None:
    for end in ("info", "crash"):
        h = H()
        h.inv(0, "snapshot", "s")
        if end == "info":
            h.info(0)
        else:
            h.crash(0)
        h.rollback(1, "s", "x")
        assert got(judge(h)) == [], end


def test_a_snapshot_of_unknown_outcome_invoked_at_the_instant_the_rollback_returned_too() -> None:
    h = H()
    h.inv(1, "rollback", "s", "x")
    h.ok(1)
    h.inv(0, "snapshot", "s", same_time=True)
    h.info(0)
    assert got(judge(h)) == []


def test_a_snapshot_of_unknown_outcome_invoked_later_or_a_failed_one_makes_nothing() -> None:
    h = H()
    h.inv(0, "snapshot", "s")
    h.fail(0)  # failed: never took effect
    a = h.inv(1, "rollback", "s", "x")
    b = h.ok(1)
    h.inv(0, "snapshot", "s")  # unknown, but invoked after the rollback returned
    h.info(0)
    found = judge(h)
    msg = f"The rollback by {at(b)} succeeded, but no snapshot op of session 's' created 'x'."
    assert got(found) == [("bad-rollback", "s", msg, [a.index, b.index])]


def test_a_snapshot_of_unknown_outcome_does_not_excuse_an_id_a_known_snapshot_made_later() -> None:
    """x was created by an ok snapshot invoked after the rollback returned: the snapshot of
    unknown outcome, invoked before, returned no id we know, but x has its creator."""
    h = H()
    h.inv(2, "snapshot", "s")
    h.info(2)
    a = h.inv(1, "rollback", "s", "x")
    b = h.ok(1)
    c = h.inv(0, "snapshot", "s")
    d = h.ok(0, "x")
    found = judge(h)
    msg = f"The rollback by {at(b)} succeeded, but snapshot 'x' was only created later, by {at(c)}."
    assert got(found) == [("bad-rollback", "s", msg, [a.index, b.index, c.index, d.index])]


def test_an_ok_snapshot_without_a_string_id_is_neither_a_creator_nor_unknown() -> None:
    h = H()
    h.inv(0, "snapshot", "s")
    h.ok(0, 5)
    a = h.inv(1, "rollback", "s", "x")
    b = h.ok(1)
    found = judge(h)
    assert [(k, ix) for k, _, _, ix in got(found)] == [("bad-rollback", [a.index, b.index])]


def test_only_rollbacks_start_the_rollback_rules_and_only_listings_the_listing_rules() -> None:
    h = H()
    h.snapshot(0, "s", "x")
    h.list(0, "s", ["x"])
    h.read(0, "s", [])
    assert got(judge(h)) == []
    h2 = H()
    h2.rollback(0, "s", "x")
    assert [k for k, _, _, _ in got(judge(h2))] == ["bad-rollback"]


# -- the whole checker ----------------------------------------------------------------------------


def test_the_checker_reports_each_checkpoint_rule() -> None:
    h = H()
    h.snapshot(0, "s", "x")
    h.snapshot(0, "s", "x")
    h.list(1, "s", [])
    h.rollback(1, "s", "q")
    h.inv(1, "list_snapshots", "s")
    h.fail(1)
    res = check(h.events)
    assert res.valid is False
    assert res.counts() == {"vanished-checkpoint": 1, "reused-snapshot-id": 1, "bad-rollback": 1,
                            "unreadable": 1}


def test_the_checker_passes_a_session_of_snapshots_listings_and_rollbacks() -> None:
    h = H()
    h.append(0, "s", "a")
    h.snapshot(0, "s", "x")
    h.list(1, "s", ["x"])
    h.append(0, "s", "b")
    h.rollback(1, "s", "x")
    h.read(0, "s", ["a"])
    h.inv(1, "rollback", "s", "nope")
    h.fail(1, "SnapshotNotFound: nope")
    h.list(1, "s", ["x"])
    res = check(h.events)
    assert res.valid is True, [v.message for v in res.violations]
