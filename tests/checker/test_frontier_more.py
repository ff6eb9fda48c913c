"""The frontier search (harness.checker.frontier) on small literal sessions: the observer
shortcut, the visited configurations met before the candidate that succeeds, the proof's
path, and the exact outcome (which op and state a refutation names, how deep, how many
steps) in both orders of trying.

Ops are ``ModelOp(id, kind, lo, hi, arg, out)`` (harness.checker.model); a lazy state is
(turns, ids, contents, open windows), contents (snapshot id, content, rollbacks left).
The sessions were found by comparing the search against its mutants (mutation testing)
on generated sessions, then shrunk by hand; each is checked against the eager search
(harness.checker.linearize), which shares none of the frontier search's reductions."""

from __future__ import annotations

import time
from typing import Any

import pytest

from harness.checker.exact import replays
from harness.checker.frontier import _fits, _id_order, search
from harness.checker.lazy import DIRTY, LAZY_INIT, certify, make_step
from harness.checker.linearize import Outcome, linearize
from harness.checker.model import GHOST, ModelOp
from harness.checker.ops import INF


def op(n: int, kind: str, lo: int, hi: int, arg: Any = None, out: Any = None) -> ModelOp:
    return ModelOp(n, kind, lo, hi, arg, out)


def decide(ops: list[ModelOp], early: bool = False, max_steps: int = 1 << 62,
           ahead: float | None = None, join_unseen: bool = True) -> Outcome:
    return search(ops, time.monotonic() + 10, max_steps, early=early, ahead=ahead,
                  join_unseen=join_unseen)


def proven(ops: list[ModelOp], early: bool = False, join_unseen: bool = True) -> Outcome:
    """The search's outcome on ``ops``, checked to be a proof: every op that returned placed
    once, along a path (the state before each op, then the last) of states each of which
    one of the states the op before it leads to is part of (``_fits``: the path goes
    through merged states, which stand for several runs), which ``certify`` turns into an
    order the eager model replays."""
    out = decide(ops, early, join_unseen=join_unseen)
    assert out.ok is True, out
    assert len(out.order) == len(set(out.order))
    assert all(n in out.order for n, o in enumerate(ops) if o.hi != INF)
    step = make_step(ops)
    assert len(out.path) == len(out.order) + 1 and out.path[0] == LAZY_INIT
    for n, before, after in zip(out.order, out.path, out.path[1:], strict=False):
        assert any(_fits(s, after, {}, {}) for s in step(before, ops[n]))
    assert replays(certify([ops[n] for n in out.order], out.path))
    assert (out.stuck, out.state, out.depth) == (None, None, 0)
    return out


def eager(ops: list[ModelOp]) -> bool | None:
    return linearize(ops, time.monotonic() + 10).ok


# a snapshot of unknown outcome that may have made id s0 (nothing refers to it), then
# snapshots s1 and s2 one after the other, then a listing of {s1, s2}: s0 must not be
# made before the listing. Trying earliest invocation first, the search places s0 first
# and fails at the listing; it backs up to {s1} and, from there, meets {s0, s1} again
# (given up already) before it tries s2, which succeeds
UNKNOWN_SNAPSHOT_THEN_LISTING = [
    op(0, "snapshot?", 0, INF, ("s0",)),
    op(1, "snapshot-id", 1, 2, None, "s1"),
    op(2, "snapshot-id", 3, 4, None, "s2"),
    op(3, "list", 5, 6, None, frozenset({"s1", "s2"})),
]


@pytest.mark.parametrize("early", [False, True])
def test_a_visited_configuration_does_not_end_the_candidates_tried(early: bool) -> None:
    """A candidate that leads to a configuration given up already is skipped (``continue``),
    and the next candidate is tried: giving up the whole configuration there (``break``)
    refuted this valid session. So did the shortcut that places an op with no alternative
    taken for any op while no window is open, not only for an observer every state
    allows (placing s0 first is then final)."""
    ops = UNKNOWN_SNAPSHOT_THEN_LISTING
    assert eager(ops) is True
    out = proven(ops, early)
    assert 0 not in out.order  # s0 was never made
    assert out.order == (1, 2, 3)


