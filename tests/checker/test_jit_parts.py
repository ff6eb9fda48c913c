"""The just-in-time search (harness.checker.jit) on literal sessions: what its two passes
keep, the proof's path, and where it says it stopped.

Ops are ``ModelOp(id, kind, lo, hi, arg, out)`` (harness.checker.model); a lazy state is
(turns, ids, contents, open windows), contents (snapshot id, content, rollbacks left)."""

from __future__ import annotations

import time
from typing import Any

import pytest

from harness.checker.exact import replays
from harness.checker.jit import _returns, search_jit
from harness.checker.lazy import LAZY_INIT, certify, make_step, rank
from harness.checker.linearize import Outcome, linearize
from harness.checker.model import GHOST, ModelOp
from harness.checker.ops import INF


def op(n: int, kind: str, lo: int, hi: int, arg: Any = None, out: Any = None) -> ModelOp:
    return ModelOp(n, kind, lo, hi, arg, out)


def proven(ops: list[ModelOp]) -> Outcome:
    """The search's outcome on ``ops``, checked to be a proof that replays, along a path
    that is a run of the lazy model (each state one the op before it leads to)."""
    out = search_jit(ops, time.monotonic() + 10)
    assert out.ok is True and out.explored > 0
    assert sorted(out.order) == sorted(set(out.order))  # each op placed once
    assert all(n in out.order for n, o in enumerate(ops) if o.hi != INF)  # every op that returned
    step = make_step(ops)
    assert len(out.path) == len(out.order) + 1 and out.path[0] == LAZY_INIT
    for n, before, after in zip(out.order, out.path, out.path[1:], strict=False):
        assert after in step(before, ops[n])
    assert replays(certify([ops[n] for n in out.order], out.path))
    return out


# a: 0-1; snapshot s1 over the append of b (2-10: its content (a) or (a, b)); a rollback
# to s1 of unknown outcome (invoked at 11, never returned); a read of (a, b) at 12-13.
# At the end s1 still has a rollback left, so its candidates are in the last states:
# (a) and (a, b) where s1 was placed before b, (a, b) where after, joined into one.
OPEN_AT_THE_END = [
    op(0, "append", 0, 1, "a"),
    op(1, "snapshot", 2, 10, None, "s1"),
    op(2, "append", 3, 4, "b"),
    op(3, "rollback?", 11, INF, "s1"),
    op(4, "read", 12, 13, None, ("a", "b")),
]


def test_a_snapshot_still_restorable_at_the_end_keeps_its_candidates_needed() -> None:
    """The last layer's needs are each live state's candidate contents (``st[2]``): a real
    state at the end whose candidates are fewer than the joined state's is covered, and
    the session is proven (with no needs there the walk cut it, or failed on it)."""
    out = proven(OPEN_AT_THE_END)
    assert out.path[-1][0] == ("a", "b")
    assert out.path[-1][2] and out.path[-1][2][0][0] == "s1"  # s1 still restorable at the end


def test_the_path_ends_with_the_state_after_the_last_op() -> None:
    """The path is the state before each op, then the last state (not the last op's
    index): certify reads the state after a rollback from it."""
    ops = [op(0, "append", 0, 1, "a"), op(1, "snapshot", 2, 3, None, "s1"),
           op(2, "append", 4, 5, "b"), op(3, "rollback", 6, 7, "s1")]
    out = proven(ops)
    assert out.order == (0, 1, 2, 3)
    assert out.path[-1] == (("a",), frozenset({"s1"}), (), ())
    assert certify([ops[n] for n in out.order], out.path) == ops


def test_stopped_at_any_step_the_search_is_undecided_and_says_how_far_it_got() -> None:
    """Given fewer steps than it needs (in either pass: the walk starts over at the first
    return), the search is undecided and names the op returning at the furthest return
    the pass running reached; given enough, it proves the session."""
    ops = OPEN_AT_THE_END
    rets = _returns(ops)
    full = proven(ops)
    depths = []
    for max_steps in range(full.explored):
        out = search_jit(ops, time.monotonic() + 10, max_steps)
        assert out.ok is None and out.order == () and out.state is None
        assert out.explored > max_steps  # it stops at the first closure past its steps
        assert 0 <= out.depth < len(rets) and out.stuck is ops[rets[out.depth][0]]
        depths.append(out.depth)
    assert search_jit(ops, time.monotonic() + 10, full.explored).ok is True
    # pass 1 goes through every return, then the walk does again from the first
    assert depths[0] == 0 and max(depths) == len(rets) - 1
    restart = depths.index(0, depths.index(len(rets) - 1))
    assert sorted(depths[restart:]) == depths[restart:] and depths[-1] == len(rets) - 1


