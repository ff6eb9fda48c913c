"""States that differ only in lists no op left can show are one (harness.checker.frontier:
``_unseen_as_one``, and the search that applies it where a step leaves several states).

A lazy state is (turns, ids, contents, open windows); contents are (snapshot id, content,
rollbacks left), a content fixed (a tuple of turns) or a set of candidates (a frozenset).
``shows`` maps the last turn of each list an op shows (a read, an append whose parent a
read showed; "" for the empty list) to those ops."""

from __future__ import annotations

import time
from typing import Any

from harness.checker.exact import replays
from harness.checker.frontier import _UNSEEN, JOIN_FROM, _least, _unseen_as_one, search
from harness.checker.lazy import certify
from harness.checker.model import ModelOp

A, AB, C = ("a",), ("a", "b"), ("c",)


def state(turns: tuple[str, ...], *contents: tuple[str, Any, int]) -> Any:
    return (turns, frozenset({"x", "y"}), tuple(contents), ())


def test_states_apart_only_in_lists_nobody_shows_are_the_least_of_them() -> None:
    states = frozenset({state(AB, ("x", AB, 1)), state(A, ("x", A, 1)), state(C, ("x", C, 1))})
    # (c) is shown by op 7, not placed yet: its state stays; (a) and (a, b) become one
    # (each state's turns and x's content are the same list: correlated, not a product)
    got = _unseen_as_one(states, {"c": [7]}, lin=0)
    assert got == frozenset({state(A, ("x", A, 1)), state(C, ("x", C, 1))})
    # once op 7 is placed nobody shows (c) either: one state, the one with the least turns
    assert _unseen_as_one(states, {"c": [7]}, lin=1 << 7) == (state(A, ("x", A, 1)),)
    # ... of the same length, the least
    two = frozenset({state(("b",), ("x", ("b",), 1)), state(A, ("x", A, 1))})
    assert _unseen_as_one(two, {}, lin=0) == (state(A, ("x", A, 1)),)


class Lookups(dict[str, list[int]]):
    """``shows``, counting the lookups made in it."""

    made = 0

    def get(self, key: Any, default: Any = None) -> Any:
        self.made += 1
        return super().get(key, default)


def test_each_list_is_looked_up_once_in_a_call() -> None:
    """A list a state holds twice (as its turns and as x's content, the correlated case)
    is looked up once: three lists, (a, b), (a) and (c), three lookups."""
    states = frozenset({state(AB, ("x", AB, 1)), state(A, ("x", A, 1)), state(C, ("x", C, 1))})
    shows = Lookups({"c": [7]})
    assert len(_unseen_as_one(states, shows, lin=0)) == 2
    assert shows.made == 3


def test_states_a_shown_list_tells_apart_stay_apart() -> None:
    states = frozenset({state(A, ("x", AB, 1)), state(A, ("x", C, 1))})
    assert _unseen_as_one(states, {"b": [3]}, lin=0) is states  # x holds (a, b): shown
    assert _unseen_as_one(states, {"c": [3]}, lin=0) is states  # ... or (c)
    assert _unseen_as_one(states, {}, lin=0) == (min(states, key=lambda s: s[2][0][1]),)
    # turns shown: the states stay apart however their contents compare
    apart = frozenset({state(A, ("x", AB, 1)), state(C, ("x", AB, 1))})
    assert _unseen_as_one(apart, {"a": [1], "c": [2]}, lin=0) is apart


def test_candidates_are_compared_as_sets_of_marked_lists() -> None:
    # x may still hold (a) or (a, b) in one state, (c) in the other: none shown, one choice
    states = frozenset({state(A, ("x", frozenset({A, AB}), 2)), state(A, ("x", frozenset({C}), 2))})
    assert len(_unseen_as_one(states, {}, lin=0)) == 1
    # a fixed content and a set of candidates are never one, even of lists nobody shows
    mixed = frozenset({state(A, ("x", C, 2)), state(A, ("x", frozenset({C}), 2))})
    assert _unseen_as_one(mixed, {}, lin=0) is mixed
    # nor are states apart in what else they hold: the rollbacks left, the ids
    left = frozenset({state(A, ("x", AB, 1)), state(A, ("x", C, 2))})
    assert _unseen_as_one(left, {}, lin=0) is left
    ids = frozenset({state(AB), (C, frozenset({"x"}), (), ())})
    assert _unseen_as_one(ids, {}, lin=0) is ids


def test_a_list_is_told_by_its_last_turn_so_a_broken_store_keeps_states_apart() -> None:
    # a store that broke shows (z, b): a list ending as (a, b) does, so both count as shown
    states = frozenset({state(AB, ("x", AB, 1)), state(C, ("x", C, 1))})
    assert _unseen_as_one(states, {"b": [4]}, lin=0) == states
    assert _UNSEEN not in {s[0] for s in _unseen_as_one(states, {}, lin=0)}  # marks stay inside