#: Small sessions, each found where a mutant of the search decided it otherwise, or named
#: another op or state, or took another number of steps (shrunk, tokens and ids renamed).
SESSIONS: dict[str, list[ModelOp]] = {
    "unknown-snapshot-then-listing": UNKNOWN_SNAPSHOT_THEN_LISTING,
    "rollback-then-read": [
        op(0, "append", 1, 3, "a", ()),
        op(1, "read", 6, 7, None, ("a",)),
        op(2, "snapshot", 0, 2, None, "s1"),
        op(3, "rollback", 4, 5, "s1"),
    ],
    "missing-rollback-then-read-of-more": [
        op(0, "append", 0, 1, "a", ()),
        op(1, "append", 2, 5, "b", ("a",)),
        op(2, "read", 6, 7, None, ("a", "b", "c")),
        op(3, "rollback-missing", 3, 4, "s1"),
    ],
    "ghost-between-two-rollbacks": [
        op(0, "append", 0, 2, "a", ()),
        op(1, "append", 6, 7, GHOST),
        op(2, "snapshot", 1, 3, None, "s1"),
        op(3, "rollback", 4, 5, "s1"),
        op(4, "rollback", 8, 9, "s1"),
    ],
    "listing-after-rollback": [
        op(0, "append", 0, 1, "a", ()),
        op(1, "append", 5, 5, "b", ("a",)),
        op(2, "snapshot", 2, 3, None, "s1"),
        op(3, "rollback", 4, 6, "s1"),
        op(4, "list", 7, 8, None, frozenset({"s1", "s2", "s3"})),
    ],
    "appends-at-one-instant": [op(0, "append", 1, 1, "a", ()), op(1, "append", 0, 1, "b", ("a",))],
    "listing-at-one-instant": [op(0, "list", 0, 0, None, frozenset())],
    "ghost-over-missing-rollback": [op(0, "append", 0, 3, GHOST), op(1, "rollback-missing", 1, 2, "s1")],
    "unknown-rollback-then-listing": [
        op(0, "snapshot-id", 0, 1, None, "s1"),
        op(1, "snapshot", 2, 3, None, "s2"),
        op(2, "rollback?", 3, INF, "s2"),
        op(3, "list", 4, 5, None, frozenset({"s1", "s2"})),
    ],
    "listing-over-append": [op(0, "append", 0, 2, "a", ()), op(1, "list", 1, 3, None, frozenset())],
    "ghost-snapshot-missing-rollback": [
        op(0, "append", 0, 4, GHOST),
        op(1, "snapshot", 1, 2, None, "s1"),
        op(2, "rollback-missing", 3, 5, "s2"),
        op(3, "rollback", 6, 7, "s1"),
    ],
    "snapshot-over-missing-rollback": [op(0, "snapshot", 0, 2, None, "s1"), op(1, "rollback-missing", 1, 2, "s2")],
    "missing-rollback-between-appends": [
        op(0, "append", 0, 1, "a", ()),
        op(1, "append", 2, 5, "b", ("a",)),
        op(2, "rollback-missing", 3, 4, "s1"),
    ],
    "one-append": [op(0, "append", 0, 1, "a", ())],
    "rollback-to-nothing": [op(0, "rollback", 0, 1, "s1")],
    "listing-of-nothing-made": [op(0, "list", 0, 1, None, frozenset({"s1", "s2"}))],
    "read-of-nothing-made": [op(0, "read", 0, 1, None, ("a", "b"))],
    "read-after-rollback-to-nothing": [op(0, "read", 2, 3, None, ()), op(1, "rollback", 0, 1, "s1")],
    "read-returning-with-append": [
        op(0, "append", 0, 1, "a", ()),
        op(1, "append", 2, 3, "b", ("a",)),
        op(2, "read", 3, 3, None, ("a", "b")),
    ],
    "ghost-missing-rollback-listing": [
        op(0, "append", 0, 2, GHOST),
        op(1, "rollback-missing", 1, 3, "s1"),
        op(2, "list", 4, 5, None, frozenset({"s2"})),
    ],
    "one-missing-rollback": [op(0, "rollback-missing", 0, 1, "s1")],
    "ghost-rollback-then-listing-of-more": [
        op(0, "append", 1, 2, GHOST),
        op(1, "snapshot", 0, 1, None, "s1"),
        op(2, "rollback", 2, 3, "s1"),
        op(3, "rollback-missing", 5, 7, "s2"),
        op(4, "list", 4, 6, None, frozenset({"s1", "s3"})),
    ],
    "two-rollbacks-then-read-of-nothing": [
        op(0, "append", 3, 6, GHOST),
        op(1, "append", 7, 9, "a", ()),
        op(2, "read", 11, 12, None, ()),
        op(3, "snapshot", 0, 1, None, "s1"),
        op(4, "snapshot", 1, 2, None, "s2"),
        op(5, "rollback", 4, 5, "s1"),
        op(6, "rollback", 8, 10, "s2"),
    ],
    "one-id-twice": [
        op(0, "append", 0, 2, GHOST),
        op(1, "snapshot", 0, 1, None, "s1"),
        op(2, "snapshot", 1, 3, None, "s1"),
        op(3, "rollback", 4, 5, "s1"),
    ],
    "two-reads-then-listing-of-more": [
        op(0, "append", 0, 1, "a", ()),
        op(1, "append", 2, 5, "b", ("a",)),
        op(2, "append", 3, 4, "c", ("a", "b")),
        op(3, "read", 6, 9, None, ("a", "b", "c")),
        op(4, "read", 8, 11, None, ("a", "b", "c")),
        op(5, "snapshot", 4, 7, None, "s1"),
        op(6, "rollback?", 10, INF, "s1"),
        op(7, "list", 12, 13, None, frozenset({"s1", "s2", "s3", "s4", "s5"})),
    ],
}

