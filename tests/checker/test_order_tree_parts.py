"""The order tree (harness.checker.order_tree), part by part, on literal sessions built with
tests.checker.builder.H (each event 10 ns after the one before): the tokens of a read value,
the tree's nodes (read, position, latest invoke over the path), each read's status, the
reads' own turn objects kept, the conflicts, the read that first shows a turn before its
append completed, and each violation a read proves on its own (unreadable, duplicate-turn,
phantom-turn, cross-session-bleed, reordered-turns) with its exact sentence and evidence."""

from __future__ import annotations

from typing import Any

from harness.checker.evidence import Evidence
from harness.checker.ops import group_by_session
from harness.checker.order_tree import BAD, CLEAN, CONFLICT, OrderTree, _quick_tokens, read_tokens
from harness.checker.turns import LazyIndexes, Owners
from tests.checker.builder import H


def grow(h: H, session: str = "s") -> tuple[OrderTree, Evidence]:
    """The tree of ``session``'s reads, as the fast checker builds it."""
    sessions, _ = group_by_session(h.events)
    indexes = LazyIndexes(sessions)
    found = Evidence()
    tree = OrderTree(session, indexes[session], Owners(indexes), found)
    tree.build(sessions[session].reads)
    return tree, found


def said(found: Evidence) -> list[tuple[str, str, list[int]]]:
    """Each violation found: kind, sentence, the indices of its events."""
    return [(v.kind, v.message, [e.index for e in v.events]) for v in found.kept]


def values(tree: OrderTree) -> list[list[str]]:
    return [[t for _, t in o[2]] for o in tree.obs]


# -- the tokens of a read value ----------------------------------------------------------------


def test_read_tokens_takes_lists_of_role_and_token_strings() -> None:
    assert read_tokens([]) == [] and read_tokens(()) == []
    assert read_tokens([["user", "a"], ("assistant", "b")]) == ["a", "b"]
    assert read_tokens((["user", "a"],)) == ["a"]
    for bad in ("ab", None, {"a": 1}, [["user", "a"], "b"], [["user"]], [["user", "a", "x"]], [[1, "a"]],
                [["user", 2]], [["user", "a"], ["user", None]]):
        assert read_tokens(bad) is None, bad


def test_quick_tokens_reads_item_one_of_a_list_or_gives_up() -> None:
    assert _quick_tokens([["user", "a"], ("x", "b"), "xy"]) == ["a", "b", "y"]
    assert _quick_tokens([]) == []
    assert _quick_tokens((["user", "a"],)) is None  # not a list
    assert _quick_tokens("ab") is None
    assert _quick_tokens([5]) is None  # TypeError
    assert _quick_tokens([["user"]]) is None  # IndexError
    assert _quick_tokens([{"user": "a"}]) is None  # KeyError


# -- growing the tree --------------------------------------------------------------------------


def test_reads_that_grow_one_path_make_one_branch() -> None:
    h = H()
    h.append(0, "s", "a")  # 0-1 (times 10-20)
    h.read(1, "s", ["a"])  # 2-3
    h.inv(0, "append", "s", "b")  # 4 (50)
    h.inv(2, "append", "s", "c")  # 5 (60)
    h.ok(0)  # 6
    h.ok(2)  # 7
    h.read(1, "s", ["a", "b", "c"])  # 8-9
    h.read(1, "s", ["a"])  # 10-11
    h.read(1, "s", ["a", "b"])  # 12-13
    h.read(1, "s", [])  # 14-15
    h.read(1, "s", ["a", "b", "c"])  # 16-17
    tree, found = grow(h)
    assert found.count() == 0
    assert tree.nodes == {"a": (0, 0, 10), "b": (1, 1, 50), "c": (1, 2, 60)}
    assert tree.status == [CLEAN] * 6 and tree.conflicts == [] and tree.read_witness == {}
    assert values(tree) == [["a"], ["a", "b", "c"], ["a"], ["a", "b"], [], ["a", "b", "c"]]
    # every read is rebuilt from the tree's own turn objects: those of the read that added them
    first_a = h.events[3].value[0]
    b, c = h.events[9].value[1:]
    for o in tree.obs[1:]:
        assert all(x is y for x, y in zip(o[2], [first_a, b, c], strict=False))
    assert [o[0].index for o in tree.obs] == [2, 8, 10, 12, 14, 16]


