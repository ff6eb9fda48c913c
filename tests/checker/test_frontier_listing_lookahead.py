"""The frontier search's look-ahead at a listing (harness.checker.frontier.begin), pinned
where mutation testing found nothing that looked at it.

A listing ends every open snapshot window, including that of a snapshot still running
when the listing began (its return is no earlier than the listing's invocation, so the
window is not closed by real time). ``_unexplained`` must count such a window as closed
at the listing (its ``listing`` argument): the look-ahead then sees at once that the read
only a rollback to that snapshot can explain has lost its way, and the search names the
listing as the op it could not place. Without it the verdict is the same, but the search
places the listing, goes on to the rollback and names that, two ops deeper, in more steps.
"""

from __future__ import annotations

import pytest

from tests.checker.test_frontier_more import decide, eager, op

#: a snapshot s1 that runs across a listing that shows it (so s1 is placed before the
#: listing, and the listing closes its window), then an append of b invoked after the
#: listing returned, a rollback to s1, and a read of a+b: only the rollback can have set
#: those turns, and s1 could only have taken a+b had its window still been open after b
LISTING_CLOSES_A_RUNNING_SNAPSHOTS_WINDOW = [
    op(0, "append", 0, 1, "a", ()),
    op(1, "snapshot", 2, 10, None, "s1"),
    op(2, "list", 3, 4, None, frozenset({"s1"})),
    op(3, "append", 5, 6, "b", ("a",)),
    op(4, "rollback", 11, 12, "s1"),
    op(5, "read", 13, 14, None, ("a", "b")),
]


@pytest.mark.parametrize("early", [False, True])
def test_the_look_ahead_refutes_at_a_listing_that_closes_a_running_snapshots_window(early: bool) -> None:
    ops = LISTING_CLOSES_A_RUNNING_SNAPSHOTS_WINDOW
    assert eager(ops) is False
    out = decide(ops, early, ahead=0)
    assert out.ok is False
    # the deepest dead end is before the listing: a and s1 placed, the listing not placeable
    assert (out.stuck, out.depth, out.explored) == (ops[2], 2, 7)
    # not looking ahead, the search places everything but the read before it fails
    plain = decide(ops, early)
    assert (plain.ok, plain.stuck, plain.depth) == (False, ops[5], 5)