#: For each session, trying earliest completion first, then earliest invocation first
#: (None: the same): (ok, the index of the op a refutation names, the state it names, how
#: many ops were placed there, the steps, the order of a proof)
Expected = tuple[bool | None, int | None, Any, int, int, tuple[int, ...]]
EXPECTED: dict[str, tuple[Expected, Expected | None]] = {
    "unknown-snapshot-then-listing": ((True, None, None, 0, 7, (1, 2, 3)), (True, None, None, 0, 16, (1, 2, 3))),
    "rollback-then-read": ((True, None, None, 0, 10, (2, 0, 3, 1)), None),
    "missing-rollback-then-read-of-more": ((False, 2, (("a", "b"), frozenset(), (), ()), 3, 10, ()), None),
    "ghost-between-two-rollbacks": ((True, None, None, 0, 14, (2, 0, 3, 1, 4)), None),
    "listing-after-rollback": (
        (False, 4, (("a", "b"), frozenset({"s1"}), (), ()), 4, 19, ()),
        (False, 4, (("a",), frozenset({"s1"}), (), ()), 4, 19, ()),
    ),
    "appends-at-one-instant": ((True, None, None, 0, 5, (0, 1)), None),
    "listing-at-one-instant": ((True, None, None, 0, 3, (0,)), None),
    "ghost-over-missing-rollback": ((True, None, None, 0, 5, (1, 0)), None),
    # the listing tried in its place: before the rollback of unknown outcome, never placed
    "unknown-rollback-then-listing": ((True, None, None, 0, 7, (0, 1, 3)), None),
    "listing-over-append": ((True, None, None, 0, 5, (1, 0)), None),
    "ghost-snapshot-missing-rollback": ((True, None, None, 0, 9, (1, 2, 0, 3)), None),
    "snapshot-over-missing-rollback": ((True, None, None, 0, 5, (1, 0)), None),
    "missing-rollback-between-appends": ((True, None, None, 0, 7, (0, 2, 1)), None),
    "one-append": ((True, None, None, 0, 3, (0,)), None),
    "rollback-to-nothing": ((False, 0, ((), frozenset(), (), ()), 0, 1, ()), None),
    "listing-of-nothing-made": ((False, 0, ((), frozenset(), (), ()), 0, 1, ()), None),
    "read-of-nothing-made": ((False, 0, ((), frozenset(), (), ()), 0, 1, ()), None),
    "read-after-rollback-to-nothing": ((False, 1, ((), frozenset(), (), ()), 0, 1, ()), None),
    "read-returning-with-append": ((True, None, None, 0, 7, (0, 1, 2)), None),
    "ghost-missing-rollback-listing": ((False, 2, (DIRTY, frozenset(), (), ()), 2, 7, ()), None),
    "one-missing-rollback": ((True, None, None, 0, 3, (0,)), None),
    "ghost-rollback-then-listing-of-more": ((False, 4, ((), frozenset({"s1"}), (), ()), 4, 21, ()), None),
    # the ghost tried before the rollback that discards it (frontier._ghosts_first): 27
    # steps in the completion-first order when it was tried after it
    "two-rollbacks-then-read-of-nothing": ((True, None, None, 0, 15, (3, 4, 0, 5, 1, 6, 2)), None),
    "one-id-twice": (
        (False, 1, (DIRTY, frozenset({"s1"}), (("s1", frozenset({(), DIRTY}), 1),), (("s1", 3),)), 2, 16, ()),
        None,
    ),
    "two-reads-then-listing-of-more": ((False, 7, (("a",), frozenset({"s1"}), (), ()), 7, 41, ()), None),
}


@pytest.mark.parametrize("early", [False, True])
@pytest.mark.parametrize("name", sorted(SESSIONS))
def test_the_outcome_on_a_small_session_is_exactly_this(name: str, early: bool) -> None:
    """The verdict agrees with the eager search; a proof is a run of the lazy model that
    replays; a refutation names the op returning first among those the deepest dead end
    could not place, and the state there with the shortest turns (``lazy.rank``); and
    the steps are what they are (each configuration entered counts its states)."""
    ops = SESSIONS[name]
    completion_first, invocation_first = EXPECTED[name]
    want = invocation_first if early and invocation_first is not None else completion_first
    out = proven(ops, early) if want[0] else decide(ops, early)
    stuck = None if out.stuck is None else ops.index(out.stuck)
    assert (out.ok, stuck, out.state, out.depth, out.explored, out.order) == want
    assert eager(ops) is out.ok


def test_the_order_of_trying_is_earliest_completion_first_unless_asked() -> None:
    """``search`` and ``begin`` try earliest completion first by default: on this session
    that takes 7 steps, and earliest invocation first 16 (s0, invoked first, is tried
    first and fails at the listing)."""
    from harness.checker.frontier import begin
    from harness.checker.linearize import drive

    ops = UNKNOWN_SNAPSHOT_THEN_LISTING
    assert search(ops, time.monotonic() + 10).explored == 7
    assert drive(begin(ops), time.monotonic() + 10, 1 << 62).explored == 7
    assert drive(begin(ops, True), time.monotonic() + 10, 1 << 62).explored == 16


#: A snapshot of unknown outcome that made x or y (two states) and a listing that shows y
#: (one state again), then 300 appends one after the other: one op placed per step, no
#: dead end
SEQUENTIAL = [
    op(0, "snapshot?", 0, INF, ("x", "y")),
    op(1, "list", 1, 2, None, frozenset({"y"})),
    *(op(n, "append", 2 * n + 6, 2 * n + 7, f"t{n}") for n in range(2, 302)),
]


@pytest.mark.parametrize(
    ("max_steps", "ok", "explored"),
    [(1, None, 256), (255, None, 256), (256, None, 512), (511, None, 512), (512, True, 606)],
)
def test_the_search_yields_every_256_steps_and_stops_at_the_first_yield_past_its_steps(
    max_steps: int, ok: bool | None, explored: int
) -> None:
    """The search yields its step count once it reaches 256 steps, then 256 steps on;
    given fewer steps than it needs, it is stopped at the first yield past them and says
    how far it got (no dead end met: no op or state named), and given enough it proves
    the session, through its yields (the deadline and the budget are compared there).
    (The two states after the snapshot count two steps: the yields fall on 256 and 512
    exactly.)"""
    out = search(SEQUENTIAL, time.monotonic() + 10, max_steps)
    assert (out.ok, out.explored, out.stuck, out.state, out.depth) == (ok, explored, None, None, 0)
    assert len(out.order) == (302 if ok else 0)


