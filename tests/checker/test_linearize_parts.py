"""The Wing-Gong walk (harness.checker.linearize) on literal sessions, and the protocol of a
resumable search (resume, advance, stop, drive) on literal generators: what the walk's list
holds, which failure a refutation names, where a stopped run says it got to.

Ops are ``ModelOp(id, kind, lo, hi, arg, out)`` (harness.checker.model); an eager state is
(turns, snapshots)."""

from __future__ import annotations

import contextlib
import inspect
import math
import time
from collections.abc import Generator
from typing import Any

import pytest

from harness.checker import linearize as lin
from harness.checker.lazy import LAZY_INIT, certify, make_step
from harness.checker.linearize import (
    Budget,
    Outcome,
    _Search,
    advance,
    begin,
    drive,
    linearize,
    resume,
    stop,
)
from harness.checker.model import INIT, ModelOp
from harness.checker.ops import INF

FAR = math.inf  # a deadline never reached


def op(n: int, kind: str, lo: int, hi: int, arg: Any = None, out: Any = None) -> ModelOp:
    return ModelOp(n, kind, lo, hi, arg, out)


def steps(values: list[int], out: Outcome) -> Generator[int, None, Outcome]:
    """A run that yields ``values`` and then decides ``out``."""
    yield from values
    return out


# --- the protocol ------------------------------------------------------------------------

def test_resume_says_why_it_stopped() -> None:
    """Decided: (outcome, False); steps past ``until`` (strictly): (None, True); deadline
    passed: (None, False), after one step; the run can be resumed where it was."""
    done = Outcome(True, explored=7)
    assert resume(steps([1, 2, 3], done), FAR, 10) == (done, False)
    run = steps([5, 10, 15], done)
    assert resume(run, FAR, 10) == (None, True)  # 5 and 10 are not past 10, 15 is
    assert resume(run, FAR, 10) == (done, False)
    run = steps([5, 10, 15], done)
    assert resume(run, -FAR, 100) == (None, False)
    assert inspect.getgeneratorstate(run) == inspect.GEN_SUSPENDED
    assert resume(run, FAR, 100) == (done, False)
    assert resume(steps([], done), -FAR, 0) == (done, False)


def test_advance_is_resume_without_the_reason() -> None:
    done = Outcome(False, depth=2)
    run = steps([4, 8], done)
    assert advance(run, FAR, 4) is None
    assert advance(run, FAR, 4) is done
    assert advance(steps([1], done), -FAR, 10) is None


def test_stop_a_run_never_resumed_closes_it_and_says_nothing() -> None:
    run = steps([1], Outcome(True))
    assert stop(run) == Outcome(None)
    assert inspect.getgeneratorstate(run) == inspect.GEN_CLOSED


def test_stop_throws_budget_into_the_run_and_returns_its_outcome() -> None:
    caught: list[BaseException] = []

    def run_() -> Generator[int, None, Outcome]:
        try:
            yield 1
        except Budget as b:
            caught.append(b)
            return Outcome(None, depth=3, explored=1)
        return Outcome(True)

    run = run_()
    assert next(run) == 1
    assert stop(run) == Outcome(None, depth=3, explored=1)
    assert len(caught) == 1 and type(caught[0]) is Budget


def test_stop_a_run_that_goes_on_is_an_error() -> None:
    def stubborn() -> Generator[int, None, Outcome]:
        while True:
            with contextlib.suppress(Budget):
                yield 1

    run = stubborn()
    next(run)
    with pytest.raises(AssertionError, match=r"^a search went on when told to stop$"):
        stop(run)


def test_drive_gives_the_outcome_or_stops_the_run() -> None:
    done = Outcome(True, explored=2)
    assert drive(steps([1, 2], done), FAR, 10) is done
    log: list[str] = []

    def run_() -> Generator[int, None, Outcome]:
        try:
            yield 5
            yield 20
        except Budget:
            log.append("stopped")
            return Outcome(None, explored=20)
        return done

    assert drive(run_(), FAR, 10) == Outcome(None, explored=20)
    assert log == ["stopped"]


