"""The frontier search's look-ahead on its own (harness.checker.frontier: ``_restoring``,
``_unexplained``, ``_may_explain``, ``_dead_from``): which reads and appends only a rollback
can explain, when a configuration can no longer explain one, and from which depth of the
search's path on none could.

A lazy state is (turns, ids, contents, open windows); contents are (snapshot id, content,
rollbacks left), a content fixed (a tuple of turns) or a set of candidates (a frozenset)."""

from __future__ import annotations

import time
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import harness.checker.frontier as frontier
from harness.checker.exact import replays
from harness.checker.frontier import _dead_from, _may_explain, _restoring, _stranded, _takers, _unexplained, search
from harness.checker.lazy import certify
from harness.checker.model import ModelOp
from harness.checker.ops import INF

A, AB, AC = ("a",), ("a", "b"), ("a", "c")
BIT = {"x": 1, "y": 2}


def op(n: int, kind: str, lo: int, hi: int, arg: Any = None, out: Any = None) -> ModelOp:
    return ModelOp(n, kind, lo, hi, arg, out)


def state(*contents: tuple[str, Any, int], turns: tuple[str, ...] = AB, ids: Any = None,
          open_: tuple[tuple[str, int], ...] = ()) -> Any:
    return (turns, frozenset(c[0] for c in contents) if ids is None else frozenset(ids),
            tuple(contents), open_)


# a appended on (), snapshot x, b appended on (a), a rollback to x, then a read of (a)
# while it runs and an append of c on (a) after it
SESSION = [
    op(0, "append", 0, 1, "a", ()),
    op(1, "snapshot", 2, 3, None, "x"),
    op(2, "append", 4, 5, "b", A),
    op(3, "rollback", 6, 8, "x"),
    op(4, "read", 7, 9, None, A),
    op(5, "append", 10, 12, "c", A),
    op(6, "read", 11, 13, None, AC),
    op(7, "read", 0, 1, None, ()),
]


def test_the_reads_and_appends_only_a_rollback_explains_are_found() -> None:
    """The read of (a) while the rollback to x runs, and the append of c on (a) after it:
    the last op to set the turns before each is that rollback (the append of b returned
    before both, the append of a before that), so x held (a). The read of (a, c) may
    show what the append of c set; a read of () is left out."""
    entry = (3, "x")
    takers = (((0, None),),)  # x is taken while (a) is set: by the append of a alone
    # the appends of a and b returned before the read began (bits 0, 2), and the rollback too
    # before the append of c (bit 3)
    assert _restoring(SESSION, BIT) == {"x": [(4, A, (entry,), 1, takers, 0b101), (5, A, (entry,), 1, takers, 0b1101)]}


def test_a_read_of_the_empty_list_after_a_setter_returned_is_one_only_a_rollback_explains() -> None:
    """An append of a, a snapshot x of (a), a rollback to y running long (4-20), then a
    read of the empty list (10-11): the append returned before the read began, and no
    append leaves the turns empty, so the last op to set them before the read is the
    rollback to y, and y held the empty list. A read of the empty list before any op
    returned (the first) may show the start: it is left out."""
    ops = [
        op(0, "read", 0, 1, None, ()),
        op(1, "append", 0, 2, "a", ()),
        op(2, "snapshot", 3, 4, None, "x"),
        op(3, "rollback", 4, 20, "y"),
        op(4, "read", 10, 11, None, ()),
    ]
    got = _restoring(ops, BIT)
    # the append of a on the empty list was invoked when nothing had returned: left out too
    assert got == {"y": [(4, (), ((3, "y"),), 2, (None,), 0b10)]}
    # a state whose x holds (a), y not taken: y may yet take the empty list (not known
    # what sets it), so it may explain the read; with y taken and holding (a), it cannot
    entry = got["y"][0]
    assert _may_explain(state(("x", A, 1)), (), entry[2], 0b10, entry[4], entry[5])
    assert not _may_explain(state(("x", A, 1), ("y", A, 1)), (), entry[2], 0b10, entry[4], entry[5])
    assert _may_explain(state(("x", A, 1), ("y", frozenset({A, ()}), 1)), (), entry[2], 0b10,
                        entry[4], entry[5])


