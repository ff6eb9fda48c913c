"""The frontier search's parts on their own (harness.checker.frontier): which failed
configuration covers another (``_one_covered``, ``_covered``, ``_failed``), which state
of a merged set a proof's path may go through (``_fits``), which ops the snapshot ids
order (``_id_order``) and how a set of states steps through an op that shows its turns
(``_shown``).

A lazy state is (turns, ids, contents, open windows); contents are (snapshot id, content,
rollbacks left), a content fixed (a tuple of turns) or a set of candidates (a frozenset)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.checker.frontier import MAX_COVERING, _covered, _failed, _fits, _id_order, _one_covered, _shown
from harness.checker.lazy import make_step
from harness.checker.model import ModelOp
from harness.checker.ops import INF

A, B, C = ("a",), ("a", "b"), ("c",)


def cands(*contents: tuple[str, ...]) -> frozenset[tuple[str, ...]]:
    return frozenset(contents)


def state(*contents: tuple[str, Any, int], turns: tuple[str, ...] = A,
          open_: tuple[tuple[str, int], ...] = ()) -> Any:
    return (turns, frozenset(c[0] for c in contents), tuple(contents), open_)


#: what a failure read, a bit per snapshot id (frontier.begin numbers them the same way)
BIT = {"x": 1, "y": 2, "z": 4}
BOTH = 0b11


def fail(contents: Any, why: int = BOTH) -> tuple[Any, list[int], int]:
    """A failed state's record as ``_failed`` keeps it."""
    return (contents, [p for p, e in enumerate(contents) if BIT[e[0]] & why], why)


def test_a_failed_content_covers_one_with_fewer_candidates_only() -> None:
    failed = (("x", cands(A, B), 2), ("y", C, 1))
    got = [fail(failed)]
    assert _one_covered(None, failed) is None  # nothing failed with these
    assert _one_covered(got, failed) == BOTH
    assert _one_covered(got, (("x", cands(A, B), 2), ("y", C, 1))) == BOTH  # equal
    assert _one_covered(got, (("x", cands(B), 2), ("y", C, 1))) == BOTH  # fewer
    assert _one_covered(got, (("x", cands(A, C), 2), ("y", C, 1))) is None  # one more
    assert _one_covered(got, (("x", cands(A), 1), ("y", C, 1))) is None  # rollbacks left
    assert _one_covered(got, (("z", cands(A), 2), ("y", C, 1))) is None  # another id
    assert _one_covered(got, (("x", cands(A), 2),)) is None  # fewer snapshots
    assert _one_covered(got, (("x", cands(A), 2), ("y", A, 1))) is None  # fixed, differs
    # a fixed content and candidates are never within one another, either way round
    assert _one_covered([fail((("y", A, 1),))], (("y", cands(A), 1),)) is None
    assert _one_covered([fail((("y", cands(A), 1),))], (("y", A, 1),)) is None
    # any one of those that failed will do, and says what it read
    assert _one_covered([fail((("x", cands(C), 2),), 1), fail((("x", cands(A, B), 2),), 1)],
                        (("x", cands(A), 2),)) == 1


def test_the_places_a_failure_read_are_found_once_for_its_contents() -> None:
    """``_failed``'s memo: failed states that share their contents (one object) and what
    the failure read share the places found; other reasons, or no memo, find them anew."""
    shared = state(("x", cands(A), 2), ("y", C, 1))  # its contents: one object
    ids, contents = shared[1], shared[2]
    failed: dict[int, Any] = {}
    memo: dict[Any, Any] = {}
    _failed(failed, 0b1, frozenset({shared}), BOTH, BIT, memo)
    _failed(failed, 0b11, frozenset({(C, ids, contents, ())}), BOTH, BIT, memo)
    _failed(failed, 0b111, frozenset({shared}), 1, BIT, memo)
    first, again, other = (failed[lin][(t, ids, ())][0] for lin, t in ((0b1, A), (0b11, C), (0b111, A)))
    assert first[1] == [0, 1] and again[1] is first[1]
    assert other[1] == [0] and len(memo) == 2
    _failed(failed, 0b1111, frozenset({shared}), BOTH, BIT)
    assert failed[0b1111][(A, ids, ())][0][1] is not first[1]