# --- the list ----------------------------------------------------------------------------

def test_the_list_holds_calls_and_returns_by_time_calls_first_at_equal_times() -> None:
    """Op 0 returns at 5, when op 1 is invoked: op 1's call comes first. An op with no
    return has only its call. Lifting an op and putting it back restores the list."""
    ops = [op(0, "append", 0, 5, "a"), op(1, "read", 5, 9, None, ("a",)),
           op(2, "append", 6, INF, "b")]
    s = _Search(ops)
    # entries: call 0 (0), call 1 (5), return 0 (5), call 2 (6), return 1 (9)
    assert s.end == 6
    assert s.is_ret == [False, False, False, True, False, True, False]
    assert s.op_of[1:6] == [0, 1, 0, 2, 1]
    assert s.call == [1, 2, 4] and s.ret == [3, 5, 0]
    assert s.remaining == 2
    nxt, prv = list(s.nxt), list(s.prv)
    assert nxt[:6] == [1, 2, 3, 4, 5, 6] and prv[1:7] == [0, 1, 2, 3, 4, 5]
    # the whole layout, sentinels too: the head (0) and the end (6) link to themselves
    # outward, and name op 0 (the walk never follows or reads them: this pins the list's
    # shape, not a verdict)
    assert nxt == [1, 2, 3, 4, 5, 6, 6] and prv == [0, 0, 1, 2, 3, 4, 5]
    assert s.op_of == [0, 0, 1, 0, 2, 1, 0] and s.ops is ops

    def walk() -> list[int]:
        out, e = [], s.nxt[0]
        while e != s.end:
            out.append(e)
            e = s.nxt[e]
        return out

    def back() -> list[int]:
        out, e = [], s.prv[s.end]
        while e != 0:
            out.append(e)
            e = s.prv[e]
        return out

    s.lift(0)
    assert walk() == [2, 4, 5] and back() == [5, 4, 2] and s.remaining == 1
    s.lift(2)  # no return: only its call goes, and the count of returns stays
    assert walk() == [2, 5] and back() == [5, 2] and s.remaining == 1
    s.lift(1)
    assert walk() == [] and back() == [] and s.remaining == 0
    s.unlift(1)
    s.unlift(2)
    s.unlift(0)
    assert s.nxt == nxt and s.prv == prv and s.remaining == 2


# --- the walk ----------------------------------------------------------------------------

def test_a_proof_gives_the_order_placed() -> None:
    """An op invoked before another returned may go after it; an op with no return is
    placed only if something needs it."""
    ops = [op(0, "read", 0, 10, None, ("a",)), op(1, "append", 1, 2, "a"),
           op(2, "append", 3, INF, "b")]
    out = linearize(ops, time.monotonic() + 10)
    assert out.ok is True and out.order == (1, 0) and out.path == ()
    assert out.explored > 0 and out.stuck is None and out.state is None and out.depth == 0
    ops.append(op(3, "read", 11, 12, None, ("a", "b")))
    out = linearize(ops, time.monotonic() + 10)
    assert out.ok is True and out.order == (1, 0, 2, 3)


def test_a_read_that_cannot_be_placed_yet_waits_for_the_ops_before_its_return() -> None:
    """A read (an observer) whose result the state does not give is not placed, and the
    walk goes on to the next entry: the append invoked after it, and before it returned,
    makes its result true. (Going straight to its return refutes this session.)"""
    ops = [op(0, "read", 0, 10, None, ("a",)), op(1, "append", 1, 2, "a")]
    assert linearize(ops, time.monotonic() + 10).ok is True
    ops = [op(0, "list", 0, 10, None, frozenset({"s"})), op(1, "snapshot", 1, 2, None, "s")]
    assert linearize(ops, time.monotonic() + 10).ok is True


