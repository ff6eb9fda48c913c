"""The lazy model's parts on their own (harness.checker.lazy): what each kind of op does to a
state (``make_step``: the windows, the candidates, the rollbacks left), which states
``merge`` joins, the order ``rank`` gives, and where ``certify`` moves a snapshot.

Ops are ``ModelOp(id, kind, lo, hi, arg, out)`` (harness.checker.model); a lazy state is
(turns, ids, contents, open windows), contents (snapshot id, content, rollbacks left), a
content fixed (a tuple of turns) or a set of candidates (a frozenset)."""

from __future__ import annotations

from typing import Any

import pytest

from harness.checker.exact import replays
from harness.checker.lazy import DIRTY, LAZY_INIT, MERGE_WORK, _grow, certify, entry_index, make_step, merge, rank
from harness.checker.model import GHOST, ModelOp
from harness.checker.ops import INF

E: tuple[str, ...] = ()
A, AB, ABC, C = ("a",), ("a", "b"), ("a", "b", "c"), ("c",)


def op(n: int, kind: str, lo: int, hi: int, arg: Any = None, out: Any = None) -> ModelOp:
    return ModelOp(n, kind, lo, hi, arg, out)


def cands(*contents: tuple[str, ...]) -> frozenset[tuple[str, ...]]:
    return frozenset(contents)


def ids(*names: str) -> frozenset[str]:
    return frozenset(names)


def run(ops: list[ModelOp], order: list[int], pick: dict[int, int] | None = None) -> list[Any]:
    """The lazy states along ``order`` (the state before each op, then the last), taking
    branch ``pick[n]`` (default the first) where op ``n`` has several."""
    step = make_step(ops)
    path = [LAZY_INIT]
    for n in order:
        got = step(path[-1], ops[n])
        assert got, f"op {n} is impossible here"
        path.append(got[(pick or {}).get(n, 0)])
    return path


def test_find_and_grow() -> None:
    contents = (("s1", cands(A), 1), ("s2", A, 2), ("s3", cands(E), 1))
    assert [entry_index(contents, s) for s in ("s1", "s2", "s3", "s4")] == [0, 1, 2, -1]
    assert entry_index((), "s1") == -1
    assert _grow(contents, (), AB) is contents  # no window open: the same object
    # only open snapshots with candidates gain the turns; the others stay the same objects
    got = _grow(contents, (("s1", 5), ("s2", 5)), AB)
    assert got == (("s1", cands(A, AB), 1), ("s2", A, 2), ("s3", cands(E), 1))
    assert got[1] is contents[1] and got[2] is contents[2]
    # none of the open snapshots has candidates (or an entry): the very contents again
    assert _grow(contents, (("s2", 5), ("s4", 5)), AB) is contents


# s1 is targeted by a rollback (and one of unknown outcome): 2 rollbacks left; s2 by one;
# s9 by none. The step reads only each op's kind, times, arg and out.
ROLLS = [op(90, "rollback", 50, 51, "s1"), op(91, "rollback?", 52, INF, "s1"),
         op(92, "rollback", 53, 54, "s2")]


def test_a_targeted_snapshot_opens_a_window_until_an_op_invoked_after_it_returned() -> None:
    step = make_step(ROLLS)
    [s] = step((A, ids(), (), ()), op(0, "snapshot", 1, 5, None, "s1"))
    assert s == (A, ids("s1"), (("s1", cands(A), 2),), (("s1", 5),))
    # an append invoked at the snapshot's return is concurrent with it: the window grows
    [s] = step(s, op(1, "append", 5, 6, "b"))
    assert s == (AB, ids("s1"), (("s1", cands(A, AB), 2),), (("s1", 5),))
    # one invoked after it returned ends the window, before the append takes effect
    [s] = step(s, op(2, "append", 6, 7, "c"))
    assert s == (ABC, ids("s1"), (("s1", cands(A, AB), 2),), ())