# -- what a read proves on its own -------------------------------------------------------------


def test_reads_that_failed_or_returned_junk_are_unreadable() -> None:
    h = H()
    h.inv(0, "read", "s")
    h.fail(0)
    h.inv(0, "read", "s")
    h.fail(0, error=None)
    h.inv(0, "read", "s")
    h.info(0)  # no result, nothing wrong
    h.inv(0, "read", "s")
    h.crash(0)
    h.read(1, "s", "nope")
    h.read(1, "s", [["user", "a"], ["user"]])
    tree, found = grow(h)
    assert said(found) == [
        ("unreadable", "The read of session 's' by process 0 at event 1 raised Error: boom.", [0, 1]),
        ("unreadable", "The read of session 's' by process 0 at event 3 raised an error.", [2, 3]),
        ("unreadable", "The read of session 's' by process 1 at event 8 returned malformed data.", [7, 8]),
        ("unreadable", "The read of session 's' by process 1 at event 10 returned malformed data.", [9, 10]),
    ]
    assert tree.obs == [] and tree.status == [] and tree.nodes == {}


def test_turns_of_the_wrong_role_failed_foreign_or_unknown_are_reported_one_by_one() -> None:
    h = H()
    h.append(0, "s", "a")  # 0-1
    h.inv(1, "append", "s", "f")  # 2
    h.fail(1)  # 3
    h.append(2, "t", "x")  # 4-5
    h.read(0, "s", [["bot", "a"], ["user", "f"], ["user", "x"], ["user", "zz"]])  # 6-7
    tree, found = grow(h)
    assert said(found) == [
        ("phantom-turn", "The read by process 0 at event 7 shows turn 'a' with role 'bot', but it was appended "
         "with role 'user'.", [0, 6, 7]),
        ("phantom-turn", "The read by process 0 at event 7 shows turn 'f' although its append by process 1 at "
         "event 2 failed.", [2, 3, 6, 7]),
        ("cross-session-bleed", "Turn 'x' was appended to session 't' by process 2 at event 4, but the read of "
         "session 's' by process 0 at event 7 shows it.", [4, 5, 6, 7]),
        ("phantom-turn", "The read by process 0 at event 7 shows turn 'zz' that nobody appended.", [6, 7]),
    ]
    assert tree.status == [BAD] and tree.nodes == {} and tree.conflicts == []
    h.read(0, "s", [["bot", "a"]])  # a wrong role alone makes a bad read, which adds nothing
    tree, found = grow(h)
    assert tree.status == [BAD, BAD] and tree.nodes == {} and found.count() == 4


def test_a_turn_shown_more_often_than_appended_is_a_duplicate() -> None:
    h = H()
    h.append(0, "s", "a")  # 0-1
    h.read(0, "s", ["a", "a"])  # 2-3
    h.read(0, "s", ["q", "q"])  # 4-5
    h.read(0, "s", ["a"])  # 6-7: fine, and the first path of the tree
    tree, found = grow(h)
    assert said(found) == [
        ("duplicate-turn", "The read by process 0 at event 3 shows turn 'a' 2 times, but it was appended once "
         "to session 's'.", [0, 1, 2, 3]),
        ("duplicate-turn", "The read by process 0 at event 5 shows turn 'q' 2 times, but it was appended never "
         "to session 's'.", [4, 5]),
        ("phantom-turn", "The read by process 0 at event 5 shows turn 'q' that nobody appended.", [4, 5]),
    ]
    assert tree.status == [BAD, BAD, CLEAN] and tree.nodes == {"a": (2, 0, 10)}


def test_a_turn_shown_before_one_acknowledged_before_it_was_appended_is_reordered() -> None:
    h = H()
    h.append(0, "s", "a")  # 0-1
    h.append(0, "s", "b")  # 2-3
    h.read(1, "s", ["b", "a"])  # 4-5
    tree, found = grow(h)
    assert said(found) == [
        ("reordered-turns", "Turn 'a' was acknowledged at event 1 before turn 'b' was appended by process 0 at "
         "event 2, yet the read by process 1 at event 5 shows 'b' before 'a'.", [0, 1, 2, 4, 5]),
    ]
    assert tree.status == [BAD] and tree.nodes == {}