def test_a_refutation_names_the_op_the_state_and_the_depth_of_the_deepest_attempt() -> None:
    """append a, then read (): the read fails after the append is placed (depth 1, state
    (a)); four steps: call append, call read, return read, return append."""
    ops = [op(0, "append", 0, 1, "a"), op(1, "read", 2, 3, None, ())]
    out = linearize(ops, time.monotonic() + 10)
    assert out == Outcome(False, ops[1], (("a",), ()), 1, 4)
    ops = [op(0, "read", 0, 1, None, ("x",))]
    assert linearize(ops, time.monotonic() + 10) == Outcome(False, ops[0], INIT, 0, 2)


def test_among_failures_equally_deep_the_last_is_named() -> None:
    """a and b concurrent, then read (c): the read fails after (a, b) and after (b, a),
    both at depth 2; the refutation names the state of the last, (b, a)."""
    ops = [op(0, "append", 0, 10, "a"), op(1, "append", 0, 10, "b"),
           op(2, "read", 11, 12, None, ("c",))]
    out = linearize(ops, time.monotonic() + 10)
    assert out.ok is False and out.stuck == ops[2] and out.depth == 2
    assert out.state == (("b", "a"), ())


def test_the_lazy_walk_refutes_nothing_and_proves_with_a_path() -> None:
    ops = [op(0, "append", 0, 1, "a"), op(1, "read", 2, 3, None, ())]
    out = linearize(ops, time.monotonic() + 10, lazy=True)
    assert out.ok is None and out.stuck == ops[1] and out.depth == 1 and out.explored == 4
    assert out.state is not None and out.state[0] == ("a",)
    ops = [op(0, "append", 0, 1, "a"), op(1, "snapshot", 2, 3, None, "s1"),
           op(2, "append", 4, 5, "b"), op(3, "rollback", 6, 7, "s1"),
           op(4, "read", 8, 9, None, ("a",))]
    out = linearize(ops, time.monotonic() + 10, lazy=True)
    assert out.ok is True and out.order == (0, 1, 2, 3, 4)
    assert len(out.path) == 6 and out.path[0] == LAZY_INIT and out.path[-1][0] == ("a",)
    step = make_step(ops)
    for n, before, after in zip(out.order, out.path, out.path[1:], strict=False):
        assert after in step(before, ops[n])
    assert certify([ops[n] for n in out.order], out.path) == ops
    eager = linearize(ops, time.monotonic() + 10)
    assert eager.ok is True and eager.order == out.order and eager.path == ()


# seven concurrent appends, then a read none of them makes: thousands of steps to refute
MANY = [*(op(n, "append", 0, 10, f"t{n}") for n in range(7)), op(7, "read", 11, 12, None, ("x",))]


def test_a_run_yields_every_1024_steps_and_stopped_says_how_far_it_got() -> None:
    full = linearize(MANY, time.monotonic() + 60)
    assert full.ok is False and full.stuck == MANY[7] and full.depth == 7
    assert full.explored > 3 * 1024
    run = begin(MANY)
    assert [next(run), next(run), next(run)] == [1024, 2048, 3072]
    out = stop(run)
    assert out.ok is None and out.explored == 3072
    assert out.stuck == MANY[7] and out.depth == 7 and out.state is not None
    assert len(out.state[0]) == 7 and out.order == () and out.path == ()
    # max_steps 2048: the steps yielded are 1024 and 2048 (not past it), then 3072
    assert linearize(MANY, time.monotonic() + 60, max_steps=2048) == out
    assert linearize(MANY, time.monotonic() + 60, max_steps=2047).explored == 2048