@pytest.mark.parametrize(("most", "ok", "explored"), [(1, None, 4), (2, None, 6), (3, True, 7)])
def test_past_the_configurations_it_may_remember_the_search_is_undecided(
    monkeypatch: pytest.MonkeyPatch, most: int, ok: bool | None, explored: int
) -> None:
    """Each op placed enters a configuration; the search that would enter one more than
    MAX_CONFIGURATIONS is undecided. This session enters three."""
    import harness.checker.frontier as frontier

    monkeypatch.setattr(frontier, "MAX_CONFIGURATIONS", most)
    ops = [op(0, "append", 0, 1, "a", ()), op(1, "append", 2, 3, "b", ("a",)), op(2, "read", 4, 5, None, ("a", "b"))]
    out = decide(ops)
    assert (out.ok, out.explored, out.stuck, out.depth) == (ok, explored, None, 0)


def test_states_one_snapshot_s_candidates_apart_are_merged() -> None:
    """s1 (1-3) runs across the append of a, so a rollback to it (4-5) restores () or (a);
    after the ghost append (6-7) both give the same turns, and the two states, apart only
    in s1's candidates, are one (``lazy.merge``, also for a set of two), which the proof's
    path goes through; the second rollback to s1 (8-9) then restores one of them. (Neither
    () nor (a) is shown by any op: states apart only in such lists, looked for in larger
    sets, ``frontier._unseen_as_one``, are not looked for here, to see the merge alone.)"""
    ops = SESSIONS["ghost-between-two-rollbacks"]
    out = proven(ops, join_unseen=False)
    assert out.order == (2, 0, 3, 1, 4)
    assert out.path[4] == (DIRTY, frozenset({"s1"}), (("s1", frozenset({(), ("a",)}), 1),), ())


#: x (0-3) runs across the append of a (1-2), a rollback to x (4-5), then a read of (a):
#: placed before a, x has two candidate contents; of (b): no linearization
WINDOW = [
    op(0, "snapshot", 0, 3, None, "x"),
    op(1, "append", 1, 2, "a", ()),
    op(2, "rollback", 4, 5, "x"),
    op(3, "read", 6, 7, None, ("a",)),
]
WINDOW_BAD = [*WINDOW[:3], op(3, "read", 6, 7, None, ("b",))]
#: a snapshot of unknown outcome that made x or y (two states), then a listing of y; of z
TWO_IDS = [op(0, "snapshot?", 0, INF, ("x", "y")), op(1, "list", 1, 2, None, frozenset({"y"}))]
TWO_IDS_BAD = [TWO_IDS[0], op(1, "list", 1, 2, None, frozenset({"z"}))]


@pytest.mark.parametrize(
    ("ops", "most", "want"),
    [
        (TWO_IDS, 1, (None, 3, 0, 1, ())),  # the two states are too many: undecided
        (TWO_IDS, 2, (True, 6, 0, None, (0, 1))),  # two are not too many
        (TWO_IDS_BAD, 1, (None, 3, 0, 1, ())),
        (TWO_IDS_BAD, 2, (False, 5, 1, 1, ())),
        (WINDOW, 1, (True, 17, 0, None, (1, 0, 2, 3))),  # proven another way: a before x
        (WINDOW, 2, (True, 10, 0, None, (0, 1, 2, 3))),
        # skipped once, and then refuted only because the look-ahead (after one backup
        # that entered a configuration) finds at the start that nothing can show (b)
        (WINDOW_BAD, 1, (False, 9, 2, 2, ())),
        (WINDOW_BAD, 2, (False, 14, 3, 3, ())),
    ],
)
def test_a_configuration_of_more_than_max_states_is_not_explored_and_counts_its_states(
    monkeypatch: pytest.MonkeyPatch,
    ops: list[ModelOp],
    most: int,
    want: tuple[bool | None, int, int, int | None, tuple[int, ...]],
) -> None:
    """A configuration of more than MAX_STATES states (exactly MAX_STATES is not too many)
    is not entered, its states still count as steps, the other candidates are still tried
    (a proof may be found another way), and a search that skipped one cannot refute: it
    is undecided, naming where it got furthest."""
    import harness.checker.frontier as frontier

    monkeypatch.setattr(frontier, "MAX_STATES", most)
    out = decide(ops)
    stuck = None if out.stuck is None else ops.index(out.stuck)
    assert (out.ok, out.explored, out.depth, stuck, out.order) == want


def test_a_skipped_configuration_does_not_end_the_candidates_tried(monkeypatch: pytest.MonkeyPatch) -> None:
    """Trying earliest invocation first, the snapshot of unknown outcome (two states, too
    many here) is tried first and skipped; the append is tried next, and with it every op
    that returned is placed: proven (a skip that gave up the configuration left it
    undecided)."""
    import harness.checker.frontier as frontier

    monkeypatch.setattr(frontier, "MAX_STATES", 1)
    ops = [op(0, "snapshot?", 0, INF, ("x", "y")), op(1, "append", 1, 2, "a", ())]
    for early, steps in ((False, 3), (True, 5)):
        out = decide(ops, early)
        assert (out.ok, out.explored, out.order) == (True, steps, (1,))