def test_what_a_read_proves_is_keyed_per_problem_and_blames_the_read() -> None:
    h = H()
    h.inv(0, "read", "s")
    h.fail(0)  # 0-1
    h.append(0, "s", "a")  # 2-3
    h.append(1, "t", "x")  # 4-5
    h.inv(2, "append", "s", "f")  # 6
    h.fail(2)  # 7
    h.read(0, "s", [["bot", "a"], ["user", "x"], ["user", "f"], ["user", "zz"]])  # 8-9
    h.read(0, "s", ["zz", "zz"])  # 10-11
    # reads with one problem each, so that each blames its read
    h.read(0, "s", ["nobody"])  # 12-13
    h.append(1, "t", "y")  # 14-15
    h.read(0, "s", ["y"])  # 16-17
    h.read(0, "s", ["f"])  # 18-19: the same problem as in 9: not blamed again
    _, found = grow(h)
    assert found.sessions == {"s"}
    assert found.blamed == {1, 9, 11, 13, 17}
    assert found.has("unreadable", "s", ("read", 1))  # the key exact.py's own report of it uses
    for kind, key in (("phantom-turn", "a"), ("cross-session-bleed", "x"), ("phantom-turn", "f"),
                      ("phantom-turn", "zz"), ("duplicate-turn", "zz")):
        assert found.has(kind, "s", key), (kind, key)
    assert found.totals == {"unreadable": 1, "phantom-turn": 4, "cross-session-bleed": 2, "duplicate-turn": 1}


def test_a_reordering_names_the_first_turn_appended_strictly_after_the_acknowledgement() -> None:
    h = H()
    h.append(0, "s", "t")  # 0-1 (times 10-20)
    h.inv(1, "append", "s", "x", same_time=True)  # 2: invoked at 20, the instant t was acknowledged
    h.ok(1)  # 3
    h.append(2, "s", "a")  # 4-5: invoked at 40
    h.append(2, "s", "b")  # 6-7: invoked at 60
    h.read(3, "s", ["x", "a", "t", "b"])  # 8-9
    h.read(3, "s", ["x", "a", "b", "t"])  # 10-11
    _, found = grow(h)
    assert said(found) == [
        ("reordered-turns", "Turn 't' was acknowledged at event 1 before turn 'a' was appended by process 2 at "
         "event 4, yet the read by process 3 at event 9 shows 'a' before 't'.", [0, 1, 4, 8, 9]),
    ]
    assert found.has("reordered-turns", "s", ("a", "t")) and found.blamed == {9}
    assert found.count() == 1  # the second read's is the same problem, counted once
    # two turns acknowledged before one they are shown after: two problems
    h = H()
    h.append(0, "s", "t")  # 0-1
    h.append(0, "s", "u")  # 2-3
    h.append(0, "s", "a")  # 4-5
    h.read(1, "s", ["a", "t", "u"])  # 6-7
    _, found = grow(h)
    assert found.count() == 2 and found.has("reordered-turns", "s", ("a", "t"))
    assert found.has("reordered-turns", "s", ("a", "u"))


def test_a_long_read_past_a_verified_path_extends_it() -> None:
    """Reads with more than 16 turns new to the tree take the general path, which finds the
    verified prefix by galloping then bisecting: for every length of that prefix, the new
    turns extend the path (no conflict)."""
    for known in range(0, 12):
        for new in (17, 18, 21, 30):
            h = H()
            toks = [f"t{i}" for i in range(known + new)]
            for i, t in enumerate(toks[:known]):
                h.append(0, "s", t)
                h.read(1, "s", toks[: i + 1])
            for t in toks[known:]:
                h.append(0, "s", t)
            h.read(1, "s", toks)
            h.read(1, "s", toks[: known + 3])
            tree, found = grow(h)
            assert found.count() == 0
            assert tree.status == [CLEAN] * (known + 2) and tree.conflicts == [], (known, new)
            assert [tree.nodes[t][:2] for t in toks] == [(min(i, known), i) for i in range(len(toks))]