def test_windows_are_kept_sorted_and_each_ends_at_its_own_return() -> None:
    step = make_step(ROLLS)
    [s] = step((A, ids(), (), ()), op(0, "snapshot", 1, 9, None, "s2"))
    [s] = step(s, op(1, "snapshot", 2, 4, None, "s1"))
    assert s == (A, ids("s1", "s2"), (("s1", cands(A), 2), ("s2", cands(A), 1)), (("s1", 4), ("s2", 9)))
    [s] = step(s, op(2, "append", 5, 6, "b"))  # after s1 returned, before s2 did
    assert s == (AB, ids("s1", "s2"), (("s1", cands(A), 2), ("s2", cands(A, AB), 1)), (("s2", 9),))


def test_a_snapshot_no_rollback_targets_keeps_no_content_and_no_window() -> None:
    step = make_step(ROLLS)
    assert step((A, ids(), (), ()), op(0, "snapshot", 1, 5, None, "s9")) == [(A, ids("s9"), (), ())]
    # snapshot-id: the same, even for an id a rollback targets
    assert step((A, ids(), (), ()), op(0, "snapshot-id", 1, 5, None, "s1")) == [(A, ids("s1"), (), ())]
    # an id already taken cannot be made again
    for kind in ("snapshot", "snapshot-id"):
        assert step((A, ids("s1"), (), ()), op(0, kind, 1, 5, None, "s1")) == []


def test_a_rollback_of_unknown_outcome_counts_among_the_rollbacks_left() -> None:
    step = make_step([op(0, "rollback?", 10, INF, "s1")])
    assert step(LAZY_INIT, op(1, "snapshot", 1, 2, None, "s1")) == [
        (E, ids("s1"), (("s1", cands(E), 1),), (("s1", 2),))]


def test_a_snapshot_of_unknown_outcome_may_have_made_any_id_not_taken_with_its_content_fixed() -> None:
    step = make_step(ROLLS)
    s = (A, ids("s2"), (("s2", cands(A, AB), 1),), (("s2", 9),))
    got = step(s, op(3, "snapshot?", 2, INF, ("s1", "s2", "s9")))
    assert sorted(got, key=rank) == sorted([
        (A, ids("s1", "s2"), (("s1", A, 2), ("s2", cands(A, AB), 1)), (("s2", 9),)),
        (A, ids("s2", "s9"), (("s2", cands(A, AB), 1),), (("s2", 9),)),
    ], key=rank)
    assert step((A, ids("s1"), (), ()), op(3, "snapshot?", 2, INF, ("s1",))) == []


def test_an_append_must_follow_what_a_read_showed_and_a_ghost_makes_the_turns_dirty() -> None:
    step = make_step(ROLLS)
    s = (A, ids("s1"), (("s1", cands(E), 2),), (("s1", 9),))
    assert step(s, op(1, "append", 2, 3, "b", A)) == [(AB, ids("s1"), (("s1", cands(E, AB), 2),), (("s1", 9),))]
    assert step(s, op(1, "append", 2, 3, "b", E)) == []  # its parent was () but the turns are (a)
    dirty = (DIRTY, ids("s1"), (("s1", cands(E, DIRTY), 2),), (("s1", 9),))
    assert step(s, op(1, "append", 2, 3, GHOST)) == [dirty]
    assert step(dirty, op(2, "append", 4, 5, "c")) == [dirty]  # dirty stays dirty
    assert step(dirty, op(2, "append", 4, 5, "c", A)) == []  # no parent a read showed


def test_a_read_sees_the_turns_and_keeps_the_same_state_object() -> None:
    step = make_step(ROLLS)
    s = (A, ids("s1"), (("s1", cands(A), 2),), (("s1", 9),))
    [got] = step(s, op(1, "read", 2, 3, None, A))
    assert got is s
    assert step(s, op(1, "read", 2, 3, None, AB)) == []
    assert step(s, op(1, "read", 2, 3, None, E)) == []
    [got] = step(s, op(1, "read", 10, 11, None, A))  # invoked after s1 returned
    assert got == (A, ids("s1"), (("s1", cands(A), 2),), ())