def test_a_refutation_names_the_state_with_the_shortest_turns_not_the_least() -> None:
    """s (0-3) runs across the append of a (1-2): the rollback to it (4-5) restores () or
    (a), and after the append of b (6-7) no read of (c) can follow, from (b) or (a, b). The
    state named is the one with the shortest turns, (b) (``lazy.rank``), not the least
    tuple, (a, b); the other order (a before s) is covered by the failed one."""
    ops = [
        op(0, "snapshot", 0, 3, None, "s"),
        op(1, "append", 1, 2, "a", ()),
        op(2, "rollback", 4, 5, "s"),
        op(3, "append", 6, 7, "b"),
        op(4, "read", 8, 9, None, ("c",)),
    ]
    assert eager(ops) is False
    for early in (False, True):
        out = decide(ops, early)
        assert (out.ok, out.explored, out.depth, out.stuck) == (False, 18, 4, ops[4])
        assert out.state == (("b",), frozenset({"s"}), (), ())  # type: ignore[comparison-overlap]


#: Sessions whose proofs go back through merged sets of states, where the path must keep
#: what later rollbacks restore (``exact_path``'s ``need``): a content found among a
#: snapshot's candidates is asked of every state back to where it entered them, and no
#: further
PATHS: dict[str, list[ModelOp]] = {
    "two-snapshots-restored-around-a-listing": [
        op(0, "append", 0, 2, "a", ()),
        op(1, "snapshot", 1, 3, None, "s1"),
        op(2, "snapshot", 3, 4, None, "s2"),
        op(3, "rollback", 5, 6, "s1"),
        op(4, "rollback", 9, 10, "s1"),
        op(5, "rollback", 11, 12, "s2"),
        op(6, "list", 7, 8, None, frozenset({"s1", "s2"})),
    ],
    "an-unknown-snapshot-and-an-unknown-rollback": [
        op(0, "append", 0, 1, "a", ()),
        op(1, "append", 3, 6, "b", ("a",)),
        op(2, "append", 4, 5, "c", ("a", "b")),
        op(3, "read", 11, 12, None, ("a", "b", "c")),
        op(4, "snapshot?", 2, INF, ("s1", "s2", "s3")),
        op(5, "snapshot", 5, 7, None, "s4"),
        op(6, "snapshot-id", 9, 10, None, "s5"),
        op(7, "rollback?", 8, INF, "s4"),
    ],
    "long-appends-and-four-rollbacks": [
        op(0, "append", 2, 6, "a", ("b",)),
        op(1, "append", 0, 8, "c", ("b", "a")),
        op(2, "append", 3, 9, "b", ()),
        op(3, "append", 4, 10, "d", ("b", "a", "c")),
        op(4, "append", 14, 20, "e", ("b", "a")),
        op(5, "read", 18, 19, None, ("b", "a", "e")),
        op(6, "read", 22, 22, None, ("b", "a")),
        op(7, "snapshot", 1, 7, None, "s1"),
        op(8, "snapshot", 5, 11, None, "s2"),
        op(9, "rollback", 13, 16, "s2"),
        op(10, "rollback", 15, 17, "s2"),
        op(11, "rollback", 12, 19, "s1"),
        op(12, "rollback?", 21, INF, "s1"),
    ],
}


@pytest.mark.parametrize("early", [False, True])
@pytest.mark.parametrize("name", sorted(PATHS))
def test_the_path_back_through_merged_states_keeps_what_later_rollbacks_restore(name: str, early: bool) -> None:
    """Each is linearizable (the eager search agrees); the proof's path goes back
    through merged sets of states, and ``certify`` makes of it an order the eager model
    replays (a path that forgot a restored content chose a state that could not give it;
    one that kept asking for a content past where it entered the candidates found no
    state before a merged one)."""
    ops = PATHS[name]
    assert eager(ops) is True
    proven(ops, early)


@pytest.mark.parametrize("early", [False, True])
def test_a_turn_named_like_a_snapshot_id_is_not_taken_for_one(early: bool) -> None:
    """s0 (0-3) runs across the append of a (1-2) and is restored twice: the states after
    the first rollback have turns () or (a), apart. s1 (6-9) runs across the append of a
    turn that reads "s1" (7-8). Only a rollback's target names the content the path must
    keep for a snapshot, not an append's token that happens to equal the id (taken for
    one, the path asked for a content s1 never had, and found no state before a merged
    one)."""
    ops = [
        op(0, "snapshot", 0, 3, None, "s0"),
        op(1, "append", 1, 2, "a"),
        op(2, "rollback", 4, 5, "s0"),
        op(3, "snapshot", 6, 9, None, "s1"),
        op(4, "append", 7, 8, "s1"),
        op(5, "rollback", 10, 11, "s1"),
        op(6, "rollback", 12, 13, "s0"),
        op(7, "read", 14, 15, None, ("a",)),
    ]
    assert eager(ops) is True
    # (states apart only in lists no op left shows are kept apart: after the rollback to
    # s1, joined, they would leave no merged set for the path to go back through)
    out = proven(ops, early, join_unseen=False)
    assert out.order == tuple(range(8)) and out.explored == 24
    assert proven(ops, early).order == out.order