def test_a_refutation_by_the_sweep_names_the_op_the_state_and_how_far() -> None:
    """a (0-10) runs across b (2-3); a read of (a) at 4-5. After b's return the
    configurations hold (b) or (a, b), and no way past the read exists: the outcome names
    the read, the state with the shortest turns, the one return before it, and the model
    steps taken (a; b; a after b; b after a)."""
    ops = [op(0, "append", 0, 10, "a"), op(1, "append", 2, 3, "b"),
           op(2, "read", 4, 5, None, ("a",))]
    out = search_jit(ops, time.monotonic() + 10)
    named: Any = out.state  # a lazy state (Outcome.state is typed as the eager model's)
    assert named == (("b",), frozenset(), (), ())
    assert (out.ok, out.depth, out.explored, out.order) == (False, 1, 4, ())
    assert out.stuck is ops[2]


def test_the_state_a_refutation_names_is_the_shortest_then_the_least() -> None:
    """``lazy.rank``: the shortest turns, then the least turns, then the least of the rest;
    never just the first of the set. Through the search: a and b run together, no read of (c)
    can follow, and of (a, b) and (b, a) the outcome names (a, b)."""
    def st(turns: tuple[str, ...], *ids: str) -> Any:
        return (turns, frozenset(ids), (), ())

    assert min([st(("b",)), st(("a",))], key=rank) == st(("a",))
    assert min([st(("a", "b")), st(("b",))], key=rank) == st(("b",))
    assert min([st(("a",), "s1"), st(("a",))], key=rank) == st(("a",))
    ops = [op(0, "append", 0, 3, "a"), op(1, "append", 0, 3, "b"),
           op(2, "read", 4, 5, None, ("c",))]
    out = search_jit(ops, time.monotonic() + 10)
    assert out.ok is False and out.stuck is ops[2] and out.state == st(("a", "b"))


def test_a_refutation_by_the_walk_names_no_op() -> None:
    """s2 (4-5) holds () or (a); a ghost append and a rollback to s2 (13-15) come before
    s5 (15-17); a second rollback to s2 (19-24) must restore (a) for the read at 25, and
    the read of () at 32-34 needs s5 to hold (), so s2 held () as well: no linearization
    (the eager search agrees). Pass 1 joins s2's two contents and lets a state through;
    the walk, with one content per state, refutes it, and names no op, no state, no depth."""
    ops = [op(0, "append", 2, 7, "a", ()), op(1, "append", 12, 16, GHOST),
           op(2, "read", 25, 25, None, ("a",)), op(3, "read", 32, 34, None, ()),
           op(4, "snapshot", 4, 5, None, "s2"), op(5, "snapshot", 15, 17, None, "s5"),
           op(6, "rollback", 13, 15, "s2"), op(7, "rollback", 19, 24, "s2"),
           op(8, "rollback?", 30, INF, "s5")]
    assert linearize(ops, time.monotonic() + 10).ok is False
    out = search_jit(ops, time.monotonic() + 10)
    assert (out.ok, out.stuck, out.state, out.depth, out.order) == (False, None, None, 0, ())
    assert out.explored > 0


def test_an_op_is_pending_only_from_its_invocation() -> None:
    """``_returns``: at each return, the op returning and the ops invoked by then that have
    not returned (an invocation at the instant of a return comes first; an op of unknown
    outcome stays pending to the end). Op 0 is invoked after op 1 returned: it is not
    pending then, so the read of (a) at 0-1 cannot have seen the append of a at 5-6."""
    ops = [op(0, "append", 5, 6, "a"), op(1, "read", 0, 1, None, ("a",))]
    assert _returns(ops) == [(1, 0b10), (0, 0b01)]
    assert search_jit(ops, time.monotonic() + 10).ok is False
    ops = [op(0, "append", 0, 2, "a"), op(1, "read", 2, 3, None, ("a",)),
           op(2, "snapshot?", 1, INF, ("s1",)), op(3, "append", 3, 4, "b")]
    assert _returns(ops) == [(0, 0b111), (1, 0b1110), (3, 0b1100)]  # b invoked as the read returns