def test_a_listing_sees_the_ids_and_ends_every_window() -> None:
    step = make_step(ROLLS)
    s = (A, ids("s1"), (("s1", cands(A), 2),), (("s1", 9),))
    assert step(s, op(1, "list", 2, 3, None, ids("s1"))) == [(A, ids("s1"), (("s1", cands(A), 2),), ())]
    assert step(s, op(1, "list", 2, 3, None, ids())) == []
    assert step(s, op(1, "list", 2, 3, None, ids("s1", "s2"))) == []


def test_a_failed_rollback_needs_the_id_absent_and_an_unknown_kind_is_an_error() -> None:
    step = make_step(ROLLS)
    s = (A, ids("s1"), (("s1", cands(A), 2),), (("s1", 9),))
    assert step(s, op(1, "rollback-missing", 2, 3, "s2")) == [s]
    assert step(s, op(1, "rollback-missing", 2, 3, "s1")) == []
    with pytest.raises(ValueError, match="unknown op kind 'compact'"):
        step(s, op(1, "compact", 2, 3))


def test_a_rollback_chooses_each_candidate_ends_its_window_and_grows_the_others() -> None:
    step = make_step(ROLLS)
    s = (ABC, ids("s1", "s2"), (("s1", cands(A, AB), 2), ("s2", cands(ABC), 1)),
         (("s1", 60), ("s2", 60)))
    assert step(s, op(1, "rollback", 2, 3, "s3")) == []  # no such id
    got = step(s, op(1, "rollback", 2, 3, "s1"))
    # one state per candidate, in sorted order; s1 keeps what it restored (one rollback
    # left), its window closed; s2's window, still open, gains the restored turns
    assert got == [
        (A, ids("s1", "s2"), (("s1", cands(A), 1), ("s2", cands(ABC, A), 1)), (("s2", 60),)),
        (AB, ids("s1", "s2"), (("s1", cands(AB), 1), ("s2", cands(ABC, AB), 1)), (("s2", 60),)),
    ]
    # the last rollback to s2 (a candidate each): its content is dropped, nobody reads it again
    again = step(got[0], op(2, "rollback", 4, 5, "s2"))
    assert again == [(A, ids("s1", "s2"), (("s1", cands(A), 1),), ()),
                     (ABC, ids("s1", "s2"), (("s1", cands(A), 1),), ())]
    # the last rollback to s1, from a state where it was restored once already
    assert step(got[1], op(3, "rollback?", 4, INF, "s1")) == [
        (AB, ids("s1", "s2"), (("s2", cands(ABC, AB), 1),), (("s2", 60),))]


def test_a_rollback_to_a_fixed_content_leaves_the_windows_open() -> None:
    step = make_step(ROLLS)
    s = (ABC, ids("s1", "s2"), (("s1", A, 2), ("s2", cands(AB), 1)), (("s2", 60),))
    assert step(s, op(1, "rollback", 2, 3, "s1")) == [
        (A, ids("s1", "s2"), (("s1", cands(A), 1), ("s2", cands(AB, A), 1)), (("s2", 60),))]


def test_a_snapshot_restored_twice_gives_the_same_content_both_times() -> None:
    """s1 over the append of b; a rollback to it, an append of c, a second rollback: a read
    then shows what the first restored, never c; and neither (a, c) nor (a, b, c)."""
    ops = [op(0, "append", 0, 1, "a"), op(1, "snapshot", 2, 5, None, "s1"), op(2, "append", 3, 4, "b"),
           op(3, "rollback", 6, 7, "s1"), op(4, "append", 8, 9, "c"), op(5, "rollback", 10, 11, "s1"),
           op(6, "read", 12, 13)]
    step = make_step(ops)
    assert [p[0] for p in run(ops, [0, 1, 2, 3, 4])] == [E, A, A, AB, A, ("a", "c")]
    for first, turns in ((0, A), (1, AB)):
        path = run(ops, [0, 1, 2, 3, 4], {3: first})
        assert path[-1][2] == (("s1", cands(turns), 1),)  # what the first rollback chose
        # the second rollback, the last: one state, with nothing left to restore
        assert step(path[-1], ops[5]) == [(turns, ids("s1"), (), ())]
        assert step(step(path[-1], ops[5])[0], op(6, "read", 12, 13, None, turns)) != []
        for wrong in ((*turns, "c"), ("a", "c")):
            assert step(step(path[-1], ops[5])[0], op(6, "read", 12, 13, None, wrong)) == []