def test_the_ids_order_snapshots_of_either_kind_by_time_not_by_name() -> None:
    """``_id_order`` with snapshots whose contents are kept or not (``snapshot-id``), ids
    whose names sort otherwise than their times (``aa`` last), a snapshot two listings
    lack, one two failed rollbacks did not find: every bit, and only those, each the
    op (a bitset) that must precede."""
    ops = [
        op(0, "snapshot-id", 0, 5, None, "z"),  # returned before the listings began
        op(1, "snapshot", 8, 25, None, "b"),  # overlaps listings 2 and 11, which lack it
        op(2, "list", 10, 20, None, frozenset({"z"})),
        op(3, "snapshot-id", 12, 30, None, "a"),  # overlaps listings 2 and 11 too
        op(4, "list", 40, 50, None, frozenset({"z", "b", "a", "c", "d"})),
        op(5, "snapshot", 45, 60, None, "c"),  # overlaps listing 4, which shows it
        op(6, "snapshot-id", 38, 48, None, "d"),  # overlaps listing 4, which shows it
        op(7, "rollback-missing", 1, 2, "c"),
        op(8, "rollback", 70, 80, "a"),
        op(9, "rollback-missing", 3, 4, "d"),
        op(10, "rollback", 90, 95, "z"),
        op(11, "list", 15, 22, None, frozenset({"z"})),
        op(12, "rollback-missing", 6, 7, "c"),
        op(13, "snapshot", 100, 110, None, "aa"),  # first by name, last in time
    ]
    assert _id_order(ops) == [
        0,
        1 << 2 | 1 << 11,
        0,
        1 << 2 | 1 << 11,
        1 << 5 | 1 << 6,
        1 << 7 | 1 << 12,
        1 << 9,
        0,
        1 << 3,
        0,
        1 << 0,
        0,
        0,
        0,
    ]


def test_a_configuration_given_up_after_a_skip_is_not_explored_again(monkeypatch: pytest.MonkeyPatch) -> None:
    """s1 and s2 run together, so {s1, s2} is reached two ways, to the same state; from
    there the snapshot of unknown outcome makes two states, too many here, so the listing
    that needs x cannot be placed. A configuration that skipped one is not remembered as
    failed (it may hold fewer states with fewer candidates), but as visited: met again
    the other way, it is not explored again (18 steps, not 23; undecided, not refuted).
    With no bound it is proven."""
    import harness.checker.frontier as frontier

    ops = [
        op(0, "snapshot-id", 0, 5, None, "s1"),
        op(1, "snapshot-id", 0, 5, None, "s2"),
        op(2, "snapshot?", 1, INF, ("x", "y")),
        op(3, "list", 6, 7, None, frozenset({"s1", "s2", "x"})),
    ]
    for early in (False, True):
        assert proven(ops, early).order == (0, 1, 2, 3)
    monkeypatch.setattr(frontier, "MAX_STATES", 1)
    for early in (False, True):
        out = decide(ops, early)
        assert (out.ok, out.explored, out.depth, out.stuck) == (None, 18, 2, ops[3])


def test_an_observer_every_state_of_a_set_allows_is_placed_with_no_alternative() -> None:
    """s (0-3) runs across the append of a (1-2), so the rollback to it (4-5, another one
    follows) leaves two states, () and (a), apart in their turns (a set, not merged). The
    failed rollback to q (6-7) is allowed by both and leaves the set as it was: it is
    placed with no alternative (the append of b, running alongside, is not tried before
    it), so when the read of (zz) (10-11) fails, the search backs up past it at once:
    22 steps (24 with the alternative tried)."""
    ops = [
        op(0, "snapshot", 0, 3, None, "s"),
        op(1, "append", 1, 2, "a"),
        op(2, "rollback", 4, 5, "s"),
        op(3, "rollback-missing", 6, 7, "q"),
        op(4, "append", 6, 9, "b"),
        op(5, "read", 10, 11, None, ("zz",)),
        op(6, "rollback", 12, 13, "s"),
    ]
    assert eager(ops) is False
    for early in (False, True):
        out = decide(ops, early)
        assert (out.ok, out.explored, out.depth, out.stuck) == (False, 22, 5, ops[5])


#: x (5-8) runs across the append of a (3-16, outcome unknown), a listing shows x (13-14),
#: a rollback to x (28) and a listing of x and y (32), which nothing can give: refuted
#: after every order is tried, with failed configurations covering others
READS_X = [
    op(0, "append", 3, 16, "a", ()),
    op(1, "snapshot", 5, 8, None, "x"),
    op(2, "rollback", 28, 28, "x"),
    op(3, "list", 13, 14, None, frozenset({"x"})),
    op(4, "list", 32, 32, None, frozenset({"x", "y"})),
]
#: the same with two more appends after a (9-16, 16-18), ids and times unchanged
READS_X_LONGER = [
    READS_X[0],
    op(1, "append", 9, 16, "b", ("a",)),
    op(2, "append", 16, 18, "c", ("a", "b")),
    *(op(n + 2, o.kind, o.lo, o.hi, o.arg, o.out) for n, o in enumerate(READS_X[1:], start=1)),
]


@pytest.mark.parametrize("early", [False, True])
@pytest.mark.parametrize(("ops", "explored"), [(READS_X, 26), (READS_X_LONGER, 41)])
def test_what_a_failure_depends_on_gathers_every_rollback_tried_below_it(
        ops: list[ModelOp], explored: int, early: bool) -> None:
    """A failure depends on the contents of every snapshot a rollback tried below it read
    (``cons``: the bits of all of them, gathered), and a failed configuration covers
    another only where those contents are within. Here the steps are 26 and 41; keeping
    only the last rollback's bit covers more (38 on the longer one), keeping none (every
    failure read nothing) covers what it must not (19, 28). This pins the search's work,
    not its verdict (refuted either way on these). The lists x may hold are shown by no op:
    states apart only in such lists (``frontier._unseen_as_one``) are not looked for, to
    see the covers alone."""
    assert eager(ops) is False
    out = decide(ops, early, join_unseen=False)
    assert (out.ok, out.explored, out.depth, out.stuck) == (False, explored, len(ops) - 1, ops[-1])


