"""The decisions without search on literal sessions, part by part: the chain of the reads
(harness.checker.chain: which ops a linearization holds, which pair and witness a
refutation names) and the proof on raw pairs (harness.checker.plain: what it proposes for
several turns and several listings, what it counts, what it does not read).

Ops are ``ModelOp(id, kind, lo, hi, arg, out)`` (harness.checker.model); histories are
built with tests.checker.builder.H (each event 10 ns after the one before)."""

from __future__ import annotations

import time
from typing import Any

from harness.checker import check
from harness.checker.chain import Backward, Chain, decide, decide_turns, reads_max
from harness.checker.exact import complete, replays
from harness.checker.model import GHOST, ModelOp
from harness.checker.ops import INF, SessionOps, group_by_session
from harness.checker.plain import _complete, prove
from tests.checker.builder import H


def op(n: int, kind: str, lo: int, hi: int, arg: Any = None, out: Any = None) -> ModelOp:
    return ModelOp(n, kind, lo, hi, arg, out)


def _one(h: H) -> SessionOps:
    (so,) = group_by_session(h.events)[0].values()
    return so


def test_an_acknowledged_append_no_read_shows_is_placed_after_every_read() -> None:
    """A turn no read shows, acknowledged, goes in the last block with the ghosts (after
    the reads, since none shows it); one of unknown outcome is left out. The order is a
    linearization that holds every op that completed."""
    ops = [
        op(0, "append", 0, 1, "a"),
        op(1, "read", 2, 3, None, ("a",)),
        op(2, "append", 0, 5, "c"),  # acknowledged, shown by no read, not a ghost
        op(3, "append", 0, 6, GHOST),
        op(4, "append", 0, INF, "d"),  # unknown outcome, shown by no read: never took effect
    ]
    order = decide_turns(ops)
    assert isinstance(order, tuple)
    assert [o.id for o in order] == [0, 1, 2, 3]
    assert replays(order) and complete(order, ops)


# a: 0-1 and b: 2-3, yet the reads show b before a; a read of (b) from 1 to 5 and two of
# (b, a) at 6-7 and 8-9. The chain's blocks: b, the read of (b), a, the reads of (b, a).
BACKWARD_APPENDS = [
    op(0, "append", 0, 1, "a"),
    op(1, "append", 2, 3, "b"),
    op(2, "read", 1, 5, None, ("b",)),
    op(3, "read", 6, 7, None, ("b", "a")),
    op(4, "read", 8, 9, None, ("b", "a")),
]


def test_two_appends_in_the_wrong_order_are_named_with_the_first_longest_read() -> None:
    """a (a later block) completed before b (an earlier one) was invoked: the refutation
    names them, and as witness the read showing the most turns, the first of them (by id,
    though a shorter read comes first)."""
    got = decide_turns(BACKWARD_APPENDS)
    assert got == Backward(BACKWARD_APPENDS[0], BACKWARD_APPENDS[1], BACKWARD_APPENDS[3])
    reads = [o for o in BACKWARD_APPENDS if o.kind == "read"]
    assert reads_max(reads) is BACKWARD_APPENDS[3]
    assert reads_max(list(reversed(reads))) is BACKWARD_APPENDS[3]
    assert reads_max([]) is None


def test_a_refutation_that_is_not_two_appends_names_no_witness() -> None:
    """a completed before the read of () was invoked, yet the read of (a) puts that read
    before a: an append and a read, so no read witnesses their order."""
    ops = [
        op(0, "append", 0, 1, "a"),
        op(1, "read", 2, 3, None, ("a",)),
        op(2, "read", 4, 5, None, ()),
    ]
    assert decide_turns(ops) == Backward(ops[0], ops[2], None)


def test_the_snapshot_ids_are_decided_apart_by_their_own_search_within_the_deadline() -> None:
    """With no rollback, the ids are a separate object: a listing of the id made gives a
    chain with both orders; ten concurrent snapshots and a listing of an id none made have
    no linearization ("ids", after more than 1,024 steps of the search), or None when the
    deadline has passed (the search checks it every 1,024 steps)."""
    ops = [
        op(0, "snapshot-id", 0, 1, None, "x"),
        op(1, "list", 2, 3, None, frozenset({"x"})),
        op(2, "append", 0, 1, "a"),
        op(3, "read", 2, 3, None, ("a",)),
    ]
    assert decide(ops, time.monotonic() + 10) == Chain((ops[2], ops[3]), (ops[0], ops[1]))
    ten = [op(k, "snapshot-id", 0, 100, None, f"x{k}") for k in range(10)]
    bad = [*ten, op(10, "list", 0, 100, None, frozenset({"zz"}))]
    assert decide(bad, time.monotonic() + 10) == "ids"
    assert decide(bad, time.monotonic() - 1) is None