def test_merge_joins_states_one_snapshot_apart_until_none_are() -> None:
    def st(*contents: tuple[str, Any, int], turns: tuple[str, ...] = A,
           open_: tuple[tuple[str, int], ...] = ()) -> Any:
        return (turns, frozenset(c[0] for c in contents), tuple(contents), open_)

    P, Q, S, T = ("p",), ("q",), ("s",), ("t",)
    one = frozenset({st(("x", cands(P), 1))})
    assert merge(one) is one
    assert merge(frozenset()) == frozenset()
    # (p, s), (p, t), (q, {s, t}): joining x's pair first gives (p, {s, t}), which then
    # joins (q, {s, t}): one state, in two rounds
    three = frozenset({st(("x", cands(P), 1), ("y", cands(S), 1)), st(("x", cands(P), 1), ("y", cands(T), 1)),
                       st(("x", cands(Q), 1), ("y", cands(S, T), 1))})
    assert merge(three) == {st(("x", cands(P, Q), 1), ("y", cands(S, T), 1))}
    # apart: other turns, other open windows
    for other in (st(("x", cands(Q), 1), turns=C), st(("x", cands(Q), 1), open_=(("x", 9),))):
        both = frozenset({st(("x", cands(P), 1)), other})
        assert merge(both) is both
    # apart, with the same ids: another count of contents (w has no rollback left), another
    # id, other rollbacks left, a fixed content, at the place that varies
    wx = ids("w", "x")
    base = (A, wx, (("x", cands(P), 1),), ())
    for contents in ((("w", cands(S), 1), ("x", cands(Q), 1)), (("w", cands(Q), 1),),
                     (("x", cands(Q), 2),), (("x", Q, 1),)):
        both = frozenset({base, (A, wx, contents, ())})
        assert merge(both) is both
    # what merges in one group does not pull in the states of another
    mixed = frozenset({st(("x", cands(P), 1)), st(("x", cands(Q), 1)), st(("x", cands(P), 1), turns=C)})
    assert merge(mixed) == {st(("x", cands(P, Q), 1)), st(("x", cands(P), 1), turns=C)}
    # a place that is the same in every state (equal, not the same object) is not a choice
    same = frozenset({st(("x", cands(P), 1), ("y", cands(S), 1)), st(("x", cands(Q), 1), ("y", cands(S), 1))})
    assert merge(same) == {st(("x", cands(P, Q), 1), ("y", cands(S), 1))}


def test_merge_gives_up_past_its_bound_of_work() -> None:
    def st(*cs: frozenset[tuple[str, ...]]) -> Any:
        contents = tuple((f"x{i}", c, 1) for i, c in enumerate(cs))
        return (A, frozenset(f"x{i}" for i in range(len(cs))), contents, ())

    at = frozenset(st(cands((str(i),))) for i in range(MERGE_WORK))
    assert merge(at) == {st(frozenset((str(i),) for i in range(MERGE_WORK)))}
    past = frozenset(st(cands((str(i),))) for i in range(MERGE_WORK + 1))
    assert merge(past) is past
    # two places vary: the states times the places is the work
    half = MERGE_WORK // 2
    at2 = frozenset(st(cands((str(i),)), cands((str(i % 2),))) for i in range(half))
    assert len(merge(at2)) == 2  # the even ones and the odd ones
    past2 = frozenset(st(cands((str(i),)), cands((str(i % 2),))) for i in range(half + 1))
    assert merge(past2) is past2