def test_a_covered_configuration_passes_on_what_its_cover_read() -> None:
    """x (5-8) runs across the append of a (3-16, outcome unknown); a listing shows x
    (13-14), snapshot y (14-15, its content not kept), a rollback to x (28), then a read of
    (a) (29-30): linearizable (x taken before a, or after it and restored). A candidate
    whose configuration a failed one covers adds what that failure read to the
    configuration's own (``cons``): dropped, a later failure read nothing and covered
    configurations it must not, and this session was refuted."""
    ops = [
        op(0, "append", 3, 16, "a", ()),
        op(1, "read", 29, 30, None, ("a",)),
        op(2, "snapshot", 5, 8, None, "x"),
        op(3, "snapshot-id", 14, 15, None, "y"),
        op(4, "rollback", 28, 28, "x"),
        op(5, "list", 13, 14, None, frozenset({"x"})),
    ]
    assert eager(ops) is True
    for early in (False, True):
        assert proven(ops, early).order == (2, 0, 5, 3, 4, 1)


def test_a_covered_candidate_adds_to_what_the_configuration_read_so_far() -> None:
    """A snapshot of unknown outcome that may have made x (1-), a rollback of unknown
    outcome to x (25-), the append of a (9-14), y made (27-29) and a listing of y (36-37):
    proven without the unknown ops. Trying earliest invocation first the search meets
    configurations a failed one covers; what each cover read is added to what the
    configuration read so far (``cons |= why``), not put in its place: 34 steps (31
    when it replaces it, and the failure then covers more than it should). This pins the
    search's work, not its verdict (7 steps the other way round)."""
    ops = [
        op(0, "append", 9, 14, "a", ()),
        op(1, "snapshot-id", 27, 29, None, "y"),
        op(2, "snapshot?", 1, INF, ("x",)),
        op(3, "rollback?", 25, INF, "x"),
        op(4, "list", 36, 37, None, frozenset({"y"})),
    ]
    assert eager(ops) is True
    assert [(proven(ops, early).order, decide(ops, early).explored) for early in (False, True)] == [
        ((0, 1, 4), 7), ((0, 1, 4), 34)]


@pytest.mark.parametrize("early", [False, True])
def test_a_configuration_entered_reads_nothing_yet(early: bool) -> None:
    """The append of a (1-4), y made (2-2) and a snapshot of unknown outcome that may have
    made x (2-), a rollback to x (12-13) and a listing of nothing (17-18): refuted. A
    configuration the search enters has read no snapshot's content yet (``cons`` 0), so a
    failure below it that read none covers any contents: 10 steps (13 when every
    configuration starts out reading x's). The refutation names where the deepest dead
    end was (2 ops placed). This pins the search's work, not its verdict."""
    ops = [
        op(0, "append", 1, 4, "a", ()),
        op(1, "snapshot-id", 2, 2, None, "y"),
        op(2, "snapshot?", 2, INF, ("x",)),
        op(3, "rollback", 12, 13, "x"),
        op(4, "list", 17, 18, None, frozenset()),
    ]
    assert eager(ops) is False
    out = decide(ops, early)
    assert (out.ok, out.explored, out.depth, out.stuck) == (False, 10, 2, ops[1])


@pytest.mark.parametrize("early", [False, True])
def test_each_snapshot_a_rollback_targets_has_a_bit_of_its_own(early: bool) -> None:
    """x (7-11) and y (17-18) are each the target of a rollback of unknown outcome; a
    ghost append runs across both (12-24), a listing shows both (14-23), and a read of
    (b) (34-35) nothing makes refutes the session. What a failure read is kept a bit per
    snapshot: 42 steps; with one bit for x and none for y, failures that read y's
    content cover configurations where it differs (28). This pins the search's work, not
    its verdict. (The ghost returns after the listing: one returning before it is tried
    before it, and the failures read less: 30 steps either way.) Without the look-ahead,
    which would cut it shorter: the read of (b) can only show what a rollback to x or y
    restored, and no op that may set what x or y takes sets (b) (4 steps from the start,
    32 from its seventh backup, one per op; 13 and 38 while a snapshot not taken yet was
    taken to hold anything, until both windows had closed). With states apart only in lists
    no op shows kept apart too (``frontier._unseen_as_one`` off), to see the bits alone."""
    ops = [
        op(0, "append", 12, 24, GHOST),
        op(1, "read", 34, 35, None, ("b",)),
        op(2, "snapshot", 7, 11, None, "x"),
        op(3, "snapshot", 17, 18, None, "y"),
        op(4, "rollback?", 27, INF, "x"),
        op(5, "rollback?", 33, INF, "y"),
        op(6, "list", 14, 23, None, frozenset({"x", "y"})),
    ]
    assert eager(ops) is False
    out = decide(ops, early, ahead=INF, join_unseen=False)
    assert (out.ok, out.explored, out.depth, out.stuck) == (False, 42, 6, ops[1])
    assert (decide(ops, early, ahead=1, join_unseen=False).explored,
            decide(ops, early, ahead=0, join_unseen=False).explored) == (32, 4)