def test_an_op_returned_before_another_setter_was_invoked_is_hidden_by_it() -> None:
    """A rollback to y (0-1), then an append of d (2-3) and a rollback to x (2-6) while
    a read of (q) runs (4-7), and a rollback to w of unknown outcome invoked first: the
    rollback to y returned before the append of d was invoked, which returned before the
    read began, so it is not the last op to set the turns; the unknown one may be. The
    append of d on the empty list, invoked after the rollback to y returned, is one only
    a rollback explains as well (no append leaves the turns empty): y, w or x."""
    ops = [
        op(0, "rollback", 0, 1, "y"),
        op(1, "append", 2, 3, "d", ()),
        op(2, "rollback", 2, 6, "x"),
        op(3, "read", 4, 7, None, ("q",)),
        op(4, "rollback?", 0, INF, "w"),
    ]
    got = _restoring(ops, {"x": 1, "y": 2, "w": 4})
    entry = (3, ("q",), ((4, "w"), (2, "x")), 5, (None, None), 0b11)  # no snapshot taken
    on_empty = (1, (), ((0, "y"), (4, "w"), (2, "x")), 7, (None, None, None), 0b1)
    assert got == {"x": [on_empty, entry], "w": [on_empty, entry], "y": [on_empty]}


def test_a_read_an_append_may_explain_or_nothing_explains_is_left_out() -> None:
    """A read of (a) while the append of a runs (an append may set it), and a read of (z)
    that no op can have set (the search finds that out on its own); the reads after them
    are still looked at: one of (a) after the append of b that only the rollback to x
    explains."""
    ops = [op(0, "append", 0, 3, "a", ()), op(1, "read", 1, 4, None, A),
           op(2, "read", 5, 6, None, ("z",)), op(3, "rollback", 7, 8, "x"),
           op(4, "read", 7, 9, None, A), op(5, "append", 4, 5, "b", A)]
    assert _restoring(ops, {"x": 2}) == {"x": [(4, A, ((3, "x"),), 2, (None,), 1 << 5 | 1)]}


def test_an_op_invoked_after_the_read_returned_is_not_among_its_setters() -> None:
    """A read of (a) (0-10) taken in first brings in the rollback to y invoked at 5; the
    read of (q) (1-2) returned before that rollback began, so only the rollback to x
    (0-3), or the one of unknown outcome to w, may have set its turns. A setter that
    returned as another was invoked (the rollback to x at 3, the append of e invoked at 3
    and returned before the read of (r) began) may still be the last before the read."""
    ops = [
        op(0, "read", 0, 10, None, A),
        op(1, "read", 1, 2, None, ("q",)),
        op(2, "rollback", 0, 3, "x"),
        op(3, "rollback", 5, 6, "y"),
        op(4, "append", 3, 4, "e", None),
        op(5, "read", 5, 7, None, ("r",)),
        op(6, "rollback?", 0, INF, "w"),  # (so that no read has one rollback alone)
    ]
    got = _restoring(ops, {"x": 1, "y": 2, "w": 4})
    assert [e for e in got["x"] if e[0] == 1] == [(1, ("q",), ((2, "x"), (6, "w")), 5, (None, None), 0)]
    assert [e[2] for e in got["x"] if e[0] == 5] == [((2, "x"), (6, "w"), (3, "y"))]


def test_a_state_may_explain_a_read_in_every_way_but_one() -> None:
    """The turns already shown; the snapshot not taken yet; its window open; its content
    the list, or one of its candidates; no content kept: each may explain it. Only a
    content decided otherwise, or candidates without the list, or a rollback already
    placed, cannot."""
    back = ((3, "x"),)
    assert _may_explain(state(turns=A), A, back, 0)
    assert _may_explain(state(("x", AB, 1), turns=A), A, back, 0)  # nothing must come between
    assert _may_explain(state(ids=()), A, back, 0)
    assert _may_explain(state(("x", frozenset({AB}), 1), open_=(("x", 9),)), A, back, 0)
    assert _may_explain(state(("x", A, 1)), A, back, 0)
    assert _may_explain(state(("x", frozenset({AB, A}), 1)), A, back, 0)
    assert _may_explain(state(ids=("x",)), A, back, 0)
    assert not _may_explain(state(("x", AB, 1)), A, back, 0)
    assert not _may_explain(state(("x", frozenset({AB}), 1)), A, back, 0)
    assert not _may_explain(state(ids=()), A, back, 1 << 3)  # that rollback is placed
    # another snapshot's content is not looked at for x
    assert not _may_explain(state(("w", frozenset({A}), 1), ("x", AB, 1)), A, back, 0)
    assert _may_explain(state(("x", AB, 1)), A, ((3, "x"), (5, "y")), 0)  # y not taken