def test_the_first_read_showing_a_turn_before_its_append_completed_is_its_witness() -> None:
    h = H()
    h.inv(0, "append", "s", "a")  # 0 (time 10)
    h.read(1, "s", ["a"])  # 1-2 (20-30): a's append not completed yet
    h.inv(2, "read", "s")  # 3 (40)
    h.inv(3, "append", "s", "b")  # 4 (50): invoked after the read
    h.inv(4, "append", "s", "c")  # 5 (60)
    h.ok(2, ["a", "b", "c"])  # 6 (70)
    h.ok(0)  # 7
    h.ok(3)  # 8
    h.info(4)  # 9
    h.read(1, "s", ["a", "b", "c"])  # 10-11: after every append ended: witnesses nothing
    tree, found = grow(h)
    assert found.count() == 0 and tree.status == [CLEAN] * 3
    assert tree.nodes == {"a": (0, 0, 10), "b": (1, 1, 50), "c": (1, 2, 60)}
    # (the later of the read's and the append's invocations, the read's completion, the read)
    assert tree.read_witness == {"a": (20, 30, 0), "b": (50, 70, 1), "c": (60, 70, 1)}


def test_a_witness_on_the_general_path_and_none_at_the_acknowledgement_instant() -> None:
    h = H()
    h.append(0, "s", "a")  # 0-1 (10-20)
    h.inv(1, "read", "s")  # 2 (30)
    h.inv(2, "append", "s", "b")  # 3 (40)
    h.ok(1, [["user", "a"], ("user", "b")], same_time=False)  # 4 (50): a tuple item: the general path
    h.ok(2, same_time=True)  # 5 (50): acknowledged the instant the read completed
    h.inv(1, "read", "s")  # 6 (60)
    h.inv(3, "append", "s", "c")  # 7 (70)
    h.ok(1, ["a", "b", "c"])  # 8 (80)
    h.info(3)  # 9
    tree, found = grow(h)
    assert found.count() == 0 and tree.status == [CLEAN, CLEAN]
    assert values(tree) == [["a", "b"], ["a", "b", "c"]]
    assert tree.obs[0][2] == [["user", "a"], ["user", "b"]]  # kept as lists
    assert tree.read_witness == {"c": (70, 80, 1)}


def test_reads_that_leave_the_tree_are_conflicts_and_add_nothing() -> None:
    h = H()
    h.append(0, "s", "a")  # 0-1
    h.inv(1, "append", "s", "b")  # 2
    h.inv(2, "append", "s", "c")  # 3
    h.read(3, "s", ["a", "b"])  # 4-5
    h.ok(1)  # 6
    h.ok(2)  # 7
    h.read(3, "s", ["a", "c", "b"])  # 8-9: b at another place
    h.read(3, "s", ["b"])  # 10-11: b without a
    h.read(3, "s", ["a", "b", "c"])  # 12-13: fine
    tree, found = grow(h)
    assert found.count() == 0
    assert tree.status == [CLEAN, CONFLICT, CONFLICT, CLEAN]
    assert tree.conflicts == [(1, 2, "b"), (2, 0, "b")]
    assert tree.nodes == {"a": (0, 0, 10), "b": (0, 1, 30), "c": (3, 2, 40)}
    assert tree.read_witness == {"b": (50, 60, 0)}


def test_an_ambiguous_session_checks_each_read_on_its_own_and_grows_no_tree() -> None:
    h = H()
    h.inv(0, "append", "s", "x")  # 0
    h.info(0)  # 1
    h.append(0, "s", "x", role="bot")  # 2-3: x appended twice, the second with another role
    h.append(0, "s", "y")  # 4-5
    h.read(1, "s", [["user", "x"], ["user", "x"], ["user", "y"]])  # 6-7: twice is allowed, either role
    h.read(1, "s", [["bot", "x"], ["bot", "x"], ["bot", "x"]])  # 8-9: three times is not
    h.read(1, "s", ["y"])  # 10-11
    h.read(1, "s", ["y"])  # 12-13
    tree, found = grow(h)
    assert said(found) == [
        ("duplicate-turn", "The read by process 1 at event 9 shows turn 'x' 3 times, but it was appended twice "
         "to session 's'.", [0, 1, 8, 9]),
    ]
    assert tree.status == [BAD] * 4 and tree.nodes == {} and tree.conflicts == []
    assert values(tree) == [["x", "x", "y"], ["x", "x", "x"], ["y"], ["y"]]


