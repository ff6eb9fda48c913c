"""The frontier search's look-ahead reads (``_restoring``) and a proof's path
(``exact_path``) at edges the other tests leave out: a session with nothing that has to
be placed (the empty order: a path of the start alone), and a read whose last turn is
named like the snapshot id a rollback targets (the rollback is not that turn's append).

A lazy state is (turns, ids, contents, open windows)."""

from __future__ import annotations

from typing import Any

import pytest

from harness.checker.frontier import _restoring, exact_path
from harness.checker.lazy import LAZY_INIT, make_step
from harness.checker.model import ModelOp
from harness.checker.ops import INF
from tests.checker.test_frontier_more import op, proven

X = ("x",)


@pytest.mark.parametrize("early", [False, True])
@pytest.mark.parametrize("ops", [
    [],
    [op(0, "rollback?", 0, INF, "x")],
    [op(0, "snapshot?", 0, INF, ("s1",)), op(1, "rollback?", 1, INF, "s1")],
], ids=["no-ops", "an-unknown-rollback", "an-unknown-snapshot-and-rollback"])
def test_a_session_with_nothing_that_must_be_placed_is_proven_by_the_empty_order(
        ops: list[ModelOp], early: bool) -> None:
    """No op has to be placed (none at all, or only ops of unknown outcome, which never
    have to take effect): the search proves the session at its first step, by the empty
    order, and the proof's path is the start alone (there is no layer to walk back
    through, and none of several states)."""
    out = proven(ops, early)
    assert (out.order, out.path) == ((), (LAZY_INIT,))


def test_the_path_along_no_ops_is_the_one_state_given() -> None:
    """``exact_path`` of the empty order: the one set of states (the start) gives the path
    (the state before each op, then the last: here only the last)."""
    assert exact_path(make_step([]), [], [(LAZY_INIT,)]) == (LAZY_INIT,)
    other: Any = (X, frozenset(), (), ())
    assert exact_path(make_step([]), [], [(other,)]) == (other,)


def test_a_rollback_to_an_id_named_like_a_read_s_last_turn_is_not_that_turn_s_append() -> None:
    """x is appended (0-1), snapshot x taken (2-3), b appended on (x) (4-5), a rollback to
    x (6-8) while a read of (x) runs (7-9): the append of x returned before the append of
    b began, so only the rollback can have set the read's turns. That the rollback's
    target is named like the read's last turn does not make it the append of that turn
    (taken for one, the read was left out of the look-ahead)."""
    ops = [
        op(0, "append", 0, 1, "x", ()),
        op(1, "snapshot", 2, 3, None, "x"),
        op(2, "append", 4, 5, "b", X),
        op(3, "rollback", 6, 8, "x"),
        op(4, "read", 7, 9, None, X),
    ]
    got = _restoring(ops, {"x": 1})
    assert [(e[0], e[1], e[2]) for e in got["x"]] == [(4, X, ((3, "x"),))]
    assert set(got) == {"x"}