def test_a_configuration_is_cut_off_only_when_an_op_changes_what_a_snapshot_may_hold() -> None:
    """The read of (a) of SESSION, which only the rollback to x (op 3) explains, with x
    holding (a, b) in every state: cut off (x's bit) when the op placed ends x's window
    (invoked after x returned at 9), when it is a listing, or when it is a rollback to x;
    not when it changes nothing about x, nor once the read is placed, nor while one state
    of the set may still explain it."""
    restoring = _restoring(SESSION, BIT)

    def cut(*args: Any) -> tuple[int, int]:  # (the read or append cut off for, its bits)
        entry = _unexplained(restoring, *args)
        return (-1, 0) if entry is None else (entry[0], entry[3])

    held = state(("x", frozenset({AB}), 1))
    open_x = state(("x", frozenset({AB}), 1), open_=(("x", 9),))
    ending = op(9, "append", 10, 11, "e")
    assert cut(ending, (open_x,), (held,), 0, False) == (4, 1)
    assert cut(op(9, "list", 5, 6), (open_x,), (held,), 0, True) == (4, 1)
    assert cut(op(9, "rollback", 5, 6, "x"), (held,), (held,), 0, False) == (4, 1)
    assert cut(op(9, "append", 5, 6, "e"), (open_x,), (held,), 0, False) == (-1, 0)
    assert cut(ending, (held,), (held,), 0, False) == (-1, 0)  # no window
    assert cut(ending, (open_x,), (held,), 1 << 4 | 1 << 5, False) == (-1, 0)
    # the read placed, the append of c on (a) still to place: it is the one cut off for
    assert cut(ending, (open_x,), (held,), 1 << 4, False) == (5, 1)
    maybe = state(("x", frozenset({A}), 1))
    assert cut(ending, (open_x,), frozenset({held, maybe}), 0, False) == (-1, 0)
    assert cut(op(9, "rollback", 5, 6, "y"), (held,), (held,), 0, False) == (-1, 0)


def test_the_rollbacks_a_read_may_follow_at_the_edges() -> None:
    """The rollback to x is the first op of the session, and is invoked the instant the
    read of (q) returns (ops that touch count as concurrent): it may have set the read's
    turns. Nothing had returned when the read began, so no op is hidden by another (the
    append of d, invoked later than any other op, hides nothing before it; its parent is
    not known, so it is no read of a list)."""
    ops = [
        op(0, "rollback", 6, 8, "x"),
        op(1, "read", 1, 6, None, ("q",)),
        op(2, "append", 10, 11, "d", None),
        op(3, "read", 12, 13, None, ("d",)),
    ]
    assert _restoring(ops, BIT) == {"x": [(1, ("q",), ((0, "x"),), 1, (None,), 0)]}


def test_a_turn_appended_twice_is_looked_for_among_the_ops_around_the_read() -> None:
    """The turn a, appended twice long before (a retry), and an append of e (op 1) while a
    read of (a) runs with a rollback to x: which append of a set the turns is not known,
    and neither may be the last op before the read, so x held (a). A read of (a) while the
    second append of a runs may show what it set."""
    ops = [
        op(0, "append", 0, 1, "a", None),
        op(1, "append", 20, 22, "e", None),
        op(2, "append", 2, 3, "a", None),
        op(3, "rollback", 19, 23, "x"),
        op(4, "read", 21, 24, None, A),
        op(5, "append", 10, 11, "b", None),
        op(6, "read", 2, 3, None, A),
    ]
    assert _restoring(ops, {"x": 2}) == {"x": [(4, A, ((3, "x"),), 2, (None,), 1 << 5 | 1 << 2 | 1)]}