def test_the_ways_to_a_state_two_states_lead_to_are_all_kept() -> None:
    """s holds () (0-1); a and b run together (2-3), so two states, (a, b) and (b, a),
    reach the rollback to s (4-10) that the read of () (5-6) must follow: the rollback
    takes both to one state, before the read returns. That state carries the ways from
    both (``_closure`` with ``gather``): dropping them leaves the walk no live state to go
    through, and it refuted this session."""
    ops = [op(0, "snapshot", 0, 1, None, "s"), op(1, "append", 2, 3, "a"),
           op(2, "append", 2, 3, "b"), op(3, "rollback", 4, 10, "s"),
           op(4, "read", 5, 6, None, ())]
    out = proven(ops)
    assert out.order[-2:] == (3, 4) and out.path[-1][0] == ()


def test_the_state_a_refutation_names_does_not_hang_on_string_hashing() -> None:
    """The ids and candidate contents are sets, whose order (and ``repr``) depends on the
    process's string hashing: ``rank`` compares them sorted, so that the state a
    refutation names, and the sentence made of it, are the same on every run. Here the
    state named holds ids {s1, s3}, {s1, s2} or {s1}, by PYTHONHASHSEED, when ranked by
    ``repr``; under eight seeds, one answer."""
    import os
    import subprocess
    import sys

    code = (
        "import time\n"
        "from harness.checker.jit import search_jit\n"
        "from harness.checker.frontier import search\n"
        "from harness.checker.model import ModelOp\n"
        "from harness.checker.ops import INF\n"
        "ops = [ModelOp(0, 'snapshot-id', 0, 1, None, 's1'),\n"
        "       ModelOp(1, 'snapshot?', 2, INF, ('s2', 's3')),\n"
        "       ModelOp(2, 'append', 3, 4, 'a'), ModelOp(3, 'read', 5, 6, None, ('c',))]\n"
        "for f in (search_jit, search):\n"
        "    out = f(ops, time.monotonic() + 10)\n"
        "    assert out.ok is False\n"
        "    print(sorted(out.state[1]), out.state[0])\n")
    got = set()
    for seed in range(8):
        env = {**os.environ, "PYTHONHASHSEED": str(seed)}
        run = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                             text=True, check=True)
        got.add(run.stdout)
    assert len(got) == 1, got
    assert got.pop().splitlines() == ["['s1'] ('a',)", "['s1', 's2'] ('a',)"]


def test_a_state_reached_twice_in_a_closure_keeps_the_first_way_and_its_steps() -> None:
    """Two reads of () (0-10) run across the append of a (0-5): at a's return the walk's
    closure reaches (a) with both reads placed two ways, read 1 then read 0 (the first
    found: the closure takes the last op it extended first) and read 0 then read 1. The
    state keeps the first way, so the proof places read 1, read 0, then a, in 16 model
    steps (18 with a read of (a) after). Keeping the last way, or not finding the first,
    gives (0, 1, 2) in 18 steps: a linearization too, so this pins the order the search
    returns and its work, not its verdict."""
    ops = [op(0, "read", 0, 10, None, ()), op(1, "read", 0, 10, None, ()), op(2, "append", 0, 5, "a")]
    out = proven(ops)
    assert (out.order, out.explored) == ((1, 0, 2), 16)
    out = proven([*ops, op(3, "read", 11, 12, None, ("a",))])
    assert (out.order, out.explored) == ((1, 0, 2, 3), 18)


def test_an_op_placed_before_its_return_is_dropped_from_the_key_there() -> None:
    """Snapshot x (3-5) and snapshot y (5-6) run together: at x's return, some
    configurations placed y already (y then x); at y's return those keep every op placed
    but y (its return changes nothing), and the sweep and the walk go on from them: a
    proof in 10 model steps. Keyed otherwise (only y's bit kept), a configuration is met
    as new and stepped again (11). This pins the search's work, not its verdict."""
    ops = [op(0, "snapshot", 3, 5, None, "x"), op(1, "snapshot", 5, 6, None, "y"),
           op(2, "list", 22, 22, None, frozenset({"x", "y"}))]
    out = proven(ops)
    assert (out.order, out.explored) == ((0, 1, 2), 10)