def test_only_a_rollback_reads_a_snapshot_s_content() -> None:
    """An append of a of unknown outcome (5-), the same append again (8-10), a snapshot of
    unknown outcome that may have made x (2-), a listing of nothing (11-16) and a rollback
    to x (17): proven, x made after the listing. Trying earliest invocation first, the
    failures met depend on no snapshot's content (no rollback was tried below them), so
    they cover configurations whatever x holds: 23 steps (29 when every op is taken to
    read x's content). This pins the search's work, not its verdict."""
    ops = [
        op(0, "append", 5, INF, "a"),
        op(1, "append", 8, 10, "a"),
        op(2, "snapshot?", 2, INF, ("x",)),
        op(3, "rollback", 17, 17, "x"),
        op(4, "list", 11, 16, None, frozenset()),
    ]
    assert eager(ops) is True
    out = proven(ops, early=True)
    assert (out.order, out.explored) == ((0, 1, 4, 2, 3), 23)


def test_ghost_appends_are_tried_just_before_the_first_rollback() -> None:
    """Candidates in their order of trying, with roles (0: other, 1: an append no read
    shows, 2: a rollback): the ghosts after the first rollback move to just before it, in
    their order, the others keep theirs; a ghost before it stays."""
    from harness.checker.frontier import _ghosts_first

    assert _ghosts_first([5, 2, 7, 3, 9], [0, 2, 1, 0, 1]) == [5, 7, 9, 2, 3]
    assert _ghosts_first([4, 6, 8, 1], [2, 1, 2, 1]) == [6, 1, 4, 8]
    assert _ghosts_first([1, 2, 3], [1, 0, 2]) == [1, 2, 3]
    assert _ghosts_first([7, 1, 2, 3, 8], [1, 0, 2, 0, 0]) == [7, 1, 2, 3, 8]


def _window_then_listing() -> list[ModelOp]:
    """Snapshot 1 runs while turn a is appended; a listing that shows 1 returns after
    both; a rollback to 1 then restores [a], which a read shows."""
    return [op(0, "snapshot", 0, 10, out="1"), op(1, "append", 1, 12, "a", ()),
            op(2, "list", 5, 15, out=frozenset({"1"})), op(3, "rollback", 20, 21, "1"),
            op(4, "read", 22, 23, out=("a",))]


@pytest.mark.parametrize("early", [False, True])
def test_an_append_in_a_snapshot_s_window_is_tried_before_the_listing_that_ends_it(
        early: bool) -> None:
    # the listing tried first ends the window before [a] is in it: the read fails two ops
    # on and the search backs up (21 steps); the append tried first needs none of that
    got = proven(_window_then_listing(), early)
    assert (got.ok, got.explored, got.order) == (True, 12, (0, 1, 2, 3, 4))
    assert linearize(_window_then_listing(), time.monotonic() + 10).ok is True


@pytest.mark.parametrize("early", [False, True])
def test_a_rollback_in_a_snapshot_s_window_is_tried_before_the_listing_that_ends_it(
        early: bool) -> None:
    """Snapshot 1 takes [a]; snapshot 2 runs while a rollback to 1 restores [a] and a
    listing shows both; a rollback to 2 then restores [a], which a read shows."""
    ops = [op(0, "append", 0, 1, "a", ()), op(1, "snapshot", 2, 3, out="1"),
           op(2, "append", 4, 5, "b", ("a",)), op(3, "snapshot", 6, 20, out="2"),
           op(4, "rollback", 7, 12, "1"), op(5, "list", 8, 15, out=frozenset({"1", "2"})),
           op(6, "rollback", 30, 31, "2"), op(7, "read", 32, 33, out=("a",))]
    got = proven(ops, early)
    # the listing tried first: 27 steps
    assert (got.ok, got.explored, got.order) == (True, 18, (0, 1, 2, 3, 4, 5, 6, 7))
    assert linearize(ops, time.monotonic() + 10).ok is True


def test_listings_are_tried_after_the_ops_a_window_still_takes_that_return_before_them() -> None:
    from harness.checker.frontier import _listings_last

    # candidates 0-5: a read, a listing, an append and a rollback invoked by the time the
    # open window's snapshot returned (10) and returning before the listing (30), an
    # append returning after it, an append invoked after the window closed
    kinds = ["read", "list", "append", "rollback", "append", "append"]
    lo = [0, 0, 5, 10, 2, 11]
    hi = [20, 30, 25, 30, 31, 12]
    listing = [k == "list" for k in kinds]
    changer = [k in ("append", "rollback") for k in kinds]
    observer = [k in ("read", "list") for k in kinds]
    state = ((), frozenset({"1"}), (), (("1", 10),))
    out = [0, 1, 5, 2, 3, 4]
    assert _listings_last(out, listing, changer, lo, hi, observer, (state,)) == [0, 2, 3, 1, 5, 4]
    # no window open, or none of them would add to one: the order stays
    closed = ((), frozenset({"1"}), (), ())
    assert _listings_last(out, listing, changer, lo, hi, observer, (closed,)) == out
    assert _listings_last(out, listing, changer, lo, hi, observer,
                          (((), frozenset(), (), (("1", 1),)),)) == out
    # the window of any state of the set counts, and the first listing to return bounds
    two = [0, 1, 5, 2, 3, 4, 6]
    kinds2 = [*kinds, "list"]
    assert _listings_last(two, [k == "list" for k in kinds2], [*changer, False], [*lo, 0],
                          [*hi, 26], [*observer, True], (closed, state)) == [0, 2, 1, 6, 5, 3, 4]