def test_the_depth_from_which_no_configuration_explains_a_read() -> None:
    """The read of (a) of SESSION, only the rollback to x explaining it, along a path of
    the search (its stack: placed ops, states): x not taken, then taken with its window
    open, then closed holding (a, b) and no longer (a), then more ops placed. The first
    depth that cannot explain the read is the one where x's window closed, however deep
    the path goes on; at the start or with x's window open, none before the current one."""
    entry = _restoring(SESSION, BIT)["x"][0]
    assert entry[0] == 4
    untaken = state(ids=(), turns=A)
    open_x = state(("x", frozenset({AB}), 1), open_=(("x", 9),))
    closed = state(("x", frozenset({AB}), 1))
    for before in range(0, 6):  # before = 0: x taken already at depth 0
        for after in range(0, 6):
            path = [untaken] * before + [open_x] + [closed] * after
            stack = [(0, (s,), [], 0, 0) for s in path]
            # the first closed one: on the stack, or (after == 0) the current one
            assert _dead_from(stack, entry) == before + 1
    # a set with one state that may still explain it is not dead
    stack = [(0, (untaken,), [], 0, 0), (0, (closed, open_x), [], 0, 0), (0, (closed,), [], 0, 0)]
    assert _dead_from(stack, entry) == 2


def test_a_configuration_reached_without_looking_is_looked_at_for_every_read() -> None:
    """The reads of SESSION only the rollback to x explains, against one configuration at
    the end of a path on which x was taken at depth 2: with x closed holding (a, b), the
    read of (a) (op 4) is the first none of its states may explain, and the search backs
    up to depth 3, where x's window had closed; placed, the append of c on (a) (op 5)
    is; both placed, or x's window still open (or one state of the set with it open),
    none is."""
    restoring = _restoring(SESSION, BIT)
    closed = state(("x", frozenset({AB}), 1))
    open_x = state(("x", frozenset({AB}), 1), open_=(("x", 9),))
    untaken = state(ids=())
    stack = [(0, (s,), [], 0, 0) for s in (untaken, untaken, open_x, closed, closed)]
    assert _stranded(restoring, stack, (closed,), 0) == (3, 1)
    assert restoring["x"][0][0] == 4 and restoring["x"][1][0] == 5
    assert _stranded(restoring, stack, (closed,), 1 << 4) == (3, 1)
    assert _stranded(restoring, stack, (closed,), 1 << 4 | 1 << 5) is None
    assert _stranded(restoring, stack, (open_x,), 0) is None
    assert _stranded(restoring, stack, frozenset({closed, open_x}), 0) is None


def test_of_several_reads_lost_the_search_backs_up_to_the_first_that_was() -> None:
    """A read of (p) only a rollback to snapshot a explains, and one of (q) only one to b:
    on the path, b closed without (q) at depth 2, a without (p) at depth 5. Both are
    lost at the end of it; the search backs up to depth 2, with b's bit, though a comes
    first by id (each depth from 5 on fails too, but backing up there would leave the
    depths 2-4, which fail as well, to be tried one at a time). Once the read of (q) is
    placed, only the read of (p) is lost: back to depth 5."""
    lost_a = (10, ("p",), ((20, "a"),), 1, (None,), 0)
    lost_b = (11, ("q",), ((21, "b"),), 2, (None,), 0)
    restoring = {"a": [lost_a], "b": [lost_b]}
    none = state(ids=())
    b = state(("b", frozenset({("z",)}), 1))
    both = state(("a", frozenset({("z",)}), 1), ("b", frozenset({("z",)}), 1))
    stack = [(0, (s,), [], 0, 0) for s in (none, none, b, b, b, both, both)]
    assert _stranded(restoring, stack, (both,), 0) == (2, 2)
    assert _stranded(restoring, stack, (both,), 1 << 11) == (5, 1)
    assert _stranded(restoring, stack, (both,), 1 << 10 | 1 << 11) is None