def test_a_session_with_an_unreadable_append_reports_no_unknown_turn() -> None:
    h = H()
    h.inv(0, "append", "s", ["user"])  # 0-1: its turn is unknown
    h.ok(0)
    h.append(0, "s", "y")  # 2-3
    h.read(1, "s", ["y", "q"])  # 4-5: q may be that append's
    h.read(1, "s", [["bot", "y"]])  # 6-7: but a wrong role is still wrong
    tree, found = grow(h)
    assert said(found) == [
        ("phantom-turn", "The read by process 1 at event 7 shows turn 'y' with role 'bot', but it was appended "
         "with role 'user'.", [2, 6, 7]),
    ]
    assert tree.status == [BAD, BAD] and tree.nodes == {}


def test_a_turn_appended_after_the_read_completed_is_a_phantom_but_not_at_the_same_instant() -> None:
    h = H()
    h.inv(1, "read", "s")  # 0 (10)
    h.ok(1, [["user", "late"]])  # 1 (20)
    h.append(0, "s", "late")  # 2-3 (30-40): invoked after the read completed
    h.inv(1, "read", "s")  # 4 (50)
    h.ok(1, [["user", "late"], ["user", "now"]])  # 5 (60)
    h.inv(0, "append", "s", "now", same_time=True)  # 6 (60): invoked the instant the read completed
    h.ok(0)  # 7
    h.inv(1, "read", "s")  # 8 (80)
    h.ok(1, [["user", "late"], ["user", "now"], ("user", "then")])  # 9 (90): by the general path
    h.inv(0, "append", "s", "then", same_time=True)  # 10 (90)
    h.ok(0)  # 11
    tree, found = grow(h)
    assert said(found) == [
        ("phantom-turn", "The read by process 1 at event 1 shows turn 'late' although its append was invoked "
         "only after that read completed.", [0, 1, 2]),
    ]
    assert tree.status == [BAD, CLEAN, CLEAN]
    assert tree.nodes == {"late": (1, 0, 30), "now": (1, 1, 60), "then": (2, 2, 90)}


def test_a_turn_shown_twice_and_others_after_it_are_each_checked() -> None:
    h = H()
    h.append(0, "s", "a")  # 0-1
    h.read(1, "s", ["a", "a", "q"])  # 2-3
    tree, found = grow(h)
    assert said(found) == [
        ("duplicate-turn", "The read by process 1 at event 3 shows turn 'a' 2 times, but it was appended once "
         "to session 's'.", [0, 1, 2, 3]),
        ("phantom-turn", "The read by process 1 at event 3 shows turn 'q' that nobody appended.", [2, 3]),
    ]
    assert tree.status == [BAD]


def test_a_turn_after_a_verified_path_is_checked_against_the_path() -> None:
    h = H()
    h.append(0, "s", "t")  # 0-1 (10-20)
    h.append(0, "s", "a")  # 2-3 (30-40)
    h.read(1, "s", ["a"])  # 4-5
    h.read(1, "s", ["a", "t"])  # 6-7: t was acknowledged before a was appended
    tree, found = grow(h)
    assert said(found) == [
        ("reordered-turns", "Turn 't' was acknowledged at event 1 before turn 'a' was appended by process 0 at "
         "event 2, yet the read by process 1 at event 7 shows 'a' before 't'.", [0, 1, 2, 6, 7]),
    ]
    assert tree.status == [CLEAN, BAD] and tree.nodes == {"a": (0, 0, 30)}