def test_the_configurations_met_in_a_closure_are_kept_apart_by_ops_placed() -> None:
    """x made (2-2), the appends of a (17-18) and b (18-19), a snapshot of unknown outcome
    that may have made y (19-), a listing of x and y (23-25), a read of (a, b) (21-27):
    proven, y made before the listing, in 27 model steps. The states a closure meets on
    the way are kept by the ops placed: kept in one heap, a state met under other ops
    placed is taken for one seen already and not stepped on (25 steps; a linearization
    could be lost so). This pins the search's work here, not its verdict."""
    ops = [op(0, "append", 17, 18, "a", ()), op(1, "append", 18, 19, "b", ("a",)),
           op(2, "read", 21, 27, None, ("a", "b")), op(3, "snapshot", 2, 2, None, "x"),
           op(4, "snapshot?", 19, INF, ("y",)), op(5, "list", 23, 25, None, frozenset({"x", "y"}))]
    out = proven(ops)
    assert (out.order, out.explored) == ((3, 0, 1, 4, 5, 2), 27)


def test_a_state_reached_again_in_a_closure_is_stepped_on_with_the_new_ways_only() -> None:
    """x made (0-1), a ghost append (3-7) across a rollback to x (5-6), a rollback of
    unknown outcome to x (7-) and two reads of () (26-28, 28-30): proven, in 32 model
    steps. In pass 1 a state reached again carries the ways it was not reached by yet,
    and is stepped on with those only (33 when the ways it carried already are added
    again). This pins the search's work, not its verdict."""
    ops = [op(0, "append", 3, 7, GHOST), op(1, "read", 26, 28, None, ()),
           op(2, "read", 28, 30, None, ()), op(3, "snapshot", 0, 1, None, "x"),
           op(4, "rollback", 5, 6, "x"), op(5, "rollback?", 7, INF, "x")]
    out = proven(ops)
    assert (out.order, out.explored) == ((3, 4, 0, 5, 1, 2), 32)


def test_a_live_joined_state_covers_a_real_one_within_it_that_holds_a_needed_content() -> None:
    """``_covered``: a real configuration is let through when a live joined state of the
    same key and shape holds it (a fixed content equal, candidates within the joined
    ones) and each of its candidate sets still holds a content some way to the end needs;
    else not (no live state of that key, a fixed content that differs, a candidate more,
    candidates none of which is needed)."""
    from harness.checker.jit import _covered, _shape

    a, b, c = ("a",), ("b",), ("c",)

    def st(x: Any, y: Any) -> Any:
        return ((), frozenset({"x", "y"}), (("x", x, 1), ("y", y, 1)), ())

    joined = st(frozenset({a, b}), c)
    index: Any = {(3, _shape(joined)): [(joined, {"x": frozenset({a})})]}
    assert _covered(index, 3, joined)
    assert _covered(index, 3, st(frozenset({a}), c))  # fewer candidates, a needed one
    assert not _covered(index, 3, st(frozenset({b}), c))  # none of them needed
    assert not _covered(index, 3, st(frozenset({a, c}), c))  # a candidate more
    assert not _covered(index, 3, st(frozenset({c}), c))  # not within, none needed
    assert not _covered(index, 3, st(frozenset({a}), b))  # y's fixed content differs
    assert not _covered(index, 1, st(frozenset({a}), c))  # no live state with these ops
    assert not _covered({}, 3, joined)


def test_past_max_alive_states_after_a_return_the_search_is_undecided(monkeypatch: pytest.MonkeyPatch) -> None:
    """OPEN_AT_THE_END keeps at most two joined states alive after a return (after b's,
    s1 placed before or after b): with MAX_ALIVE 2 (not more than it may keep) it is
    proven, in 17 model steps; with 1 it is undecided at b's return, the second (depth 1,
    4 model steps taken). This pins where the search stops, not a verdict."""
    import harness.checker.jit as jit

    monkeypatch.setattr(jit, "MAX_ALIVE", 2)
    out = proven(OPEN_AT_THE_END)
    assert out.explored == 17
    monkeypatch.setattr(jit, "MAX_ALIVE", 1)
    out = search_jit(OPEN_AT_THE_END, time.monotonic() + 10)
    assert (out.ok, out.explored, out.depth, out.stuck, out.state) == (None, 4, 1, OPEN_AT_THE_END[2], None)


def test_two_states_of_one_shape_are_joined() -> None:
    """s2 (2-4) runs across a ghost append (1-7), so after the append's return s2 holds ()
    or the dirty turns: two states of one shape, joined into one (``_join`` of exactly two
    states), and the rollback (19-20) then restores either: proven in 12 model steps (13
    with the two kept apart). This pins the search's work, not its verdict."""
    ops = [op(0, "append", 1, 7, GHOST), op(1, "snapshot", 2, 4, None, "s2"), op(2, "rollback", 19, 20, "s2")]
    out = proven(ops)
    assert (out.order, out.explored) == ((1, 0, 2), 12)