T1, T2, T3, T5 = "user\x1fw1:1", "assistant\x1fw0:2", "assistant\x1fw1:3", "user\x1fw0:5"
#: (a history the brute-force tests draw: ``_tiny(4934, True)``) 1, 2, 3, 5 appended in
#: turn, a snapshot of unknown outcome that may have made snap4 while they were, an
#: append no read shows, two rollbacks to snap4, and at the end a read of (1, 2): only a
#: rollback to snap4 explains it, and only if snap4 was taken on (1, 2)
BACKED_UP = [
    op(0, "append", 0, 3, T1, ()),
    op(1, "append", 2, 6, T2, (T1,)),
    op(2, "append", 4, 11, T3, (T1, T2)),
    op(3, "append", 13, 19, T5, (T1, T2, T3)),
    op(4, "append", 21, 25, "\x00ghost"),
    op(5, "read", 12, 14, None, (T1, T2, T3)),
    op(6, "read", 19, 19, None, (T1, T2, T3, T5)),
    op(7, "read", 30, 31, None, (T1, T2)),
    op(8, "snapshot?", 8, INF, ("snap4",)),
    op(9, "rollback", 27, 27, "snap4"),
    op(10, "rollback", 23, 28, "snap4"),
    op(11, "list", 15, 17, None, frozenset({"snap4"})),
    op(12, "list", 32, 34, None, frozenset({"snap4"})),
]
#: (``_tiny(802, False)``, scrambled) a read of (2, 3) where no 3 was ever appended: no
#: linearization
NO_WAY = [
    op(0, "append", 7, 10, "assistant\x1fw2:2", ()),
    op(1, "read", 1, 5, None, ()),
    op(2, "read", 6, 6, None, ()),
    op(3, "read", 16, 17, None, ("assistant\x1fw2:2", "user\x1fw0:3")),
    op(4, "snapshot?", 3, INF, ("snap1",)),
    op(5, "rollback?", 14, INF, "snap1"),
    op(6, "list", 18, 20, None, frozenset({"snap1"})),
]


@pytest.mark.parametrize(("ops", "ok", "steps"), [(BACKED_UP, True, 56), (NO_WAY, False, 18)])
@pytest.mark.parametrize("early", [False, True])
def test_the_search_backs_up_at_once_past_the_depths_that_cannot_explain_a_read(
        monkeypatch: pytest.MonkeyPatch, ops: list[ModelOp], ok: bool, steps: int, early: bool) -> None:
    """Looking ahead from the start, the search cuts off a configuration for a read no
    rollback can explain any more, finds that the configuration before it could not
    either, and backs up past more than one depth at once: the verdict is the brute-force
    oracle's (the proof replays through the eager model), in the steps it took when this
    was written (18 for the refutation trying early ops first too)."""
    jumps: list[tuple[int, int]] = []

    def dead_from(stack: Any, entry: Any) -> int:
        to = _dead_from(stack, entry)
        jumps.append((len(stack), to))
        return to

    monkeypatch.setattr(frontier, "_dead_from", dead_from)
    out = search(ops, time.monotonic() + 10, early=early, ahead=0)
    assert (out.ok, out.explored) == (ok, steps)
    assert any(to < depth for depth, to in jumps)
    if ok:
        assert replays(certify([ops[k] for k in out.order], out.path))


@pytest.mark.parametrize(("ops", "ok", "steps", "back"), [(BACKED_UP, True, 61, 4), (NO_WAY, False, 21, 0)])
@pytest.mark.parametrize("early", [False, True])
def test_the_path_built_before_looking_ahead_is_looked_at_once(
        monkeypatch: pytest.MonkeyPatch, ops: list[ModelOp], ok: bool, steps: int, back: int,
        early: bool) -> None:
    """With the look-ahead turned on at the first backup (``ahead`` near 0), the path the
    search built without it already holds a read no rollback can explain any more: found
    then, over every read (``_stranded``), and the search backs up at once to the first
    depth that could not explain it (``back`` depths or more), as it does for a read cut
    off where it looks at each step; the verdict is the brute-force oracle's, in the steps
    it took when this was written (without the look at every read: 62, and 21-22)."""
    found: list[Any] = []
    jumps: list[tuple[int, int]] = []
    real = frontier._stranded

    def stranded(*args: Any) -> Any:
        found.append(real(*args))
        return found[-1]

    def dead_from(stack: Any, entry: Any) -> int:
        to = _dead_from(stack, entry)
        jumps.append((len(stack), to))
        return to

    monkeypatch.setattr(frontier, "_stranded", stranded)
    monkeypatch.setattr(frontier, "_dead_from", dead_from)
    out = search(ops, time.monotonic() + 10, early=early, ahead=1e-9)
    assert (out.ok, out.explored) == (ok, steps)
    assert len(found) == 1 and found[0] is not None
    assert found[0] == (jumps[0][1], found[0][1])
    assert jumps[0][0] - jumps[0][1] >= back
    if ok:
        assert replays(certify([ops[k] for k in out.order], out.path))