def test_turns_given_as_tuples_are_kept_as_lists_so_later_reads_match_them() -> None:
    h = H()
    h.append(0, "s", "a")  # 0-1
    h.append(0, "s", "b")  # 2-3
    h.append(0, "s", "c")  # 4-5
    h.read(1, "s", [("user", "a"), ("user", "b")])  # 6-7: all tuples
    h.read(1, "s", ["a", "b"])  # 8-9
    h.read(1, "s", [["user", "a"], ["user", "b"], ("user", "c")])  # 10-11: one new turn, a tuple
    h.read(1, "s", ["a", "b", "c"])  # 12-13
    tree, found = grow(h)
    assert found.count() == 0 and tree.conflicts == []
    assert tree.status == [CLEAN] * 4
    assert all(type(x) is list for o in tree.obs for x in o[2])
    assert tree.nodes == {"a": (0, 0, 10), "b": (0, 1, 30), "c": (2, 2, 50)}


def test_a_read_one_turn_past_a_path_shares_the_paths_turn_objects() -> None:
    h = H()
    h.append(0, "s", "a")  # 0-1
    h.read(1, "s", ["a"])  # 2-3
    h.append(0, "s", "b")  # 4-5
    h.read(1, "s", ["a", "b"])  # 6-7
    h.read(1, "s", ["a", "b"])  # 8-9
    tree, found = grow(h)
    assert found.count() == 0 and tree.status == [CLEAN] * 3
    a, b = h.events[3].value[0], h.events[7].value[1]
    assert [[id(x) for x in o[2]] for o in tree.obs] == [[id(a)], [id(a), id(b)], [id(a), id(b)]]


def test_a_turn_acknowledged_the_instant_the_one_before_it_was_invoked_is_in_order() -> None:
    h = H()
    h.inv(0, "append", "s", "t")  # 0 (10)
    h.ok(0)  # 1 (20)
    h.inv(1, "append", "s", "x", same_time=True)  # 2 (20): invoked the instant t was acknowledged
    h.ok(1)  # 3 (30)
    h.read(2, "s", [["user", "x"], ("user", "t")])  # 4-5: by the general path
    h.read(2, "s", ["x", "t"])  # 6-7
    tree, found = grow(h)
    assert found.count() == 0 and tree.status == [CLEAN, CLEAN]
    assert tree.nodes == {"x": (0, 0, 20), "t": (0, 1, 20)}


def test_a_node_keeps_the_latest_invocation_over_its_path() -> None:
    h = H()
    h.inv(0, "append", "s", "b")  # 0 (10): invoked first, acknowledged late
    h.append(1, "s", "t")  # 1-2 (20-30)
    h.append(1, "s", "a")  # 3-4 (40-50)
    h.read(2, "s", ["a"])  # 5-6
    h.ok(0)  # 7
    h.read(2, "s", ["a", "b"])  # 8-9: one new turn, invoked before a
    h.read(2, "s", ["a", "b", "t"])  # 10-11: t was acknowledged before a was appended
    tree, found = grow(h)
    assert tree.nodes == {"a": (0, 0, 40), "b": (1, 1, 40)}
    assert [v[0] for v in said(found)] == ["reordered-turns"] and tree.status == [CLEAN, CLEAN, BAD]


def test_no_witness_for_an_append_acknowledged_the_instant_the_read_completed() -> None:
    h = H()
    h.append(0, "s", "a")  # 0-1
    h.read(1, "s", ["a"])  # 2-3
    h.inv(1, "read", "s")  # 4 (50)
    h.inv(0, "append", "s", "b")  # 5 (60)
    h.ok(1, ["a", "b"])  # 6 (70): one new turn
    h.ok(0, same_time=True)  # 7 (70)
    h.inv(1, "read", "s")  # 8 (80)
    h.inv(0, "append", "s", "c")  # 9 (90)
    h.inv(2, "append", "s", "d")  # 10 (100)
    h.ok(1, ["a", "b", "c", "d"])  # 11 (110): two new turns
    h.ok(0, same_time=True)  # 12 (110)
    h.ok(2, same_time=True)  # 13 (110)
    tree, found = grow(h)
    assert found.count() == 0 and tree.status == [CLEAN, CLEAN, CLEAN]
    assert tree.read_witness == {}
    assert tree.nodes == {"a": (0, 0, 10), "b": (1, 1, 60), "c": (2, 2, 90), "d": (2, 3, 100)}