def test_a_content_the_failure_did_not_read_may_differ() -> None:
    # the failure read x's content only: y's may be anything, x's must still be within
    got = [fail((("x", cands(A, B), 2), ("y", C, 1)), why=1)]
    assert _one_covered(got, (("x", cands(A), 2), ("y", A, 1))) == 1
    assert _one_covered(got, (("x", cands(A), 2), ("y", cands(A, B, C), 1))) == 1
    assert _one_covered(got, (("x", cands(C), 2), ("y", C, 1))) is None
    # a failure that read no content covers any contents of the same shape
    assert _one_covered([fail((("x", cands(A), 2),), why=0)], (("x", cands(C), 2),)) == 0
    assert _one_covered([fail((("x", cands(A), 2),), why=0)], ()) is None


def test_a_configuration_is_covered_when_every_state_is() -> None:
    failed: dict[int, dict[Any, list[Any]]] = {}
    wide = state(("x", cands(A, B), 1))
    _failed(failed, 0b101, frozenset({wide}), 1, BIT)
    narrow = state(("x", cands(B), 1))
    other_turns = state(("x", cands(B), 1), turns=B)
    assert _covered(failed, 0b101, frozenset({narrow})) == 1
    assert _covered(failed, 0b111, frozenset({narrow})) is None  # other ops placed
    assert _covered(failed, 0b101, frozenset({narrow, other_turns})) is None  # one is not
    assert _covered(failed, 0b101, frozenset({state(("x", cands(A, B), 1), open_=(("x", 9),))})) is None
    assert _covered({}, 0b101, frozenset({narrow})) is None
    # covered by two failures: what both read
    _failed(failed, 0b101, frozenset({other_turns}), 2, BIT)
    assert _covered(failed, 0b101, frozenset({narrow, other_turns})) == 0b11
    # what a failure read is the content compared: one that read nothing covers any
    _failed(failed, 0b1, frozenset({wide}), 0, BIT)
    assert _covered(failed, 0b1, frozenset({state(("x", cands(C), 1))})) == 0


def test_only_the_last_failed_contents_per_key_are_kept() -> None:
    failed: dict[int, dict[Any, list[Any]]] = {}
    states = [state(("x", cands((f"t{i}",)), 1)) for i in range(MAX_COVERING + 1)]
    for s in states:
        _failed(failed, 1, frozenset({s}), 1, BIT)
    assert _covered(failed, 1, frozenset({states[0]})) is None  # forgotten
    assert all(_covered(failed, 1, frozenset({s})) == 1 for s in states[1:])


def test_a_state_fits_a_merged_one_it_is_part_of() -> None:
    merged = state(("x", cands(A, B), 1), ("y", C, 1))
    assert _fits(merged, merged, {}, {})
    assert _fits(state(("x", cands(A), 1), ("y", C, 1)), merged, {}, {})
    assert not _fits(state(("x", cands(A, C), 1), ("y", C, 1)), merged, {}, {})  # a candidate more
    assert not _fits(state(("x", cands(A), 1), ("y", A, 1)), merged, {}, {})  # fixed, differs
    assert not _fits(state(("x", cands(A), 2), ("y", C, 1)), merged, {}, {})  # rollbacks left
    assert not _fits(state(("x", cands(A), 1)), merged, {}, {})  # a snapshot fewer
    assert not _fits(state(("x", cands(A), 1), ("y", C, 1), turns=B), merged, {}, {})
    assert not _fits(state(("x", cands(A), 1), ("y", C, 1), open_=(("x", 3),)), merged, {}, {})
    wrong_ids = (A, frozenset({"x", "y", "z"}), merged[2], ())
    assert not _fits(wrong_ids, merged, {}, {})
    renamed = (A, merged[1], (("w", cands(A), 1), ("y", C, 1)), ())
    assert not _fits(renamed, merged, {}, {})
    # what a later rollback restored must be among its candidates
    assert _fits(state(("x", cands(A), 1), ("y", C, 1)), merged, {"x": A}, {})
    assert not _fits(state(("x", cands(B), 1), ("y", C, 1)), merged, {"x": A}, {})
    assert _fits(state(("x", cands(B), 1), ("y", C, 1)), merged, {"z": A}, {})  # not one of its
    # ... looked for in an entry that is not the merged state's own object: the merged
    # state holds what the way back needs of it (exact_path keeps it so), so its own
    # entries are taken at their word
    assert _fits(merged, merged, {"x": A}, {})
    assert not _fits(state(("x", cands(A, B), 1), ("y", C, 1)), merged, {"x": C}, {})
    # candidates the way back found it in already are taken at their word, not looked in
    # again (hashing a content of hundreds of turns each time)
    own_x = state(("x", merged[2][0][1], 1), ("y", C, 1))  # the very candidates, a new entry
    assert _fits(own_x, merged, {"x": C}, {"x": merged[2][0][1]})
    assert not _fits(own_x, merged, {"x": C}, {"x": cands(A, B)})  # an equal set, another object