def test_the_ops_that_may_set_what_a_snapshot_takes() -> None:
    """Snapshot x (5-6): the append of b returned (1) before the append of c was invoked
    (2), which returned (3) before x was invoked: hidden by it. The append of c, the
    rollback to y running across x (4-9) and the append of d invoked as x returns (6) may
    each be the last op before the point x takes; the append of e, invoked after x
    returned (7), ends x's window first. A snapshot of unknown outcome (snapshot?) names
    no id of its own: none for it, as for x's id where no rollback targets it (z)."""
    ops = [
        op(0, "append", 0, 1, "b", ()),
        op(1, "append", 2, 3, "c", ()),
        op(2, "rollback", 4, 9, "y"),
        op(3, "snapshot", 5, 6, None, "x"),
        op(4, "append", 6, 8, "d", ()),
        op(5, "append", 7, 8, "e", ()),
        op(6, "rollback", 10, 11, "x"),
        op(7, "snapshot", 0, 1, None, "z"),
        op(8, "snapshot?", 0, INF, ("w",)),
    ]
    his, latest = [1, 3, 8, 8, 9, 11], [0, 2, 6, 7, 7, 10]  # as _restoring sorts them
    assert _takers(ops, [0, 1, 2, 4, 5, 6], his, latest) == {"x": ((1, None), (2, "y"), (4, None))}


def test_a_setter_invoked_as_another_returns_does_not_hide_it() -> None:
    """The append of b returns (2) at the very instant the append of c is invoked: c need
    not follow b (real-time order is strict), so b may still be the last op before x
    takes its content, and stays among x's takers."""
    ops = [
        op(0, "append", 0, 2, "b", ()),
        op(1, "append", 2, 3, "c", ()),
        op(2, "snapshot", 5, 6, None, "x"),
        op(3, "rollback", 7, 8, "x"),
    ]
    assert _takers(ops, [0, 1, 3], [2, 3, 8], [0, 2, 7]) == {"x": ((0, None), (1, None))}


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["append", "rollback", "rollback?", "snapshot", "read"]),
                          st.integers(0, 12), st.integers(0, 4), st.sampled_from("xy"),
                          st.booleans()), max_size=24))
def test_takers_are_the_setters_the_definition_names(raw: list[tuple[str, int, int, str, bool]]) -> None:
    """The sweep that finds each snapshot's takers gives what their definition says, op
    for op: the setters invoked by the snapshot's return and returning no earlier than
    the latest invocation among the acknowledged setters returned before it began (long
    ops, ops of unknown outcome and ties at the boundaries among them)."""
    ops = [op(n, kind, lo, INF if kind == "rollback?" or (unknown and kind == "append") else lo + d,
              sid if kind != "append" else f"t{n}", sid if kind == "snapshot" else None)
           for n, (kind, lo, d, sid, unknown) in enumerate(raw)]
    setters = [n for n, o in enumerate(ops) if o.kind in ("append", "rollback", "rollback?")]
    done = sorted((ops[n].hi, ops[n].lo) for n in setters if ops[n].hi != INF)
    his = [h for h, _ in done]
    latest = [max(x for _, x in done[:k + 1]) for k in range(len(done))]
    want: dict[str, tuple[tuple[int, Any], ...]] = {}
    twice = set()
    targeted = {o.arg for o in ops if o.kind.startswith("rollback")}
    for o in ops:
        if o.kind == "snapshot" and o.out in targeted:
            if o.out in want:
                twice.add(o.out)
            after = max([lo for hi, lo in done if hi < o.lo], default=-(1 << 62))
            want[o.out] = tuple((n, ops[n].arg if ops[n].kind != "append" else None) for n in setters
                                if ops[n].lo <= o.hi and ops[n].hi >= after)
    for sid in twice:
        del want[sid]
    assert _takers(ops, sorted(setters, key=lambda n: ops[n].lo), his, latest) == want


