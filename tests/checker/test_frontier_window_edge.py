"""The frontier search's look-ahead at the edge of a snapshot's window (harness.checker.frontier:
``_unexplained``): an op invoked the very instant a snapshot returned is concurrent with it
(ops that touch count as concurrent), so it does not end the snapshot's window
(:mod:`~harness.checker.lazy`), and the look-ahead does not look at the reads that snapshot
may explain when that op is placed: it looks when the window closes.

A lazy state is (turns, ids, contents, open windows); contents are (snapshot id, content,
rollbacks left), a content fixed (a tuple of turns) or a set of candidates (a frozenset)."""

from __future__ import annotations

import time

from harness.checker.frontier import _restoring, _unexplained, search
from harness.checker.linearize import linearize
from tests.checker.test_frontier_lookahead import AB, BIT, SESSION, op, state

A = ("a",)


def test_an_op_invoked_the_instant_a_snapshot_returned_does_not_end_its_window_for_the_look_ahead() -> None:
    """The read of (a) of SESSION (op 4) is explained only by the rollback to x, and x,
    taken at (a, b) with its window open (x returned at 9), can no longer take (a) once
    the append of a (op 0) is placed. An op invoked at 9 leaves the window open and
    changes nothing about x: no read is looked at (the window is looked at when it
    closes); one invoked at 10 ends it, and the read is cut off for x's bit."""
    restoring = _restoring(SESSION, BIT)
    open_x = state(("x", frozenset({AB}), 1), open_=(("x", 9),))
    closed = state(("x", frozenset({AB}), 1))
    placed_a = 1 << 0
    at_return = op(9, "append", 9, 11, "e")
    assert _unexplained(restoring, at_return, (open_x,), (open_x,), placed_a, False) is None
    after_return = op(9, "append", 10, 11, "e")
    entry = _unexplained(restoring, after_return, (open_x,), (closed,), placed_a, False)
    assert entry is not None and (entry[0], entry[3]) == (4, 1)


# a, then b appended; snapshot x, invoked after b returned, may take (a, b) only; an append
# of c on (a, b) invoked the instant x returned (its window still open); a rollback to x,
# then a read of (a): only x holding (a) would explain it, and it cannot
WINDOW_EDGE = [
    op(0, "append", 0, 1, "a", ()),
    op(1, "append", 3, 4, "b", A),
    op(2, "snapshot", 5, 10, None, "x"),
    op(3, "append", 10, 11, "c", AB),
    op(4, "rollback", 20, 22, "x"),
    op(5, "read", 23, 24, None, A),
]


def test_looking_ahead_a_refutation_names_the_op_that_ends_the_window_not_one_invoked_as_it_returned() -> None:
    """Looking ahead from the start, the search places a, b, x and the append of c (invoked
    the instant x returned: x's window is still open, nothing is looked at), and the
    rollback to x, which ends the window, is where the read of (a) is found unexplained:
    the refutation names the rollback, four ops placed, in either order of trying.
    Looking at the read when c is placed would name c, three placed."""
    assert linearize(WINDOW_EDGE, time.monotonic() + 10).ok is False
    for early in (False, True):
        out = search(WINDOW_EDGE, time.monotonic() + 10, early=early, ahead=0)
        assert out.ok is False and out.stuck is not None
        assert (WINDOW_EDGE.index(out.stuck), out.depth) == (4, 4)
        assert out.state is not None and out.state[0] == ("a", "b", "c")
