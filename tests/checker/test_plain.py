"""The proof of a session without rollbacks on its raw pairs (harness.checker.plain): its
replays on their own (they are the proof, whatever proposed the order), and its proposals
on literal histories. Agreement with brute force on generated histories is in
test_bruteforce.py."""

from __future__ import annotations

from harness.checker import check
from harness.checker.ops import INF, group_by_session
from harness.checker.plain import prove, replays_ids, replays_turns
from tests.checker.builder import H

A, B = ["user", "a"], ["user", "b"]


def test_a_turn_replay_needs_every_read_to_be_the_whole_list_before_it() -> None:
    assert replays_turns([(1, 2, 1, 0, False, A), (2, 4, 3, 1, True, [A]),
                          (3, 6, 5, 2, False, B), (4, 8, 7, 3, True, [A, B])])
    assert not replays_turns([(1, 2, 1, 0, False, A), (2, 4, 3, 1, True, [A, B])])
    assert not replays_turns([(1, 2, 1, 0, False, A), (2, 4, 3, 1, True, [])])
    assert not replays_turns([(1, 2, 1, 0, False, A), (2, 4, 3, 1, True, [B])])


def test_a_replay_follows_real_time_to_the_instant() -> None:
    # an op that completed before one placed earlier was invoked cannot come after it;
    # one that completed at that very instant can (X must precede Y iff X.hi < Y.lo)
    early_read, late_append = (2, 5, 4, 1, True, []), (1, 9, 6, 0, False, A)
    assert not replays_turns([late_append, early_read])
    assert replays_turns([late_append, (2, 6, 4, 1, True, [A])])
    assert not replays_turns([late_append, (2, 5, 4, 1, True, [A])])
    assert replays_ids([(0, 9, 6, 0, False, "x"), (1, 6, 4, 1, True, ["x"])])
    assert not replays_ids([(0, 9, 6, 0, False, "x"), (1, 5, 4, 1, True, ["x"])])


def test_an_id_replay_needs_new_ids_and_listings_of_exactly_the_ids_made() -> None:
    assert replays_ids([(0, 2, 1, 0, False, "x"), (1, 4, 3, 1, True, ["x"])])
    assert not replays_ids([(0, 2, 1, 0, False, "x"), (1, 4, 3, 1, True, ["y"])])  # same size
    assert not replays_ids([(0, 2, 1, 0, False, "x"), (1, 4, 3, 1, True, [])])
    assert not replays_ids([(0, 2, 1, 0, False, "x"), (1, 4, 3, 1, True, ["x", "x"])])
    assert not replays_ids([(0, 2, 1, 0, False, "x"), (0, 4, 3, 1, False, "x")])
    assert replays_ids([(0, INF, 1, 0, False, "x"), (1, 4, 3, 1, True, ["x"])])


def _session(h: H) -> bool:
    (so,) = group_by_session(h.events)[0].values()
    return prove(so)


def test_a_valid_session_is_proven_and_a_broken_one_is_not() -> None:
    h = H()
    h.append(0, "s", "a")
    h.read(1, "s", ["a"])
    h.snapshot(0, "s", "x")
    h.list(1, "s", ["x"])
    assert _session(h)
    bad = H()
    bad.append(0, "s", "a")
    bad.read(1, "s", [])  # invoked after the append completed
    assert not _session(bad)
    assert check(bad.events).counts() == {"lost-turn": 1}


def test_an_id_two_listings_show_is_made_once_by_a_snapshot_of_unknown_outcome() -> None:
    h = H()
    h.inv(0, "snapshot", "s")
    h.info(0)
    h.list(1, "s", ["x"])
    h.list(1, "s", ["x"])
    assert _session(h)


def test_what_it_cannot_prove_goes_to_the_other_rules() -> None:
    h = H()
    h.append(0, "s", "a")
    h.append(1, "s", "a")  # one turn appended twice: which one a read shows is open
    h.read(2, "s", ["a"])
    assert not _session(h)
    assert check(h.events).valid is not None


def test_a_failed_snapshot_made_no_id_a_listing_shows() -> None:
    h = H()
    h.inv(0, "snapshot", "s")
    h.fail(0, "TimeoutError")
    h.list(1, "s", ["x"])
    assert not _session(h)
    assert not check(h.events).valid


def test_an_acknowledged_turn_no_read_shows_comes_after_every_read() -> None:
    h = H()
    h.append(0, "s", "a")
    h.read(1, "s", ["a"])
    h.append(0, "s", "b")  # acknowledged, and no read shows it: its place is after the reads
    assert _session(h)
    h.read(1, "s", ["a"])  # invoked after b was acknowledged, without it: a lost turn
    assert not _session(h)


def test_an_append_whose_value_is_not_role_and_token_is_not_proven_here() -> None:
    h = H()
    h.inv(0, "append", "s", ["user", ["not", "a", "token"]])
    h.ok(0, ["user", ["not", "a", "token"]])
    assert not _session(h)