def _window_then_rollback(shown: list[str]) -> list[Any]:
    """Snapshot x runs while append a does, then a rollback to x and a read of ``shown``:
    placing x first leaves x two candidate contents, so the rollback two states."""
    from harness.checker.evidence import Evidence
    from harness.checker.exact import session_ops
    from harness.checker.ops import group_by_session
    from tests.checker.builder import H

    h = H()
    h.inv(0, "snapshot", "s")
    h.inv(1, "append", "s", "a")
    h.ok(0, "x")
    h.ok(1)
    h.rollback(0, "s", "x")
    h.read(0, "s", shown)
    [so] = group_by_session(h.events)[0].values()
    return session_ops(so, Evidence())


def test_a_configuration_of_too_many_states_is_skipped_and_then_nothing_is_refuted(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Past MAX_STATES states a configuration is not explored: the search may still
    prove the session by another order (a placed before x: one content), but a search
    that skipped one cannot refute by trying every way (``ok`` None, not False); the
    look-ahead still can, where the start itself cannot explain a read (``zz``: nothing
    appends it, no snapshot can hold it)."""
    import time

    import harness.checker.frontier as frontier

    deadline = time.monotonic() + 30
    assert frontier.search(_window_then_rollback([]), deadline).ok is True
    assert frontier.search(_window_then_rollback(["zz"]), deadline).ok is False
    monkeypatch.setattr(frontier, "MAX_STATES", 1)
    assert frontier.search(_window_then_rollback(["a"]), deadline).ok is True
    assert frontier.search(_window_then_rollback([]), deadline).ok is None
    never = 1e6  # backups per op before it looks ahead: never, here
    assert frontier.search(_window_then_rollback(["zz"]), deadline, ahead=never).ok is None
    assert frontier.search(_window_then_rollback(["zz"]), deadline).ok is False



def test_the_ids_order_a_listing_and_a_snapshot_only_where_real_time_does_not() -> None:
    """A snapshot comes after a listing without its id and before one with it; a bit is
    set only where the two overlap in time (or the snapshot never returned): real time
    orders the others already, and the search's candidates are then the same."""
    ops = [
        ModelOp(0, "snapshot", 0, 5, out="a"),  # returned before listing 2 began
        ModelOp(1, "snapshot", 8, 25, out="b"),  # overlaps listing 2, which lacks b
        ModelOp(2, "list", 10, 20, out=frozenset({"a"})),
        ModelOp(3, "snapshot", 30, 40, out="c"),  # began after listing 2 returned
        ModelOp(4, "snapshot", 45, 58, out="d"),  # overlaps listing 5, which shows d
        ModelOp(5, "list", 50, 60, out=frozenset({"a", "b", "c", "d", "e"})),
        ModelOp(6, "snapshot", 49, INF, out="e"),  # never returned, shown by listing 5
        ModelOp(7, "snapshot", 55, 70, out="f"),  # overlaps listing 5, which lacks f
        ModelOp(8, "rollback", 80, 90, arg="c"),
        ModelOp(9, "rollback-missing", 3, 4, arg="d"),
    ]
    needs = _id_order(ops)
    assert needs[1] == 1 << 2  # b after the listing that lacks it
    assert needs[2] == 0  # a returned before it began: real time says a comes first
    assert needs[3] == 0  # c began after it returned: real time again
    assert needs[5] == 1 << 4 | 1 << 6  # d overlaps it, e never returned; a, b, c did before
    assert needs[7] == 1 << 5  # f after the listing that lacks it
    assert needs[8] == 1 << 3  # a rollback to c after c's snapshot
    assert needs[4] == 1 << 9  # d after the rollback that did not find it
    assert needs[0] == needs[6] == needs[9] == 0


def test_a_failed_state_of_another_length_does_not_end_the_look_through_the_others() -> None:
    """``_one_covered`` looks through every failed state it is given: one with another
    number of snapshots is passed over, not the end of the look (in the search, states
    under one key have as many snapshots, so this pins the function's word, any one of
    those that failed will do, not a verdict of the search)."""
    longer = fail((("x", cands(A, B), 2), ("y", C, 1)), why=1)
    shorter = fail((("x", cands(A, B), 2),), why=2)
    assert _one_covered([longer, shorter], (("x", cands(A), 2),)) == 2
    assert _one_covered([shorter, longer], (("x", cands(A), 2), ("y", C, 1))) == 1


def test_a_snapshot_with_no_bit_is_read_by_no_failure() -> None:
    """``_failed`` keeps, for each failed state, the places of the contents its failure
    read: those whose snapshot's bit is in ``why``. An id with no bit (in the search every
    snapshot with a rollback left has one) is read by none, whatever ``why`` holds."""
    failed: dict[int, dict[Any, list[Any]]] = {}
    s = state(("w", cands(A), 1), ("x", cands(B), 1))
    _failed(failed, 0b1, frozenset({s}), 0b1, BIT)
    [(contents, at, why)] = failed[0b1][(A, frozenset({"w", "x"}), ())]
    assert contents is s[2] and at == [1] and why == 0b1


@pytest.mark.parametrize("early", [False, True])
@pytest.mark.parametrize("lacks_x", [
    ModelOp(2, "rollback-missing", 5, 6, arg="x"),
    ModelOp(2, "list", 5, 6, out=frozenset()),
])
def test_a_snapshot_the_ids_put_after_an_op_is_not_tried_before_it(early: bool, lacks_x: ModelOp) -> None:
    """Snapshot x (0-10) overlaps a failed rollback to x, or a listing without x (5-6),
    which is no candidate yet at the start (the append of a, 1-2, returned before it was
    invoked). ``_id_order`` puts x after it, so x is not tried first (it would be, a
    snapshot before an append, and fail at the op that says x is absent): the append, the
    op lacking x, then x, in 7 steps; 13 when the ids' order is ignored. This pins the
    search's work, not its verdict (the same either way)."""
    import time

    from harness.checker.frontier import search

    ops = [ModelOp(0, "snapshot", 0, 10, out="x"), ModelOp(1, "append", 1, 2, arg="a"), lacks_x]
    out = search(ops, time.monotonic() + 10, early=early)
    assert (out.ok, out.explored, out.order) == (True, 7, (1, 2, 0))


def test_a_failed_state_that_does_not_cover_does_not_end_the_look_through_the_others() -> None:
    """A failed state that differs in a content its failure read (another id or rollbacks
    left, another fixed content, candidates not a superset) is passed over, and the next
    one that covers says what it read."""
    covers = fail((("x", cands(A, B), 2), ("y", C, 1)), why=2)
    contents = (("x", cands(A), 2), ("y", C, 1))
    for other in [
        (("x", cands(A, B), 1), ("y", C, 1)),  # x: rollbacks left
        (("x", cands(A, B), 2), ("y", A, 1)),  # y: another fixed content
        (("x", cands(B), 2), ("y", C, 1)),  # x: candidates not a superset
    ]:
        assert _one_covered([fail(other, why=BOTH), covers], contents) == 2
    renamed = fail((("z", cands(A, B), 2), ("y", C, 1)), why=BOTH | 4)
    assert _one_covered([renamed, covers], contents) == 2


_TURNS = st.lists(st.sampled_from(["a", "b", "c"]), max_size=3).map(tuple)
_STATE = st.builds(
    lambda turns, ids, content: (turns, frozenset(ids),
                                 (("x", frozenset(content), 1),) if content else (), ()),
    _TURNS, st.sets(st.sampled_from(["x", "y"])), st.sets(_TURNS, max_size=2))


@settings(max_examples=400, deadline=None)
@given(st.lists(_STATE, min_size=2, max_size=6, unique=True),
       st.sampled_from(["read", "list", "append"]), _TURNS, st.sets(st.sampled_from(["x", "y"])))
def test_a_set_steps_through_a_shown_op_as_the_lazy_step_steps_each_state(
        states: list[Any], kind: str, turns: tuple[str, ...], ids: set[str]) -> None:
    """``_shown`` (a read, a listing, an append whose parent a read showed, from several
    states with no window open) makes the states the lazy step makes one by one: one as
    a 1-tuple (none: an empty tuple), several as a frozenset, and a read or a listing
    that keeps them all gives back the very set."""
    out = frozenset(ids) if kind == "list" else turns
    op = ModelOp(0, kind, 0, 1, arg="d" if kind == "append" else None, out=out)
    given_ = frozenset(states)
    step = make_step([op])
    want = frozenset(s2 for s in given_ for s2 in step(s, op))
    got = _shown(given_, op)
    assert set(got) == want
    assert type(got) is (tuple if len(want) < 2 else frozenset)
    if kind != "append" and want == given_:
        assert got is given_