def test_the_one_kept_is_the_least_by_turns_then_contents_not_by_how_sets_compare() -> None:
    """``_least``: the shortest turns first (not the least list: (b) before (a, b)); among
    equal turns, the contents at the places given, a fixed content as a tuple of turns
    (not sorted), candidates sorted (not compared as sets, which is by inclusion: neither
    of {(b)} and {(a), (c)} is less); a place past a state's contents is not looked at."""
    assert _least([state(AB), state(("b",))], []) == state(("b",))
    assert _least([state(("b",)), state(A)], []) == state(A)  # of one length, the least
    b, ac = state(A, ("x", frozenset({("b",)}), 1)), state(A, ("x", frozenset({A, C}), 1))
    assert _least([b, ac], [0]) == ac
    ba, a_c = state(A, ("x", ("b", "a"), 1)), state(A, ("x", ("a", "c"), 1))
    assert _least([ba, a_c], [0]) == a_c
    assert _least([state(A, ("x", C, 1)), state(A, ("x", A, 1))], [0, 1]) == state(A, ("x", A, 1))


def op(n: int, kind: str, lo: int, hi: int, arg: Any = None, out: Any = None) -> ModelOp:
    return ModelOp(n, kind, lo, hi, arg, out)


def _window_of_four(then: list[ModelOp]) -> list[ModelOp]:
    """Snapshot x while a, b then c are appended (its window may take (), (a), (a, b) or
    (a, b, c): as many states as the search looks at, ``JOIN_FROM``), then a rollback to x,
    whose choice nobody shows, then ``then`` (numbered from 4)."""
    return [
        op(0, "append", 0, 20, "a", ()),
        op(1, "append", 0, 20, "b", A),
        op(2, "snapshot", 0, 20, None, "x"),
        op(3, "rollback", 30, 40, "x"),
        *then,
        op(4 + len(then), "append", 0, 20, "c", AB),
    ]


def test_a_retried_append_left_keeps_the_lists_it_may_show_apart() -> None:
    """A turn appended twice has no known parent (``out`` None): while it is left, a list
    nobody shows may yet be shown with its turn added. Here only x holding (a) explains the
    read of (a, t); had the search kept one state of the rollback's four, the least, (),
    it would have refuted a valid session."""
    ops = _window_of_four([op(4, "append", 50, 60, "t"), op(5, "read", 70, 80, None, ("a", "t"))])
    out = search(ops, time.monotonic() + 30)
    assert out.ok is True
    assert replays(certify([ops[k] for k in out.order], out.path))
    # the same ops, the retried append first: the op after it (b) is placed by the rollback
    first = [ops[4], *ops[:4], *ops[5:]]
    first = [op(n, o.kind, o.lo, o.hi, o.arg, o.out) for n, o in enumerate(first)]
    assert search(first, time.monotonic() + 30).ok is True


def test_a_list_the_next_op_shows_keeps_its_state_looking_ahead_or_not() -> None:
    """The read just after the rollback in the ops' order shows (a): the state where x
    took (a) is kept (the other three, shown by nobody, are one), whether the rollback is
    stepped by the quick way of one state or, looking ahead from the start, the other."""
    ops = _window_of_four([op(4, "read", 45, 46, None, A)])
    for ahead in (None, 0):
        out = search(ops, time.monotonic() + 30, ahead=ahead)
        assert out.ok is True
        assert replays(certify([ops[k] for k in out.order], out.path))


def test_a_choice_nobody_shows_is_searched_once_and_the_proof_replays() -> None:
    """The rollback's choice is copied by snapshot y and restored by the rollback to y,
    then overwritten by the rollback to z, taken on the empty list: the four states are
    one from the rollback to x on, and the proof found through the one kept replays. A read
    that no choice explains is refuted all the same."""
    tail = [
        op(4, "snapshot", 41, 42, None, "y"),
        op(5, "rollback", 43, 44, "y"),
        op(6, "rollback", 45, 46, "z"),
        op(7, "read", 47, 48, None, ()),
        op(8, "snapshot", -2, -1, None, "z"),  # taken on the empty list, first of all
    ]
    ops = _window_of_four(tail)
    assert JOIN_FROM <= 4
    out = search(ops, time.monotonic() + 30)
    assert out.ok is True
    assert replays(certify([ops[k] for k in out.order], out.path))
    # each configuration from the rollback to x on holds one state, not four
    apart = search(ops, time.monotonic() + 30, join_unseen=False)
    assert apart.ok is True and out.explored < apart.explored
    wrong = _window_of_four([*tail[:3], op(7, "read", 47, 48, None, C), tail[4]])
    assert search(wrong, time.monotonic() + 30).ok is False