def test_past_the_configurations_remembered_the_outcome_is_unknown(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(lin, "MAX_CACHED", 100)
    run = begin(MANY)
    out = advance(run, FAR, 1 << 62)
    assert out is not None and out.ok is None and out.explored == 1024
    assert out.stuck == MANY[7] and out.depth == 7


def test_an_op_of_several_outcomes_is_tried_with_each_in_turn() -> None:
    """snapshot? may have made s1, s2 or s3 (tried in that order); only s3 lets the
    rollback return: the walk backtracks to the snapshot twice, takes its third outcome,
    and proves the session; with no s3 among them, it refutes it."""
    ops = [op(0, "append", 0, 1, "a"), op(1, "snapshot?", 2, INF, ("s1", "s2", "s3")),
           op(2, "append", 3, 4, "b"), op(3, "rollback", 5, 6, "s3"),
           op(4, "read", 7, 8, None, ("a",)), op(5, "append", 9, 10, "c"),
           op(6, "read", 11, 12, None, ("a", "c"))]
    out = linearize(ops, time.monotonic() + 10)
    assert out.ok is True and out.order == (0, 1, 2, 3, 4, 5, 6)
    lazy = linearize(ops, time.monotonic() + 10, lazy=True)
    assert lazy.ok is True and lazy.order == out.order
    no_s3 = [*ops[:1], op(1, "snapshot?", 2, INF, ("s1", "s2", "s4")), *ops[2:]]
    out = linearize(no_s3, time.monotonic() + 10)
    assert out.ok is False and out.stuck == no_s3[3]
    to_s2 = [*ops[:3], op(3, "rollback", 5, 6, "s2"), *ops[4:]]  # the second outcome
    assert linearize(to_s2, time.monotonic() + 10).ok is True


def test_what_is_explored_is_remembered_with_the_ops_placed() -> None:
    """The read of (a) after append a reaches the state the append reached, (a), but with
    one more op placed: a configuration not explored yet (keyed without the read's own
    bit it would look explored, and the session be refuted)."""
    ops = [op(0, "append", 0, 1, "a"), op(1, "read", 2, 3, None, ("a",)),
           op(2, "read", 4, 5, None, ("a",))]
    out = linearize(ops, time.monotonic() + 10)
    assert out.ok is True and out.order == (0, 1, 2) and out.explored == 3


def test_an_observer_already_explored_where_it_is_sends_the_walk_back() -> None:
    """The list (an observer) is met again in a configuration explored by another order
    of the snapshot and the append: the walk goes on from its return, backtracks, and
    refutes the session (nothing ever appends y). Leaving the walk there would prove it."""
    ops = [op(0, "read", 1, 7, None, ("y",)), op(1, "list", 5, 8, None, frozenset({"s"})),
           op(2, "snapshot", 3, 4, None, "s"), op(3, "read", 2, 6, None, ("x",)),
           op(4, "append", 1, 7, "x")]
    out = linearize(ops, time.monotonic() + 10)
    assert out.ok is False and out.stuck == ops[0]


def test_configurations_are_told_apart_by_every_op_placed() -> None:
    """Four valid sessions (shrunk from random ones) where an op of several outcomes is
    placed, undone and placed again: a memo key that lost an op placed would take a
    configuration not yet explored for one explored, and refute them."""
    first = [op(0, "rollback", 4, 8, "s"), op(1, "snapshot?", 4, INF, ("s", "t")),
             op(2, "read", 0, 1, None, ()), op(3, "list", 4, 6, None, frozenset())]
    second = [op(0, "append", 2, 7, "y"), op(1, "rollback", 5, 7, "t"),
              op(2, "append", 4, 9, "x"), op(3, "snapshot?", 0, INF, ("s", "t")),
              op(4, "list", 5, 11, None, frozenset())]
    third = [op(0, "append", 6, 8, "x"), op(1, "rollback", 0, 5, "t"),
             op(2, "snapshot?", 3, INF, ("s", "t"))]
    fourth = [op(0, "read", 3, 4, None, ()), op(1, "snapshot?", 0, INF, ("s", "t")),
              op(2, "rollback", 6, 9, "t"), op(3, "append", 1, 7, "x")]
    for ops in (first, second, third, fourth):
        out = linearize(ops, time.monotonic() + 10)
        assert out.ok is True
        assert all(n in out.order for n, o in enumerate(ops) if o.hi != INF)


# --- the walk's work ---------------------------------------------------------------------

@pytest.mark.parametrize(("most", "explored", "turns"), [
    (434, 1024, ("t0", "t2", "t3", "t5", "t4", "t1", "t6")),
    (435, 2048, ("t0", "t3", "t5", "t1", "t6", "t4", "t2")),
])
def test_the_walk_stops_only_once_it_remembers_more_than_max_cached(
        monkeypatch: pytest.MonkeyPatch, most: int, explored: int, turns: tuple[str, ...]) -> None:
    """The walk of MANY remembers 435 configurations by its 1,024th step: with at most
    434 it stops there, with 435 (not more than it may remember) it goes on to the next
    1,024 steps. Stopped, it names the deepest failure so far: the read, 7 ops placed, and
    the state there. (This pins the search's work, where it stops, not a verdict.)"""
    monkeypatch.setattr(lin, "MAX_CACHED", most)
    out = advance(begin(MANY), FAR, 1 << 62)
    assert out == Outcome(None, MANY[7], (turns, ()), 7, explored)


def test_an_observer_placed_with_no_alternative_is_backed_over_at_once() -> None:
    """The session of ``test_an_observer_already_explored_where_it_is_sends_the_walk_back``
    takes 31 steps to refute. An observer placed at once (``sure``) is not retried when the
    walk backs up over it, nor walked past: the walk goes on backing up in the same step
    (36 steps when each observer popped costs a step of its own; 45 when observers are
    tried like any op). This pins the search's work, not its verdict."""
    ops = [op(0, "read", 1, 7, None, ("y",)), op(1, "list", 5, 8, None, frozenset({"s"})),
           op(2, "snapshot", 3, 4, None, "s"), op(3, "read", 2, 6, None, ("x",)),
           op(4, "append", 1, 7, "x")]
    out = linearize(ops, FAR)
    assert (out.ok, out.explored, out.depth, out.stuck) == (False, 31, 4, ops[0])


def test_an_outcome_tried_again_is_remembered_with_its_op_placed() -> None:
    """A snapshot of unknown outcome (op 1: s1, then s2) concurrent with an append and a
    snapshot of s3, then a read of (c) nothing makes: the walk tries every order and both
    outcomes. The configurations reached by the second outcome are remembered with op 1
    placed, and met again by another order they are not explored again: 39 steps (31 on
    the lazy model); remembered without op 1's bit, or walked on with op 1 left out of the
    ops placed, they are (33 to 45). This pins the search's work, not its verdict."""
    ops = [op(0, "append", 0, 10, "a"), op(1, "snapshot?", 0, INF, ("s1", "s2")),
           op(2, "snapshot-id", 0, 10, None, "s3"), op(3, "read", 11, 12, None, ("c",))]
    eager = linearize(ops, FAR)
    assert (eager.ok, eager.explored, eager.depth, eager.stuck) == (False, 39, 3, ops[3])
    lazy = linearize(ops, FAR, lazy=True)
    assert (lazy.ok, lazy.explored, lazy.depth, lazy.stuck) == (None, 31, 3, ops[3])


def test_resume_stops_for_the_deadline_only_once_it_has_passed(monkeypatch: pytest.MonkeyPatch) -> None:
    """At the very instant of the deadline it has not passed: the run is resumed on to its
    outcome; an instant later it stops. (The clock is replaced, not the search.)"""
    from types import SimpleNamespace

    monkeypatch.setattr(lin, "time", SimpleNamespace(monotonic=lambda: 5.0))
    done = Outcome(True, explored=3)
    assert resume(steps([1, 2, 3], done), 5.0, 100) == (done, False)
    assert resume(steps([1, 2, 3], done), 4.999, 100) == (None, False)