#: Small sessions where the marks of pass 2 (``_live``: which states are live, which
#: contents a way to the end restores, ``_tag``: the rollbacks on each way, ``_shape``)
#: decide which way the walk goes first and how many steps it takes; each was found where
#: a mistake in them took another way or more steps (or failed), then shrunk by hand.
#: (ops, the proof's order, the model steps)
MARKED: dict[str, tuple[list[ModelOp], tuple[int, ...], int]] = {
    "two-rollbacks-at-one-instant": ([
        op(0, "read", 18, 18, None, ()), op(1, "snapshot", 3, 5, None, "x"),
        op(2, "snapshot", 5, 6, None, "y"), op(3, "rollback", 18, 19, "x"),
        op(4, "rollback?", 18, INF, "y")], (1, 2, 0, 3), 32),
    "rollback-across-a-snapshot": ([
        op(0, "read", 4, 5, None, ()), op(1, "snapshot", 3, 5, None, "x"),
        op(2, "snapshot", 5, 6, None, "y"), op(3, "rollback", 5, 8, "x")], (0, 1, 2, 3), 42),
    "read-over-an-id": ([op(0, "read", 22, 23, None, ()), op(1, "snapshot-id", 22, 22, None, "y")], (1, 0), 8),
    "snapshot-as-the-append-returns": ([
        op(0, "append", 2, 5, "a", ()), op(1, "snapshot", 5, 6, None, "x"),
        op(2, "rollback", 7, 10, "x")], (0, 1, 2), 11),
    "snapshot-across-a-read": ([
        op(0, "append", 2, 5, "a", ()), op(1, "append", 9, 12, "b", ("a",)),
        op(2, "read", 12, 16, None, ("a", "b")), op(3, "snapshot", 12, 14, None, "x"),
        op(4, "rollback", 18, 24, "x")], (0, 1, 3, 2, 4), 19),
    "unknown-snapshot-and-rollback": ([
        op(0, "append", 9, 14, "a", ()), op(1, "snapshot-id", 27, 29, None, "y"),
        op(2, "snapshot?", 1, INF, ("x",)), op(3, "rollback?", 25, INF, "x"),
        op(4, "list", 36, 37, None, frozenset({"y"}))], (0, 1, 4), 27),
    "listing-then-unknown-rollback": ([
        op(0, "append", 6, 8, "a", ()), op(1, "read", 25, 26, None, ()),
        op(2, "snapshot", 7, 11, None, "x"), op(3, "rollback?", 24, INF, "x"),
        op(4, "list", 23, 24, None, frozenset({"x"}))], (2, 0, 4, 3, 1), 25),
    "ghost-across-two-snapshots": ([
        op(0, "append", 25, 29, GHOST), op(1, "snapshot?", 10, INF, ("x",)),
        op(2, "snapshot", 24, 30, None, "z"), op(3, "rollback", 27, 32, "x"),
        op(4, "rollback?", 32, INF, "z"), op(5, "list", 13, 17, None, frozenset({"x"}))],
        (1, 5, 0, 2, 3), 35),
    # the walk: a state it did not cover is not entered, one visited is not entered again
    "ghost-as-the-read-returns": ([
        op(0, "append", 7, 9, "b", ()), op(1, "append", 13, 13, GHOST),
        op(2, "read", 11, 13, None, ("b",)), op(3, "snapshot", 2, 2, None, "x"),
        op(4, "rollback", 11, 16, "x")], (3, 0, 2, 1, 4), 21),
    "missing-rollback-before-a-snapshot": ([
        op(0, "append", 0, 2, GHOST), op(1, "append", 15, 20, "b", ()),
        op(2, "snapshot", 2, 3, None, "y"), op(3, "rollback-missing", 1, 2, "q"),
        op(4, "rollback", 17, 18, "y")], (3, 2, 0, 4, 1), 31),
}


@pytest.mark.parametrize("name", sorted(MARKED))
def test_the_marks_of_pass_2_lead_the_walk_this_way(name: str) -> None:
    """Each session is proven (a proof that replays), along this order, in these model
    steps. This pins the search's work and the order it returns, not only its verdict
    (a mark that forgets a needed content, or keeps one not needed, still proves them,
    another way or in more steps)."""
    ops, order, explored = MARKED[name]
    out = proven(ops)
    assert (out.order, out.explored) == (order, explored)