def test_rank_orders_by_turns_then_ids_then_contents_then_windows() -> None:
    states: list[Any] = [
        (AB, ids(), (), ()),
        (C, ids(), (), ()),
        (A, ids("s2"), (), ()),
        (A, ids("s1", "s3"), (), ()),
        (A, ids("s1"), (("s1", cands(A, AB), 1),), ()),
        (A, ids("s1"), (("s1", AB, 1),), ()),
        (A, ids("s1"), (("s1", cands(A), 1),), ()),
        (A, ids("s1"), (("s1", cands(A), 1),), (("s1", 9),)),
        (A, ids("s1"), (("s1", cands(A), 2),), ()),
    ]
    expected = [states[i] for i in (5, 6, 7, 8, 4, 3, 2, 1, 0)]
    assert sorted(states, key=rank) == expected
    assert sorted(reversed(states), key=rank) == expected


# a: 0-1; s1: 2-20 (restored by a rollback at 30-31); b: 3-4; c: 5-6; read (a, b) at 32-33
MOVED = [op(0, "append", 0, 1, "a"), op(1, "snapshot", 2, 20, None, "s1"), op(2, "append", 3, 4, "b"),
         op(3, "append", 5, 6, "c"), op(4, "rollback", 30, 31, "s1"), op(5, "read", 32, 33, None, AB)]


def test_certify_moves_a_snapshot_to_the_first_point_that_had_what_was_restored() -> None:
    path = run(MOVED, [0, 1, 2, 3, 4], {4: 1})
    assert path[-1][0] == AB
    order = MOVED[:5]
    got = certify(order, path)
    assert [o.id for o in got] == [0, 2, 1, 3, 4]
    assert replays([*got, MOVED[5]])
    assert not replays([*order, MOVED[5]])  # where the search placed it, s1 held (a)
    # restored (a): it stays where it was placed
    path = run(MOVED, [0, 1, 2, 3, 4], {4: 0})
    assert certify(order, path) == order


def test_certify_moves_two_snapshots_to_one_point_in_their_order() -> None:
    ops = [op(0, "snapshot", 0, 20, None, "s1"), op(1, "snapshot", 1, 20, None, "s2"),
           op(2, "append", 3, 4, "a"), op(3, "append", 5, 6, "b"),
           op(4, "rollback", 30, 31, "s1"), op(5, "rollback", 32, 33, "s2")]
    path = run(ops, [0, 1, 2, 3, 4, 5], {4: 1, 5: 1})
    assert [p[0] for p in path[-3:]] == [AB, A, A]
    got = certify(ops, path)
    assert [o.id for o in got] == [2, 0, 1, 3, 4, 5]
    assert replays(got)


def test_certify_stops_where_a_window_closed() -> None:
    """A path whose restored turns lie past the end of the window (the replay then fails):
    the snapshot is not moved across a listing, an op invoked after it returned, or a
    rollback to it."""
    s1 = op(1, "snapshot", 2, 20, None, "s1")
    b, roll = op(2, "append", 3, 4, "b"), op(4, "rollback", 30, 31, "s1")

    def path(turns: list[tuple[str, ...]], restored: tuple[str, ...]) -> list[Any]:
        return [(t, ids(), (), ()) for t in turns] + [(restored, ids(), (), ())]

    listing = op(3, "list", 5, 6, None, ids("s1"))
    order = [s1, listing, b, roll]
    assert certify(order, path([E, E, E, ("b",)], ("b",))) == order
    late = op(2, "append", 21, 22, "b")  # invoked after s1 returned
    order = [s1, late, roll]
    assert certify(order, path([E, E, ("b",)], ("b",))) == order
    at = op(2, "append", 20, 22, "b")  # invoked as s1 returned: concurrent with it
    order = [s1, at, roll]
    assert [o.id for o in certify(order, path([E, E, ("b",)], ("b",)))] == [2, 1, 4]
    # past a rollback to it (invoked before s1 returned): the turns after it are not what
    # the snapshot held
    roll = op(4, "rollback", 10, 31, "s1")
    order = [s1, roll, b]
    assert certify(order, [(E, ids(), (), ()), (E, ids(), (), ()), (("b",), ids(), (), ()),
                           (("b", "b"), ids(), (), ())]) == order
    # a snapshot nobody restored, or of unknown outcome, stays
    order = [s1, b]
    assert certify(order, path([E, E], ("b",))) == order
    unknown = op(1, "snapshot?", 2, INF, ("s1",))
    order = [unknown, b, roll]
    assert certify(order, path([E, E, ("b",)], ("b",))) == order


