"""More of the checker's parts, written against the mutants that survived the rest of
tests/checker (2026-11-27). Of lazy.py: where ``certify`` looks for what a rollback
restored (the first rollback, a content found nowhere), the assertion of a rollback to a
snapshot that kept no content. Of linearize.py: the outcome past the bound of
configurations remembered, the steps of an observer undone (stop's message: in
test_linearize_parts.py). Same conventions and helpers as test_lazy_parts.py:
``ModelOp(id, kind, lo, hi, arg, out)``; a lazy state is (turns, ids, contents, open
windows)."""

from __future__ import annotations

import math

import pytest

from harness.checker import linearize as lin
from harness.checker.exact import replays
from harness.checker.lazy import certify, make_step
from harness.checker.linearize import advance, begin
from tests.checker.test_lazy_parts import AB, A, E, ids, op, run

B = ("b",)


def test_certify_takes_what_a_rollback_restored_not_the_turns_at_a_failed_rollback_to_the_id() -> None:
    """A rollback to s1 fails (not found) before s1 is made; s1 is made over the append of
    b and a rollback restores (b): s1 moves after b. The failed rollback restored nothing:
    the turns after it, (), are not what s1 held."""
    ops = [op(0, "rollback-missing", 0, 1, "s1"), op(1, "snapshot", 2, 20, None, "s1"),
           op(2, "append", 3, 4, "b"), op(3, "rollback", 30, 31, "s1"), op(4, "read", 32, 33, None, B)]
    path = run(ops, [0, 1, 2, 3], {3: 1})
    assert [p[0] for p in path] == [E, E, E, B, B]
    got = certify(ops[:4], path)
    assert [o.id for o in got] == [0, 2, 1, 3]
    assert replays([*got, ops[4]])
    assert not replays(ops)


def test_certify_takes_the_turns_the_first_rollback_to_a_snapshot_restored() -> None:
    """A path (not one the lazy model gives: two rollbacks to one snapshot restore the same
    turns) whose first rollback to s1 restores (a), the second (a, b): s1 moves to (a)."""
    ops = [op(0, "snapshot", 0, 20, None, "s1"), op(1, "append", 1, 2, "a"), op(2, "append", 3, 4, "b"),
           op(3, "rollback", 30, 31, "s1"), op(4, "rollback", 32, 33, "s1")]
    path = [(t, ids("s1"), (), ()) for t in (E, E, A, AB, A, AB)]
    assert [o.id for o in certify(ops, path)] == [1, 0, 2, 3, 4]


def test_certify_leaves_a_snapshot_whose_content_is_not_found_before_the_end() -> None:
    """A path (not one the lazy model gives) where the turns restored from s1 never recur
    after s1 is placed: s1 stays, and the search past the end stops at the end."""
    roll, b = op(0, "rollback", 0, 1, "s1"), op(1, "append", 2, 3, "b")
    snap = op(2, "snapshot", 4, 20, None, "s1")
    path = [(E, ids(), (), ()), (A, ids(), (), ()), (AB, ids(), (), ()), (AB, ids(), (), ())]
    assert certify([roll, b, snap], path) == [roll, b, snap]


def test_a_rollback_to_a_snapshot_that_kept_no_content_says_so() -> None:
    """A state the step never builds (s1 placed, a rollback to it left, its content not
    kept): the rollback does not guess a content, it fails an assertion that names why."""
    step = make_step([op(9, "rollback", 30, 31, "s1")])
    with pytest.raises(AssertionError, match=r"^a snapshot with a rollback left keeps its content$"):
        step((A, ids("s1"), (), ()), op(1, "rollback", 2, 3, "s1"))


# --- the walk (harness.checker.linearize) --------------------------------------------------

# seven concurrent appends, then a read none of them makes: thousands of steps to refute
MANY = [*(op(n, "append", 0, 10, f"t{n}") for n in range(7)), op(7, "read", 11, 12, None, ("x",))]


def test_past_the_configurations_remembered_the_outcome_names_the_deepest_state(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Stopped by the bound of configurations remembered, the undecided outcome names the
    state of the deepest failure so far: the seven appends placed, in some order."""
    monkeypatch.setattr(lin, "MAX_CACHED", 100)
    out = advance(begin(MANY), math.inf, 1 << 62)
    assert out is not None and out.ok is None and out.depth == 7
    assert out.state is not None and sorted(out.state[0]) == [f"t{n}" for n in range(7)]
    assert out.state[1] == ()