def test_a_snapshot_not_taken_or_open_may_take_a_list_only_by_its_takers() -> None:
    """The read of (a) only the rollback to x (op 3) explains, x not taken yet or its
    window open, (a) among no candidates: it may still be explained only if one of x's
    takers not placed yet may set (a): an append of a (op 0), or a rollback to a
    snapshot that holds (a) (y), is not taken yet or whose window is open (w); not by one
    placed, nor by a rollback to a snapshot whose content is decided otherwise."""
    back = ((3, "x"),)
    by_append, by_rollback = (((0, None),),), (((5, "y"),),)
    assert not _may_explain(state(ids=()), A, back, 0, ((),))  # nothing may set (a)
    assert _may_explain(state(ids=()), A, back, 0, (None,))  # not known: it may
    assert _may_explain(state(ids=()), A, back, 0, by_append)
    assert not _may_explain(state(ids=()), A, back, 1, by_append)  # that append is placed
    assert not _may_explain(state(ids=()), A, back, 1 << 2, (((2, None),),))  # so is op 2
    assert _may_explain(state(ids=()), A, back, 1 << 2, (((2, None), (4, None)),))  # not op 4
    open_x = state(("x", frozenset({AB}), 1), open_=(("x", 9),))
    assert _may_explain(open_x, A, back, 0, by_append)
    assert not _may_explain(open_x, A, back, 1, by_append)
    # x's window open, (a) already among its candidates: it may, whatever its takers
    assert _may_explain(state(("x", frozenset({AB, A}), 1), open_=(("x", 9),)), A, back, 1, by_append)
    assert _may_explain(state(("y", frozenset({A, AB}), 1), ids=("y",)), A, back, 0, by_rollback)
    assert not _may_explain(state(("y", AB, 1), ids=("y",)), A, back, 0, by_rollback)
    assert not _may_explain(state(("y", AB, 1), ids=("y",)), A, back, 1 << 5, by_rollback)
    assert _may_explain(state(ids=()), A, back, 0, by_rollback)  # y not taken yet
    assert _may_explain(state(("y", frozenset({AB}), 1), open_=(("y", 9),)), A, back, 0, by_rollback)


def test_a_read_s_bits_hold_the_snapshots_its_takers_restore() -> None:
    """A cut-off depends on the contents it looked at (:func:`frontier._covered` compares
    failed configurations by them): the read's bits hold x's and those of the snapshots
    that x's takers restore (y), and its takers only appends of its last turn."""
    ops = [
        op(0, "append", 0, 1, "a", ()),
        op(1, "rollback", 2, 9, "y"),
        op(2, "append", 3, 4, "b", A),
        op(3, "snapshot", 5, 6, None, "x"),
        op(4, "snapshot", 0, 1, None, "y"),
        op(5, "append", 10, 11, "c", AB),
        op(6, "rollback", 12, 14, "x"),
        op(7, "read", 13, 15, None, A),
    ]
    (entry,) = _restoring(ops, {"x": 1, "y": 2})["x"]
    assert entry == (7, A, ((6, "x"),), 3, (((1, "y"),),), 0b100111)  # the append of b sets (a, b)


def test_an_id_two_snapshots_returned_has_no_takers() -> None:
    """Two snapshots returned x (a broken store): which one a rollback restores is not
    known, so x gets no takers (it may take anything), as a snapshot of unknown outcome."""
    ops = [
        op(0, "append", 0, 1, "b", ()),
        op(1, "snapshot", 2, 3, None, "x"),
        op(2, "snapshot", 4, 5, None, "x"),
        op(3, "snapshot", 4, 5, None, "y"),
        op(4, "rollback", 6, 7, "x"),
        op(5, "rollback", 6, 7, "y"),
    ]
    assert _takers(ops, [0, 4, 5], [1, 7, 7], [0, 6, 6]) == {"y": ((0, None),)}


def test_turns_already_shown_explain_a_read_only_once_the_ops_before_it_are_placed() -> None:
    """The turns are the read's list already, but an append that returned before the read
    was invoked (op 9, ``forced``) is still to be placed: it comes between, so the turns
    explain the read only once it is placed, or through a rollback not placed yet (the
    last op to set them before the read): to a snapshot not taken yet, which may take
    these very turns, even where no op still to place may set them; not to one taken
    holding another list."""
    back = ((3, "x"),)
    forced = 1 << 9
    assert not _may_explain(state(turns=A, ids=()), A, back, 1 << 3, ((),), forced)
    assert _may_explain(state(turns=A, ids=()), A, back, 1 << 3 | forced, ((),), forced)
    assert _may_explain(state(turns=A, ids=()), A, back, 0, ((),), forced)
    assert not _may_explain(state(turns=AB, ids=()), A, back, 0, ((),), forced)
    assert not _may_explain(state(("x", AB, 1), turns=A), A, back, 0, ((),), forced)
    assert _may_explain(state(("x", frozenset({A}), 1), turns=A), A, back, 0, ((),), forced)