def test_tokens_that_are_not_strings_make_a_read_unreadable() -> None:
    h = H()
    h.append(0, "s", "a")  # 0-1
    h.read(1, "s", [["user", ["x"]]])  # 2-3
    h.read(1, "s", [["user", "a"], ["user", ["x"]]])  # 4-5
    h.read(1, "s", [["user", "a"], ["user", "a2"], ["user", {"x": 1}]])  # 6-7
    tree, found = grow(h)
    assert [(k, m.split(" by ")[1]) for k, m, _ in said(found)] == [
        ("unreadable", "process 1 at event 3 returned malformed data."),
        ("unreadable", "process 1 at event 5 returned malformed data."),
        ("unreadable", "process 1 at event 7 returned malformed data."),
    ]
    assert tree.status == []


def test_a_wrong_role_among_several_new_turns_is_a_phantom() -> None:
    h = H()
    h.append(0, "s", "a")  # 0-1
    h.append(0, "s", "b")  # 2-3
    h.read(1, "s", [["user", "a"], ["bot", "b"]])  # 4-5
    tree, found = grow(h)
    assert said(found) == [
        ("phantom-turn", "The read by process 1 at event 5 shows turn 'b' with role 'bot', but it was appended "
         "with role 'user'.", [2, 4, 5]),
    ]
    assert tree.status == [BAD] and tree.nodes == {}


def test_a_read_ending_at_a_known_turn_with_another_path_before_it_conflicts() -> None:
    h = H()
    h.inv(0, "append", "s", "a")  # 0
    h.inv(1, "append", "s", "c")  # 1
    h.append(2, "s", "b")  # 2-3
    h.read(3, "s", ["a", "b"])  # 4-5
    h.read(3, "s", ["c", "b"])  # 6-7: b at the same place, c before it
    h.ok(0)  # 8
    h.ok(1)  # 9
    tree, found = grow(h)
    assert found.count() == 0
    assert tree.status == [CLEAN, CONFLICT] and tree.conflicts == [(1, 1, "b")]
    assert set(tree.nodes) == {"a", "b"}


def test_a_read_of_sixteen_turns_starting_with_a_known_turn_elsewhere_conflicts() -> None:
    h = H()
    h.append(0, "s", "a")  # 0-1
    h.append(0, "s", "b")  # 2-3
    h.read(1, "s", ["a", "b"])  # 4-5
    new = [f"t{i}" for i in range(15)]
    for t in new:
        h.append(0, "s", t)
    h.read(1, "s", ["b", *new])  # b first, where the tree has it second
    tree, found = grow(h)
    assert found.count() == 0
    assert tree.status == [CLEAN, CONFLICT] and tree.conflicts == [(1, 0, "b")]
    assert tree.nodes == {"a": (0, 0, 10), "b": (0, 1, 30)}


class Counting(OrderTree):
    """An order tree that counts the calls of its slower paths."""

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.calls: dict[str, int] = {"known": 0, "slow": 0}

    def _known_prefix(self, v: list[Any]) -> int:
        self.calls["known"] += 1
        return super()._known_prefix(v)

    def _slow(self, inv: Any, comp: Any, v: Any) -> None:
        self.calls["slow"] += 1
        super()._slow(inv, comp, v)


def counted(h: H) -> Counting:
    sessions, _ = group_by_session(h.events)
    indexes = LazyIndexes(sessions)
    tree = Counting("s", indexes["s"], Owners(indexes), Evidence())
    tree.build(sessions["s"].reads)
    return tree


def test_a_read_that_is_a_path_already_costs_one_comparison() -> None:
    h = H()
    toks = [f"t{i}" for i in range(20)]
    for t in toks:
        h.append(0, "s", t)
    h.read(1, "s", toks[:10])  # ten new turns: no general path
    h.read(1, "s", toks[:3])  # paths already: neither the prefix search nor the general path
    h.read(1, "s", toks[:10])
    h.read(1, "s", [])
    tree = counted(h)
    assert tree.status == [CLEAN] * 4
    assert tree.calls == {"known": 2, "slow": 0}  # the first read and the empty one
    h.read(1, "s", toks[:11])  # one new turn
    h.read(1, "s", toks[:13])  # two
    h.read(1, "s", toks)  # five
    tree = counted(h)
    assert tree.status == [CLEAN] * 7 and tree.calls == {"known": 5, "slow": 0}