def test_the_completeness_count_needs_both_the_writes_and_the_observers() -> None:
    """``_complete`` counts apart from the proposal: an order missing the read, or the
    append, is not complete, whichever count still matches."""
    h = H()
    h.append(0, "s", "a")
    h.read(1, "s", ["a"])
    so = _one(h)
    (a_inv, a_ok), (r_inv, r_ok) = so.appends[0], so.reads[0]
    assert a_ok is not None and r_ok is not None
    append = (1, a_ok.time, a_inv.time, 0, False, a_ok.value)
    read = (2, r_ok.time, r_inv.time, 1, True, r_ok.value)
    assert _complete([append, read], so.appends, so.reads)
    assert not _complete([append], so.appends, so.reads)
    assert not _complete([read], so.appends, so.reads)


def test_several_turns_each_read_concurrent_with_the_next_append_are_proven() -> None:
    """After an append that failed: reads of (), a read that never returned, reads of (a)
    and (a, b), each of the first two still running when the next append is acknowledged.
    The reads' blocks come before that append, and every op after the failed append and
    the read that never returned is placed."""
    h = H()
    h.inv(3, "append", "s", "f")
    h.fail(3)  # took no effect
    h.inv(1, "read", "s")
    h.append(0, "s", "a")
    h.ok(1, [])  # completed after a was acknowledged, without it
    h.inv(2, "read", "s")
    h.info(2)  # never returned: it need not have taken effect
    h.inv(1, "read", "s")
    h.append(0, "s", "b")
    h.ok(1, ["a"])
    h.read(1, "s", ["a", "b"])
    assert prove(_one(h))
    assert check(h.events).valid


def test_listings_of_two_sizes_with_concurrent_snapshots_are_proven() -> None:
    """After a failed snapshot, one of unknown outcome and a listing that never returned:
    x; then a listing of (x, y) invoked before one of (x), y completing between them, and
    z, which no listing shows, completing before the listing of (x, y). The order: x, the
    listing of (x), y, the listing of (x, y), z; each id just before the smallest listing
    that shows it, whatever order the listings were invoked in."""
    h = H()
    h.inv(9, "snapshot", "s")
    h.fail(9)
    h.inv(8, "snapshot", "s")
    h.info(8)
    h.inv(7, "list_snapshots", "s")
    h.info(7)
    h.snapshot(0, "s", "x")
    h.inv(2, "list_snapshots", "s")  # (x, y), invoked first
    h.inv(1, "list_snapshots", "s")  # (x)
    h.inv(3, "snapshot", "s")  # y
    h.inv(4, "snapshot", "s")  # z
    h.ok(4, "z")
    h.ok(2, ["x", "y"])
    h.ok(3, "y")  # after the listing that shows it
    h.ok(1, ["x"])  # after y, without it
    assert prove(_one(h))
    assert check(h.events).valid


def test_a_listing_that_is_not_a_list_of_ids_is_not_proven_here() -> None:
    """A listing whose value is a string (its characters are ids made), missing or a
    mapping is unreadable: not proven here, reported by the other rules."""
    values: list[Any] = ["ab", None, {"a": 1}]
    for value in values:
        h = H()
        h.snapshot(0, "s", "a")
        h.snapshot(0, "s", "b")
        h.inv(1, "list_snapshots", "s")
        h.ok(1, value)
        assert not prove(_one(h))
        assert check(h.events).counts() == {"unreadable": 1}


def test_a_snapshot_id_that_is_not_a_string_is_not_proven_here() -> None:
    """A snapshot that returned a list, a mapping or nothing is not proven here (nor
    looked up: a list is unhashable); the other rules take it as of unknown outcome."""
    for value in (["x"], {"x": 1}, None):
        h = H()
        h.inv(0, "snapshot", "s")
        h.ok(0, value)
        h.snapshot(0, "s", "y")
        h.list(1, "s", ["y"])
        assert not prove(_one(h))
        assert check(h.events).valid


def test_ids_that_have_no_linearization_refute_the_session_whatever_rollback_is_pending() -> None:
    """A listing of an id no snapshot made: the ids alone have no linearization ("ids").
    An unknown-outcome rollback among the ops changes nothing: no rollback adds or removes
    an id, so it cannot explain the listing (the chain refutes at once, without a search
    of the whole session), while a failure of the turns it might explain is left to the
    search (None)."""
    ops = [
        ModelOp(0, "append", 0, 1, "a"),
        ModelOp(1, "read", 2, 3, None, ("a",)),
        ModelOp(2, "list", 4, 5, None, frozenset({"zz"})),
    ]
    maybe = ModelOp(3, "rollback?", 6, INF, "zz")
    assert decide(ops, time.monotonic() + 10) == "ids"
    assert decide([*ops, maybe], time.monotonic() + 10) == "ids"
    assert _searched([*ops, maybe]) is False
    lost = [ModelOp(0, "append", 0, 1, "a"), ModelOp(1, "read", 2, 3, None, ()), maybe]
    assert decide(lost, time.monotonic() + 10) is None  # (a rollback to zz might have undone a)


def _searched(ops: list[ModelOp]) -> bool | None:
    """The frontier search's verdict on ``ops``: the whole session, searched."""
    from harness.checker.frontier import search

    return search(ops, time.monotonic() + 10).ok