def test_a_rollback_that_must_be_the_last_before_one_read_is_dropped_from_others() -> None:
    """Read 4 can follow only rollback 2 (its list (a); the latest setter returned before
    it was invoked at 5; it returned at 8). Read 7, of another list, loses rollback 2 and
    keeps 9, which it then pins: read 11 (of (a)) loses 9 and keeps 10, which it pins in
    turn. Read 12 shows (a) and can come after every setter read 4 follows (it returned at
    9 >= 5), and they after its own (8 >= 6): rollback 2 may be the last before both, and
    stays; not 10, since read 11 follows setters invoked as late as 55. Read 13 shows (a)
    but returned (at 4) before the latest setter read 4 follows was invoked: it loses 2."""
    hi = [0] * 21
    outs: list[Any] = [None] * 21
    for n, h, o in ((4, 8, A), (7, 51, AB), (11, 60, A), (12, 9, A), (13, 4, A), (14, 5, A)):
        hi[n], outs[n] = h, o
    found = [
        (4, ((2, "x"),), 3, 5),
        (7, ((2, "x"), (9, "y")), 6, 30),
        (11, ((9, "y"), (10, "z")), 8, 55),
        (12, ((2, "x"), (10, "z")), 3, 6),
        (13, ((2, "x"), (20, "w")), 1, 2),
    ]
    assert frontier._pinned(found, hi, outs) == [
        (4, ((2, "x"),), 3, 5),
        (7, ((9, "y"),), 6, 30),
        (11, ((10, "z"),), 8, 55),
        (12, ((2, "x"),), 3, 6),
        (13, ((20, "w"),), 1, 2),
    ]
    # read 14 returned as the latest setter read 4 follows was invoked (5), and read 4 as
    # the latest read 14 follows was (8): instants that touch are concurrent, 2 stays
    touching = [(4, ((2, "x"),), 3, 5), (14, ((2, "x"), (20, "w")), 3, 8)]
    assert frontier._pinned(touching, hi, outs) == touching
    # with no read left to one rollback, nothing is dropped
    assert frontier._pinned(found[1:2], hi, outs) == found[1:2]


def test_a_read_that_another_pins_a_rollback_for_keeps_the_others() -> None:
    """The rollback to x (op 3, 6-30) is the only one the read of (a) at 7-9 and the append
    of c on (a) may follow; the read of (a, d) at 20-21, whose last turn no append may have
    set, could follow it too by real time, but not with a list of its own: it keeps the
    rollback to y (op 8) alone."""
    ops = [*SESSION[:3], op(3, "rollback", 6, 30, "x"), op(4, "read", 7, 9, None, A),
           op(5, "append", 10, 12, "c", A), op(6, "read", 20, 21, None, ("a", "d")),
           op(7, "append", 13, 14, "e", None), op(8, "rollback", 15, 25, "y")]
    got = _restoring(ops, BIT)
    assert [e[0] for e in got["x"]] == [4, 5]
    assert [(e[0], e[2]) for e in got["y"]] == [(6, ((8, "y"),))]
    # with neither showing a list only a rollback explains (the read shows b, which the
    # append of b may have set), the read of (a, d) may follow either
    alone = [*ops[:4], op(4, "read", 7, 9, None, AB), op(5, "append", 10, 12, "c", None), *ops[6:]]
    assert [(e[0], e[2]) for e in _restoring(alone, BIT)["y"]] == [(6, ((3, "x"), (8, "y")))]


def test_reads_that_pin_one_rollback_with_two_lists_leave_the_later_reads_looked_at() -> None:
    """The read of (a) at 7-9 and the read of (a, z) at 10-11 may each follow only the
    rollback to x (6-30): they cannot both, so neither keeps it (nothing explains them: the
    search finds that out on its own), and the read of (q) at 17-19, which may follow it
    or the rollback to y, keeps only the one to y, and is still looked at."""
    ops = [
        *SESSION[:3],  # a appended, snapshot x, b appended on (a)
        op(3, "rollback", 6, 30, "x"),
        op(4, "read", 7, 9, None, A),
        op(5, "read", 10, 11, None, ("a", "z")),
        op(6, "snapshot", 12, 13, None, "y"),
        op(7, "append", 14, 15, "c", None),
        op(8, "rollback", 16, 18, "y"),
        op(9, "read", 17, 19, None, ("q",)),
    ]
    got = _restoring(ops, BIT)
    assert list(got) == ["y"]
    assert [(e[0], e[2]) for e in got["y"]] == [(9, ((8, "y"),))]