def test_certify_looks_for_the_content_only_after_the_snapshot_and_past_other_rollbacks() -> None:
    """s1 placed at (a) restores (), the turns a rollback to s0 brought back in its window:
    it moves after that rollback (a rollback to another snapshot leaves its window open),
    not to the start, where the turns were () too."""
    ops = [op(0, "snapshot", 0, 1, None, "s0"), op(1, "append", 2, 3, "a"), op(2, "snapshot", 4, 20, None, "s1"),
           op(3, "rollback", 5, 6, "s0"), op(4, "rollback", 30, 31, "s1"), op(5, "read", 32, 33, None, E)]
    path = run(ops, [0, 1, 2, 3, 4, 5], {4: 0})
    assert [p[0] for p in path] == [E, E, A, A, E, E, E]
    got = certify(ops, path)
    assert [o.id for o in got] == [0, 1, 3, 2, 4, 5]
    assert replays(got)


def test_a_window_ends_for_an_op_invoked_after_its_return_even_with_another_still_open() -> None:
    step = make_step(ROLLS)
    s = (A, ids("s1", "s2"), (("s1", cands(A), 2), ("s2", cands(A), 1)), (("s1", 4), ("s2", 9)))
    # invoked at 9, after s1 returned and as s2 returned: s1's window ends, s2's stays
    assert step(s, op(1, "append", 9, 10, "b")) == [
        (AB, ids("s1", "s2"), (("s1", cands(A), 2), ("s2", cands(A, AB), 1)), (("s2", 9),))]
    # a read invoked as the last window's snapshot returned changes nothing: the same object
    [got] = step(step(s, op(1, "read", 5, 6, None, A))[0], op(2, "read", 9, 10, None, A))
    assert got == (A, ids("s1", "s2"), (("s1", cands(A), 2), ("s2", cands(A), 1)), (("s2", 9),))
    assert step(got, op(3, "read", 9, 10, None, A))[0] is got


def test_the_step_makes_one_object_of_each_set_of_ids_and_contents() -> None:
    """The same ids and contents made twice (as on two branches of a search) are the same
    objects: a search keeps tens of thousands of states."""
    step = make_step(ROLLS)
    s = (A, ids("s2"), (("s2", cands(E), 1),), ())
    for snap in (op(0, "snapshot", 1, 5, None, "s1"), op(0, "snapshot?", 1, INF, ("s1",))):
        [x] = step(s, snap)
        [y] = step((A, ids("s2"), (("s2", cands(E), 1),), ()), snap)
        assert x == y and x[1] is y[1] and x[2] is y[2]


def test_merge_joins_states_whose_other_contents_are_equal_fixed_ones() -> None:
    """A fixed content equal in every state (its entries not the same objects) is not a choice: the
    states differing in one snapshot's candidates still merge."""
    def st(fixed: tuple[str, ...], c: frozenset[tuple[str, ...]]) -> Any:
        return (A, ids("x", "y"), (("x", fixed, 1), ("y", c, 1)), ())

    states = frozenset({st(A, cands(C)), st(A, cands(AB))})
    assert merge(states) == {st(A, cands(C, AB))}


def test_certify_moves_only_a_snapshot_whose_content_was_kept() -> None:
    """Only a ``snapshot`` is moved to where its content came from: an op of another kind
    whose result names the id a rollback restored (here a ``snapshot-id``, whose content
    was not kept) stays where the search placed it, whatever the turns there. (``certify``
    reads only the kinds, ids and the turns along the path: the states need not be ones
    the model reaches.)"""
    order = [op(0, "snapshot-id", 0, 9, None, "s1"), op(1, "append", 1, 2, "a"),
             op(2, "rollback", 10, 11, "s1")]
    path = [(E, ids(), (), ()), (E, ids("s1"), (), ()), (A, ids("s1"), (), ()), (A, ids("s1"), (), ())]
    assert certify(order, path) == order