def test_sixteen_new_turns_skip_the_general_path_and_seventeen_take_it() -> None:
    for new, slow in ((16, 0), (17, 1)):
        h = H()
        toks = [f"t{i}" for i in range(new)]
        for t in toks:
            h.append(0, "s", t)
        h.read(1, "s", toks)
        tree = counted(h)
        assert tree.status == [CLEAN] and tree.calls == {"known": 1, "slow": slow}, new


def test_turns_appended_the_instant_the_read_completed_stay_on_the_fast_path() -> None:
    h = H()
    h.append(0, "s", "a")  # 0-1 (10-20)
    h.read(1, "s", ["a"])  # 2-3
    h.inv(1, "read", "s")  # 4 (50)
    h.inv(0, "append", "s", "b")  # 5 (60)
    h.ok(1, ["a", "b"], same_time=True)  # 6 (60): one new turn, invoked the instant the read completed
    h.ok(0)  # 7
    h.inv(1, "read", "s")  # 8 (80)
    h.inv(0, "append", "s", "c")  # 9 (90)
    h.inv(2, "append", "s", "d")  # 10 (100)
    h.ok(1, ["a", "b", "c", "d"], same_time=True)  # 11 (100): two new turns, the same for d
    h.ok(0)  # 12
    h.ok(2)  # 13
    tree = counted(h)
    assert tree.status == [CLEAN] * 3 and tree.calls == {"known": 3, "slow": 0}


def test_a_read_of_lists_on_the_general_path_is_kept_as_it_came_not_copied() -> None:
    h = H()
    toks = [f"t{i}" for i in range(17)]
    for t in toks:
        h.append(0, "s", t)
    h.read(1, "s", toks)  # seventeen new turns: the general path
    h.read(1, "s", [*h.turns(toks[:16]), ("user", "t16")])  # a tuple: copied as lists
    tree = counted(h)
    assert tree.status == [CLEAN, CLEAN] and tree.calls == {"known": 2, "slow": 2}
    assert tree.obs[0][2] is h.events[-3].value
    assert tree.obs[1][2] is not h.events[-1].value and tree.obs[1][2] == tree.obs[0][2]


def test_turns_acknowledged_the_instant_the_path_before_them_was_invoked_stay_on_the_fast_path() -> None:
    h = H()
    h.inv(0, "append", "s", "b")  # 0 (10)
    h.ok(0)  # 1 (20)
    h.inv(1, "append", "s", "a", same_time=True)  # 2 (20): a invoked the instant b was acknowledged
    h.ok(1)  # 3 (30)
    h.read(2, "s", ["a"])  # 4-5
    h.read(2, "s", ["a", "b"])  # 6-7: one new turn
    h.inv(0, "append", "s", "c")  # 8 (80)
    h.ok(0)  # 9 (90)
    h.inv(1, "append", "s", "d", same_time=True)  # 10 (90)
    h.ok(1)  # 11 (100)
    h.read(2, "s", ["a", "b", "d", "c"])  # 12-13: two new turns
    tree = counted(h)
    assert tree.status == [CLEAN] * 3 and tree.calls == {"known": 3, "slow": 0}
    assert tree.nodes == {"a": (0, 0, 20), "b": (1, 1, 20), "d": (2, 2, 90), "c": (2, 3, 90)}


def test_a_duplicate_says_how_many_times_the_turn_was_appended() -> None:
    h = H()
    for _ in range(3):
        h.append(0, "s", "x")  # 0-5: a retried append, three times
    h.read(1, "s", ["x", "x", "x"])  # 6-7: once per append is allowed
    h.read(1, "s", ["x", "x", "x", "x"])  # 8-9: four times is not
    _, found = grow(h)
    assert said(found) == [
        ("duplicate-turn", "The read by process 1 at event 9 shows turn 'x' 4 times, but it was appended 3 times "
         "to session 's'.", [0, 1, 8, 9]),
    ]
