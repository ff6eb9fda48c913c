"""The order tree (harness.checker.order_tree) on the general path (a read with a tuple item, or
any read of an ambiguous session): the latest invocation a node keeps over the verified path
before the read, the turns such a read witnesses (keyed by their token, naming the read), and
an ambiguous session's reads given as tuples. Written against mutants the other tests left
alive; histories built with tests.checker.builder.H (each event 10 ns after the one before)."""

from __future__ import annotations

from harness.checker.fast import check_fast
from harness.checker.order_tree import BAD, CLEAN
from tests.checker.builder import H
from tests.checker.test_order_tree_parts import grow, said


def test_a_node_added_by_the_general_path_keeps_the_latest_invocation_of_the_path_before_it() -> None:
    h = H()
    h.inv(0, "append", "s", "b")  # 0 (10): b invoked first, acknowledged late
    h.inv(1, "append", "s", "x")  # 1 (20)
    h.ok(1)  # 2 (30): x acknowledged before a was invoked
    h.append(2, "s", "a")  # 3-4 (40-50)
    h.read(3, "s", ["a"])  # 5-6
    h.ok(0)  # 7 (80)
    h.read(3, "s", [["user", "a"], ("user", "b")])  # 8-9: a tuple item: the general path, past [a]
    h.read(3, "s", ["a", "b", "x"])  # 10-11: x after a, yet x was acknowledged before a began
    tree, found = grow(h)
    # b's node: the latest invocation over a, b is a's (40), not b's own (10)
    assert tree.nodes["b"] == (1, 1, 40)
    assert said(found) == [
        ("reordered-turns", "Turn 'x' was acknowledged at event 2 before turn 'a' was appended by process 2 "
         "at event 3, yet the read by process 3 at event 11 shows 'a' before 'x'.", [1, 2, 3, 10, 11]),
    ]
    assert tree.status == [CLEAN, CLEAN, BAD]


def test_an_ambiguous_sessions_read_given_as_tuples_is_checked_on_its_own() -> None:
    h = H()
    h.append(0, "s", "x")  # 0-1
    h.append(0, "s", "x")  # 2-3: x appended twice: the session is ambiguous
    h.append(0, "s", "y")  # 4-5
    h.read(1, "s", (["user", "x"], ["user", "y"]))  # 6-7: the value a tuple
    h.read(1, "s", [["user", "x"], ("user", "y")])  # 8-9: an item a tuple
    h.read(1, "s", (["user", "q"],))  # 10-11: a turn nobody appended
    tree, found = grow(h)
    assert said(found) == [
        ("phantom-turn", "The read by process 1 at event 11 shows turn 'q' that nobody appended.", [10, 11]),
    ]
    assert tree.status == [BAD] * 3 and tree.nodes == {}
    assert [[t for _, t in o[2]] for o in tree.obs] == [["x", "y"], ["x", "y"], ["q"]]


def _shown_by_the_general_path_before_acknowledged(h: H) -> None:
    """b's append (process 0) invoked at event 0, shown at events 1-2 by a read on the general
    path (a tuple item) that completes before the append ends."""
    h.inv(0, "append", "s", "b")  # 0 (10)
    h.read(1, "s", [("user", "b")])  # 1-2 (20-30)


def test_a_turn_first_shown_by_a_read_on_the_general_path_is_witnessed_by_that_read() -> None:
    h = H()
    _shown_by_the_general_path_before_acknowledged(h)
    h.ok(0)  # 3 (40)
    h.read(1, "s", ["b"])  # 4-5
    tree, found = grow(h)
    assert found.count() == 0 and tree.status == [CLEAN, CLEAN]
    assert tree.read_witness == {"b": (20, 30, 0)}
    # a valid history: the later read shows b, and nothing else is required of it
    assert check_fast(h.events).valid


def test_a_turn_shown_by_a_read_on_the_general_path_is_required_of_later_reads() -> None:
    h = H()
    _shown_by_the_general_path_before_acknowledged(h)
    h.crash(0)  # b's append never completes: only the read proves b was there
    h.read(1, "s", [])  # 3-4: invoked after that read completed, yet without b
    r = check_fast(h.events)
    assert [(v.kind, v.message, [e.index for e in v.events]) for v in r.violations] == [
        ("lost-turn", "Turn 'b' was seen by the read of process 1 at event 2, but the read by process 1 at "
         "event 4 (invoked after that, at event 3) does not contain it, and no rollback on session 's' "
         "could run in between.", [1, 2, 3, 4]),
    ]
