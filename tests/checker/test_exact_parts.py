"""The exact decision (harness.checker.exact) part by part, on literal sessions: the ops
the searches see (``session_ops``, ``_tighten``, ``_turns``), the proof checks
(``complete``, ``replays``), what is counted and named (``Tally``, ``Undecided``), the
budget (``Prover``) and the verdict of ``judge`` on each of its ways.

Ops are ``ModelOp(id, kind, lo, hi, arg, out)`` (harness.checker.model); histories are
built with tests.checker.builder.H (each event 10 ns after the one before)."""

from __future__ import annotations

import time
from typing import Any

import pytest

import harness.checker.exact as exact
from harness.checker import linearize as lin
from harness.checker.chain import UNORDERED, Backward, Chain
from harness.checker.evidence import Evidence
from harness.checker.exact import (
    _SEP,
    Prover,
    Tally,
    Undecided,
    _turns,
    _Unmodelled,
    complete,
    judge,
    replays,
    session_ops,
)
from harness.checker.linearize import Outcome, linearize
from harness.checker.model import GHOST, ModelOp
from harness.checker.ops import INF, SessionOps, group_by_session
from tests.checker.builder import H


def op(n: int, kind: str, lo: int, hi: int, arg: Any = None, out: Any = None) -> ModelOp:
    return ModelOp(n, kind, lo, hi, arg, out)


def _one(h: H) -> SessionOps:
    (so,) = group_by_session(h.events)[0].values()
    return so


def _rows(ops: list[ModelOp]) -> list[tuple[Any, ...]]:
    return [(o.id, o.kind, o.lo, o.hi, o.arg, o.out) for o in ops]


def u(tok: str, role: str = "user") -> str:
    return f"{role}{_SEP}{tok}"


# ---------------------------------------------------------------------------------------
# session_ops and _tighten


def test_every_kind_of_op_becomes_the_op_the_search_sees() -> None:
    """One op of each outcome: an acknowledged append a read shows (applied to ()), one of
    unknown outcome a read shows (its return: that read's), one no read shows (dropped), a
    failed one (dropped), an acknowledged one no read shows (the ghost); a read (its
    ``arg`` None); a snapshot a rollback targets (content kept), one of unknown outcome (the
    ids nothing created: the listed u and the rollback's v), a failed one (dropped), one no
    rollback targets (``snapshot-id``); a rollback, one not found, one failed otherwise
    (dropped), one of unknown outcome; a listing."""
    h = H()
    h.append(0, "s", "a")  # 10-20
    h.inv(1, "append", "s", "b")  # 30
    h.info(1)
    h.inv(1, "append", "s", "c")
    h.info(1)
    h.inv(1, "append", "s", "d")
    h.fail(1)
    h.append(0, "s", "e")  # 90-100
    h.read(2, "s", ["a", "b"])  # 110-120
    h.snapshot(0, "s", "x")  # 130-140
    h.inv(0, "snapshot", "s")  # 150
    h.info(0)
    h.inv(0, "snapshot", "s")
    h.fail(0)
    h.snapshot(0, "s", "y")  # 190-200
    h.rollback(0, "s", "x")  # 210-220
    h.inv(0, "rollback", "s", "z")  # 230-240
    h.fail(0, "SnapshotNotFound: z")
    h.inv(0, "rollback", "s", "w")
    h.fail(0, "Error: boom")
    h.inv(0, "rollback", "s", "v")  # 270
    h.info(0)
    h.list(0, "s", ["x", "y", "u"])  # 290-300
    found = Evidence()
    ops = session_ops(_one(h), found)
    assert found.count() == 0
    a, b = u("a"), u("b")
    assert _rows(ops) == [
        (0, "append", 10, 20, a, ()),
        (1, "append", 30, 120, b, (a,)),
        (2, "append", 90, 100, GHOST, None),
        (3, "read", 110, 120, None, (a, b)),
        (4, "snapshot", 130, 140, None, "x"),
        (5, "snapshot?", 150, INF, ("u", "v"), None),
        (6, "snapshot-id", 190, 200, None, "y"),
        (7, "rollback", 210, 220, "x", None),
        (8, "rollback-missing", 230, 240, "z", None),
        (9, "rollback?", 270, INF, "v", None),
        (10, "list", 290, 300, None, frozenset({"u", "x", "y"})),
    ]
    # each op keeps its events: the invocation, and the completion where there is one
    assert [(o.inv.index if o.inv else None) for o in ops] == [0, 2, 8, 10, 12, 14, 18, 20, 22, 26, 28]
    assert [(o.comp.index if o.comp else None) for o in ops] == [1, 3, 9, 11, 13, 15, 19, 21, 23, 27, 29]


def test_an_unknown_snapshot_is_dropped_when_every_id_has_its_creator() -> None:
    """A ``snapshot?`` stands for the ids nothing created (a listing's, a rollback's); with
    none such it is left out (a fresh id it made is seen only by a listing, which would
    contradict it)."""
    h = H()
    h.snapshot(0, "s", "x")
    h.inv(0, "snapshot", "s")
    h.crash(0)
    h.rollback(1, "s", "x")
    h.list(1, "s", ["x"])
    ops = session_ops(_one(h), Evidence())
    assert [o.kind for o in ops] == ["snapshot", "rollback", "list"]
    assert [o.id for o in ops] == [0, 1, 2]


def test_an_unknown_append_a_read_shows_returns_by_that_read_not_before_its_invocation() -> None:
    """The unknown-outcome append's return is the earliest return of a read showing it
    (of three: the one invoked first returns last), never before its own invocation (a
    read that returned before it was invoked shows it: the return is its invocation)."""
    h = H()
    h.inv(0, "read", "s")  # 10: returns last, at 80
    h.inv(1, "append", "s", "a")  # 20
    h.inv(2, "read", "s")  # 30: returns at 40
    h.ok(2, ["a"])
    h.info(1)  # 50
    h.read(3, "s", ["a"])  # 60-70
    h.ok(0, ["a"])  # 80
    ops = session_ops(_one(h), Evidence())
    [app] = [o for o in ops if o.kind == "append"]
    assert (app.lo, app.hi, app.out) == (20, 40, ())
    # shown by a read that completed before the append was invoked: the invocation
    h = H()
    h.inv(0, "read", "s")  # 10
    h.ok(0, ["b"])  # 20
    h.inv(1, "append", "s", "b")  # 30
    h.info(1)
    ops = session_ops(_one(h), Evidence())
    [app] = [o for o in ops if o.kind == "append"]
    assert (app.lo, app.hi) == (30, 30)


def test_a_turn_appended_twice_has_no_known_state_to_apply_to() -> None:
    """A retried append (the same turn twice): which of the two a read shows is unknown,
    so neither has an ``out``; a turn appended once that a read shows after another turn
    is applied to the state the read shows before it, found where the read first shows it
    (a read past four new turns looks each up in order)."""
    h = H()
    h.append(0, "s", "a")
    h.append(0, "s", "a")
    h.append(0, "s", "b")
    h.read(1, "s", ["a", "b"])
    ops = session_ops(_one(h), Evidence())
    assert [(o.kind, o.arg, o.out) for o in ops if o.kind == "append"] == [
        ("append", u("a"), None),
        ("append", u("a"), None),
        ("append", u("b"), (u("a"),)),
    ]
    h = H()
    toks = ["a", "b", "c", "d", "e", "f"]
    for t in toks:
        h.append(0, "s", t)
    h.read(1, "s", ["a"])
    h.read(1, "s", toks)  # five turns new to this read
    h.read(1, "s", ["z", *toks])  # z: not appended, shown first here
    ops = session_ops(_one(h), Evidence())
    outs = [o.out for o in ops if o.kind == "append"]
    assert outs == [tuple(u(t) for t in toks[:n]) for n in range(6)]


def test_a_turn_shown_twice_by_the_first_read_showing_it_is_applied_at_its_first_place() -> None:
    """Where a read shows a turn twice (a duplicate), the append is applied to what
    precedes its first place: so for five new turns or more (looked up in order) as for
    fewer (looked up by ``index``)."""
    for toks in (["a", "b", "a"], ["a", "b", "c", "d", "e", "a"]):
        h = H()
        for t in dict.fromkeys(toks):
            h.append(0, "s", t)
        h.read(1, "s", toks)
        ops = session_ops(_one(h), Evidence())
        [first] = [o for o in ops if o.kind == "append" and o.arg == u("a")]
        assert first.out == ()


def test_an_unknown_append_a_later_read_shows_keeps_the_first_read_showing_it() -> None:
    """Reads extend one another: the one showing a turn first sets where its append is
    applied, a later one showing it again does not move it; and the earliest return
    among them bounds an unknown append."""
    h = H()
    h.append(0, "s", "a")
    h.inv(1, "append", "s", "b")  # 30
    h.info(1)
    h.read(2, "s", ["a", "b"])  # 50-60
    h.read(2, "s", ["a", "b"])  # 70-80
    h.read(2, "s", ["a", "b", "b"])  # 90-100
    ops = session_ops(_one(h), Evidence())
    assert _rows(ops)[:2] == [(0, "append", 10, 20, u("a"), ()), (1, "append", 30, 60, u("b"), (u("a"),))]


def test_values_that_break_the_format_make_the_session_unknown_or_unreadable() -> None:
    """An append or a rollback that may have taken effect with a value the model cannot
    hold raises ``_Unmodelled``; a failed one is ignored. A read or a listing that failed
    or returned malformed data is reported as unreadable (and left out); one of unknown
    outcome is ignored."""
    for value in (["user"], ["user", "a", "b"], [1, "a"], ["user", 1], 12, {"user": "a"}):
        for end in ("ok", "info", None):
            h = H()
            h.inv(0, "append", "s", value)
            if end == "ok":
                h.ok(0)
            elif end == "info":
                h.info(0)
            with pytest.raises(_Unmodelled):
                session_ops(_one(h), Evidence())
        h = H()
        h.inv(0, "append", "s", value)
        h.fail(0)
        assert session_ops(_one(h), Evidence()) == []
    h = H()
    h.inv(0, "append", "s", ("user", "a"))  # a tuple is a pair too
    h.ok(0)
    assert _rows(session_ops(_one(h), Evidence())) == [(0, "append", 10, 20, GHOST, None)]
    for sid in (1, None, ["x"]):
        for end in ("ok", "info", None):
            h = H()
            h.inv(0, "rollback", "s", sid)
            if end == "ok":
                h.ok(0)
            elif end == "info":
                h.info(0)
            with pytest.raises(_Unmodelled):
                session_ops(_one(h), Evidence())
        h = H()
        h.inv(0, "rollback", "s", sid)
        h.fail(0, "SnapshotNotFound: x")
        assert session_ops(_one(h), Evidence()) == []
    h = H()
    h.append(0, "s", "a")
    h.read(1, "s", "a")  # not a list
    h.read(1, "s", [["user"]])  # an item not a pair
    h.inv(1, "read", "s")
    h.fail(1)
    h.inv(1, "read", "s")
    h.info(1)
    h.inv(1, "read", "s")
    h.crash(1)
    for listed in ("x", ["x", 1]):  # not a list; an id not a string
        h.inv(1, "list_snapshots", "s")
        h.ok(1, listed)
    h.inv(1, "list_snapshots", "s")
    h.fail(1)
    h.inv(1, "list_snapshots", "s")
    h.info(1)
    h.list(1, "s", [])
    found = Evidence()
    ops = session_ops(_one(h), found)
    assert found.totals == {"unreadable": 6}
    assert [v.events[1].index for v in found.violations()] == [3, 5, 7, 12, 14, 16]
    assert _rows(ops) == [(0, "append", 10, 20, GHOST, None), (1, "list", 200, 210, None, frozenset())]


def test_a_listing_with_ids_nobody_created_makes_an_unknown_snapshot_stand_for_them() -> None:
    """The ids listed or targeted that no acknowledged snapshot created, sorted, are the
    ids an unknown snapshot may have created; a failed rollback's id is not among them."""
    h = H()
    h.inv(0, "snapshot", "s")
    h.info(0)
    h.snapshot(0, "s", "m")
    h.inv(0, "rollback", "s", "k")
    h.fail(0, "SnapshotNotFound: k")
    h.list(0, "s", ["q", "m", "b"])
    ops = session_ops(_one(h), Evidence())
    assert [(o.kind, o.arg) for o in ops] == [
        ("snapshot?", ("b", "q")),
        ("snapshot-id", None),
        ("rollback-missing", "k"),
        ("list", None),
    ]


def test_a_rollback_of_unknown_outcome_keeps_its_target_s_content() -> None:
    """A snapshot targeted only by a rollback of unknown outcome keeps its content (the
    rollback may have restored it); one targeted only by a listing does not."""
    h = H()
    h.snapshot(0, "s", "x")
    h.snapshot(0, "s", "y")
    h.inv(0, "rollback", "s", "x")
    h.crash(0)
    h.list(1, "s", ["x", "y"])
    ops = session_ops(_one(h), Evidence())
    assert [o.kind for o in ops] == ["snapshot", "snapshot-id", "rollback?", "list"]


def test_a_read_extending_the_one_before_only_if_its_items_start_alike() -> None:
    """The read before's items are reused only where this read is a list starting with
    exactly them; a read showing fewer items, or other ones, is parsed whole, and an
    unreadable read does not become the one later reads extend."""
    h = H()
    for t in "abc":
        h.append(0, "s", t)
    h.read(1, "s", ["a", "b"])
    h.read(1, "s", ["a"])  # shorter
    h.read(1, "s", ["b", "c"])  # other items
    h.read(1, "s", [["user", "b"], ["user", 2]])  # unreadable: b, then a bad item
    h.read(1, "s", ["b", "c", "a"])
    h.read(1, "s", (["user", "b"], ["user", "c"], ["user", "a"], ["user", "c"]))  # a tuple
    found = Evidence()
    ops = session_ops(_one(h), found)
    a, b, c = u("a"), u("b"), u("c")
    assert [o.out for o in ops if o.kind == "read"] == [(a, b), (a,), (b, c), (b, c, a), (b, c, a, c)]
    assert found.totals == {"unreadable": 1}


# ---------------------------------------------------------------------------------------
# _turns


def test_turns_reuse_the_appended_strings_and_name_the_others() -> None:
    """Pairs of strings (lists or tuples) become turns: an appended token with its role is
    that append's very string; another role or a token never appended makes a new turn.
    Anything else (not a sequence of pairs of strings, an unhashable token) is None."""
    ta, tb = "".join(["user", _SEP, "a"]), "".join(["assistant", _SEP, "b"])
    roles, turns = {"a": "user", "b": "assistant"}, {"a": ta, "b": tb}
    got = _turns([["user", "a"], ("assistant", "b")], roles, turns)
    assert got == (ta, tb) and got is not None and got[0] is ta and got[1] is tb
    got = _turns((("assistant", "b"),), roles, turns)
    assert got is not None and got[0] is tb
    got = _turns([["assistant", "a"], ["user", "q"], ["user", "a"]], roles, turns)
    assert got == (u("a", "assistant"), u("q"), ta) and got is not None and got[2] is ta
    # every token known, a role changed: another turn
    assert _turns([["assistant", "a"], ["assistant", "b"]], roles, turns) == (u("a", "assistant"), tb)
    assert _turns([], roles, turns) == ()
    assert _turns((), roles, turns) == ()
    for bad in (
        None,
        "ab",
        {"a": 1},
        [["user"]],
        [["user", "a", "x"]],
        [[1, "a"]],
        [["user", 1]],
        [["user", ["a"]]],
        [{"user", "a"}],
        [["user", "a"], "ua"],
        [["user", "a"], ["user"]],
    ):
        assert _turns(bad, roles, turns) is None, bad


# ---------------------------------------------------------------------------------------
# complete and replays


def test_complete_wants_each_completed_op_once_and_no_op_twice() -> None:
    ops = [op(0, "append", 0, 1, "a"), op(1, "append", 0, INF, "b"), op(2, "read", 2, 3, None, ())]
    assert complete([ops[0], ops[2]], ops)
    assert complete([ops[0], ops[1], ops[2]], ops)
    assert not complete([ops[0]], ops)  # the read is missing
    assert not complete([ops[0], ops[2], ops[0]], ops)  # a twice
    assert not complete([ops[1]], ops)
    assert complete([], [ops[1]])
    assert not complete([ops[1], ops[1]], [ops[1]])


def test_replays_checks_real_time_and_every_result_through_the_model() -> None:
    """An op that completed before one placed earlier was invoked breaks real time (one
    completing at that very instant does not); each op's result must be what the model
    gives; where an op leads to several states, any of them may go on."""
    a = op(0, "append", 0, 1, "a")
    r = op(1, "read", 2, 3, None, ("a",))
    assert replays([a, r]) and replays([])
    assert not replays([r, a])  # a completed (1) before the read was invoked (2)
    assert replays([op(0, "append", 5, 9, "a"), op(1, "read", 0, 5, None, ("a",))])  # at that instant
    assert not replays([op(0, "append", 5, 9, "a"), op(1, "read", 0, 4, None, ("a",))])
    # the latest invocation so far, not the last op's
    assert not replays([op(0, "append", 5, 9, "a"), op(1, "append", 0, 9, "b"), op(2, "read", 0, 4, None, ("a", "b"))])
    assert not replays([a, op(1, "read", 2, 3, None, ())])
    # an unknown snapshot may have created x or y; only y fits the listing, then x's
    # absence the rollback that was not found
    two = [
        op(0, "snapshot?", 0, INF, ("x", "y")),
        op(1, "list", 1, 2, None, frozenset({"y"})),
        op(2, "rollback-missing", 3, 4, "x"),
    ]
    assert replays(two)
    assert replays([two[0], op(1, "list", 1, 2, None, frozenset({"x"}))])
    assert not replays([*two, op(3, "list", 5, 6, None, frozenset({"x"}))])
    assert not replays([two[0], op(1, "list", 1, 2, None, frozenset())])


# ---------------------------------------------------------------------------------------
# Tally and Undecided


def test_a_tally_counts_and_names_what_it_did() -> None:
    """Searched: proven by a search plus refuted; the undecided sessions sorted by name,
    the first MAX_DETAIL of them described."""
    tally = Tally(proven=7, by_chain=3, refuted=2, explored=11)
    names = [f"s{n:02d}" for n in range(exact.MAX_DETAIL + 1)]
    for name in reversed(names):
        tally.give_up(SessionOps(name))
    stats = tally.stats()
    detail = stats.pop("sessions_unknown_detail")
    assert stats == {
        "sessions_proven": 7,
        "sessions_proven_without_search": 3,
        "sessions_refuted": 2,
        "sessions_searched": 6,
        "sessions_unknown": names,
        "states_explored": 11,
    }
    assert [d["session"] for d in detail] == names[: exact.MAX_DETAIL]
    assert detail[0] == {
        "session": "s00",
        "ops": 0,
        "ops_placed": 0,
        "share_placed": 0.0,
        "window": {"from_event": 0, "to_event": 0},
    }
    assert Tally().stats()["sessions_unknown_detail"] == []


def test_an_undecided_session_names_how_far_the_deepest_search_got() -> None:
    """The window runs from the invocation of the op the search could not place (else the
    session's first invocation) to its last event (a completion, or the invocation of an
    op that never completed); ``ops`` counts the model's ops, else the session's pairs."""
    h = H()
    h.inv(9, "read", "other")  # event 0, another session
    h.ok(9, [])
    h.append(0, "s", "a")  # 2-3
    h.inv(1, "append", "s", "b")  # 4, never completes
    h.read(2, "s", ["a"])  # 5-6
    h.snapshot(0, "s", "x")  # 7-8
    h.inv(0, "rollback", "s", "x")  # 9, never completes
    h.crash(0)
    h.inv(3, "list_snapshots", "s")  # 10
    h.crash(3)
    so = group_by_session(h.events)[0]["s"]
    assert Undecided.of(so, [], None) == Undecided("s", 6, 0, 2, 10)
    ops = session_ops(so, Evidence())
    stuck = ops[2]
    assert stuck.inv is not None and stuck.inv.index == 7
    out = Outcome(None, stuck=stuck, depth=3)
    got = Undecided.of(so, ops, out)
    assert got == Undecided("s", len(ops), 3, 7, 10)
    assert got.to_dict() == {
        "session": "s",
        "ops": len(ops),
        "ops_placed": 3,
        "share_placed": round(3 / len(ops), 3),
        "window": {"from_event": 7, "to_event": 10},
    }
    # an outcome naming no op: from the first invocation
    assert Undecided.of(so, ops, Outcome(None, depth=2)) == Undecided("s", len(ops), 2, 2, 10)
    # an op without events (built by hand): from the first invocation too
    assert Undecided.of(so, ops, Outcome(None, stuck=op(0, "read", 0, 1), depth=1)).from_event == 2
    h = H()
    h.append(0, "t", "a")
    h.read(1, "t", ["a"])
    so = _one(h)
    assert Undecided.of(so, [], None) == Undecided("t", 2, 0, 0, 3)
    assert Undecided("t", 3, 2, 0, 0).to_dict()["share_placed"] == 0.667
    assert Undecided("t", 0, 0, 0, 0).to_dict()["share_placed"] == 0.0


# ---------------------------------------------------------------------------------------
# Prover's budget


def test_the_prover_s_deadline_is_its_budget_plus_its_share_less_what_it_spent() -> None:
    """``total_s`` plus ``share`` of the time since the first decision, less the time
    spent; with no step limit a session gets at most half of that, or a second where
    half is less; never a deadline in the past."""
    p = Prover(total_s=10.0, share=0.5, _start=100.0, _spent=3.0)
    assert p._deadline(104.0) == 104.0 + 10.0 + 2.0 - 3.0
    p = Prover(total_s=10.0, share=0.5, session_steps=None, _start=100.0, _spent=3.0)
    assert p._deadline(104.0) == 104.0 + 9.0 / 2
    p = Prover(total_s=1.5, session_steps=None, _start=100.0)
    assert p._deadline(100.0) == 101.0
    p = Prover(total_s=0.5, session_steps=None, _start=100.0)
    assert p._deadline(100.0) == 100.5
    p = Prover(total_s=1.0, _start=100.0, _spent=4.0)
    assert p._deadline(100.0) == 100.0
    p = Prover(total_s=1.0, session_steps=None, _start=100.0, _spent=4.0)
    assert p._deadline(100.0) == 100.0
    p = Prover()
    now = p._begin()
    assert p._start == now and p._begin() >= now and p._start == now


def test_the_prover_reuses_what_it_built_only_for_the_same_session() -> None:
    """``judge`` takes ``prove_first``'s ops and search for that session only, and
    forgets them once used; the time spent adds up."""
    h = H()
    h.append(0, "s", "a")
    h.snapshot(0, "s", "x")
    h.append(0, "s", "b")
    h.rollback(0, "s", "x")
    h.read(1, "s", ["b"])  # b is lost: the fast rules say it, then judge
    so = _one(h)
    p = Prover()
    assert p.prove_first(so) is False
    assert p._tried is not None and p._tried[0] == "s"
    assert p._spent > 0
    found = Evidence()
    assert p.judge(so, found) is False
    assert p._tried is None and found.count() >= 1
    assert p.tally.refuted == 1 and p.tally.proven == 0
    # built for another session: not used
    p = Prover()
    assert p.prove_first(so) is False
    tried = p._tried
    assert tried is not None
    h2 = H()
    h2.append(0, "t", "a")
    h2.snapshot(0, "t", "x")
    h2.rollback(0, "t", "x")
    h2.read(1, "t", ["a"])
    assert p.judge(_one(h2), Evidence()) is True and p._tried is None
    assert (p.tally.proven, p.tally.refuted) == (1, 0)


# ---------------------------------------------------------------------------------------
# judge, on each of its ways


def _rolled_back(lost: bool) -> H:
    """a, a snapshot x of (a), b, a rollback to x, a read: of (a) (valid), or of (a, b)
    (b should be gone: no linearization)."""
    h = H()
    h.append(0, "s", "a")
    h.snapshot(0, "s", "x")
    h.append(0, "s", "b")
    h.rollback(0, "s", "x")
    h.read(1, "s", ["a", "b"] if lost else ["a"])
    return h


def test_judge_proves_refutes_or_names_a_session_undecided_and_counts_it() -> None:
    far = time.monotonic() + 60
    tally = Tally()
    found = Evidence()
    assert judge(_one(_rolled_back(False)), found, far, tally) is True
    assert found.count() == 0
    assert (tally.proven, tally.by_chain, tally.refuted, tally.unknown) == (1, 0, 0, [])
    assert tally.explored > 0
    explored = tally.explored
    assert judge(_one(_rolled_back(True)), found, far, tally) is False
    assert found.count() == 1
    assert (tally.proven, tally.by_chain, tally.refuted, tally.unknown) == (1, 0, 1, [])
    assert tally.explored > explored
    # without a rollback: decided without search, either way
    h = H()
    h.append(0, "s", "a")
    h.read(1, "s", ["a"])
    assert judge(_one(h), found, far, tally) is True
    assert (tally.proven, tally.by_chain, tally.refuted) == (2, 1, 1)
    h.read(1, "s", [])
    assert judge(_one(h), found, far, tally) is False
    assert (tally.proven, tally.by_chain, tally.refuted) == (2, 1, 2)
    assert found.count() == 2
    # no time left for the search a rollback needs: undecided, its ops counted
    assert judge(_one(_rolled_back(False)), found, time.monotonic() - 1, tally) is None
    assert tally.unknown == ["s"] and tally.undecided == [Undecided("s", 5, 0, 0, 9)]
    assert (tally.proven, tally.by_chain, tally.refuted) == (2, 1, 2)


def test_judge_names_an_unmodelled_session_unknown_and_an_unreadable_one_refuted() -> None:
    h = H()
    h.append(0, "s", "a")
    h.inv(0, "append", "s", ["user", 1])
    h.info(0)
    tally, found = Tally(), Evidence()
    assert judge(_one(h), found, time.monotonic() + 60, tally) is None
    assert tally.unknown == ["s"] and found.count() == 0
    assert tally.undecided == [Undecided("s", 2, 0, 0, 3)]  # the session's pairs
    assert (tally.proven, tally.refuted) == (0, 0)
    h = H()
    h.append(0, "s", "a")
    h.read(1, "s", "a")
    tally, found = Tally(), Evidence()
    assert judge(_one(h), found, time.monotonic() + 60, tally) is False
    assert found.totals == {"unreadable": 1}
    assert (tally.proven, tally.refuted, tally.unknown) == (0, 1, [])


# ---------------------------------------------------------------------------------------
# Prover.prove_first


def test_prove_first_proves_without_rollbacks_by_the_raw_pairs_and_counts_it() -> None:
    h = H()
    h.append(0, "s", "a")
    h.read(1, "s", ["a"])
    p = Prover()
    assert p.prove_first(_one(h)) is True
    assert (p.tally.proven, p.tally.by_chain, p.tally.explored) == (1, 1, 0)
    assert p._tried is None
    h.read(1, "s", [])
    assert p.prove_first(_one(h)) is False
    assert (p.tally.proven, p.tally.by_chain) == (1, 1)
    assert p._tried is None  # nothing built: no rollback
    stats = p.stats()
    assert stats["budget_s"] == 30.0 and stats["session_steps"] == exact.SESSION_STEPS
    assert stats["sessions_proven"] == 1


def test_prove_first_with_rollbacks_proves_by_the_chain_or_a_search() -> None:
    """A rollback of unknown outcome that need not have taken effect: the chain proves it;
    an acknowledged rollback: the lazy walk does, its states counted."""
    h = H()
    h.append(0, "s", "a")
    h.snapshot(0, "s", "x")
    h.inv(1, "rollback", "s", "x")
    h.info(1)
    h.read(1, "s", ["a"])
    p = Prover()
    assert p.prove_first(_one(h)) is True
    assert (p.tally.proven, p.tally.by_chain, p.tally.explored) == (1, 1, 0)
    p = Prover()
    assert p.prove_first(_one(_rolled_back(False))) is True
    assert (p.tally.proven, p.tally.by_chain) == (1, 0) and p.tally.explored > 0
    assert p._tried is None


def test_prove_first_keeps_what_it_built_for_a_session_it_cannot_prove() -> None:
    """Refuted or undecided, the session's ops and the walk's outcome are kept for
    ``judge`` (and nothing counted); with no time left, no search runs; an unreadable or
    unmodelled session keeps nothing (``judge`` reports it)."""
    p = Prover()
    so = _one(_rolled_back(True))
    assert p.prove_first(so) is False
    assert p._tried is not None
    name, tried = p._tried
    assert name == "s" and tried.ops == session_ops(so, Evidence())
    # the walk undecided, the frontier search's first steps refute it: nothing to resume
    assert tried.quick is not None and tried.quick.ok is False and tried.frontier is None
    assert (p.tally.proven, p.tally.refuted, p.tally.explored) == (0, 0, 0)
    p = Prover(total_s=0.0)
    assert p.prove_first(so) is False
    assert p._tried is not None and p._tried[1].quick is None and p._tried[1].frontier is None
    h = _rolled_back(False)
    h.read(1, "s", "a")
    p = Prover()
    assert p.prove_first(_one(h)) is False and p._tried is None
    h = _rolled_back(False)
    h.inv(0, "append", "s", [1, 2])
    h.ok(0)
    p = Prover()
    assert p.prove_first(_one(h)) is False and p._tried is None


def test_prove_first_runs_the_frontier_search_where_the_walk_does_not_decide(monkeypatch: pytest.MonkeyPatch) -> None:
    """The walk undecided: the frontier search's first steps prove the session (their
    states counted); with fewer steps than it needs, the run is kept to be resumed."""
    monkeypatch.setattr(exact, "_quick_walk", lambda ops, deadline: Outcome(None, explored=1000))
    p = Prover()
    assert p.prove_first(_one(_rolled_back(False))) is True
    assert p.tally.proven == 1 and 0 < p.tally.explored < 1000
    p = Prover()
    so = _one(_rolled_back(True))
    assert p.prove_first(so) is False
    assert p._tried is not None and p._tried[1].frontier is None  # refuted: nothing to resume
    assert p._tried[1].quick is not None and p._tried[1].quick.ok is False
    assert p.judge(so, Evidence()) is False and p.tally.refuted == 1


# ---------------------------------------------------------------------------------------
# the budgets the searches get


def _overlapping() -> H:
    """a, b, c, d, e, f; g (appended across h and i); a read of all: ops pending at the
    invocations 1 (six times), 1, 2, 2, 1, a mean of exactly QUICK_MAX_OVERLAP (1.2)."""
    h = H()
    for tok in "abcdef":
        h.append(0, "s", tok)
    h.inv(1, "append", "s", "g")
    for tok in "hi":
        h.append(0, "s", tok)
    h.ok(1)
    h.read(2, "s", [*"abcdefghi"])
    return h


def test_the_walk_is_tried_up_to_its_overlap_with_its_steps(monkeypatch: pytest.MonkeyPatch) -> None:
    """At a mean overlap of QUICK_MAX_OVERLAP the walk is tried, with QUICK_PER_OP steps
    per op plus 256, at most QUICK_STEPS; past it, not at all."""
    ops = session_ops(_one(_overlapping()), Evidence())
    assert exact._overlap(ops) == exact.QUICK_MAX_OVERLAP
    far = time.monotonic() + 60
    out = exact._quick_walk(ops, far)
    assert out.ok is True and out.explored > 0
    calls: list[tuple[Any, ...]] = []

    def spy(ops: Any, deadline: float, max_steps: int = 0, lazy: bool = False) -> Outcome:
        calls.append((len(ops), deadline, max_steps, lazy))
        return Outcome(None)

    monkeypatch.setattr(exact, "linearize", spy)
    exact._quick_walk(ops, far)
    many = [op(n, "read", 2 * n, 2 * n + 1, None, ()) for n in range(5000)]
    exact._quick_walk(many, far)
    assert calls == [(10, far, 2 * 10 + 256, True), (5000, far, exact.QUICK_STEPS, True)]
    # one more op pending: skipped
    h = _overlapping()
    h.inv(3, "read", "s")
    h.inv(4, "read", "s")
    h.ok(3, [*"abcdefghi"])
    h.ok(4, [*"abcdefghi"])
    ops = session_ops(_one(h), Evidence())
    assert exact._overlap(ops) > exact.QUICK_MAX_OVERLAP
    assert exact._quick_walk(ops, far) == Outcome(None)
    assert len(calls) == 2


def test_the_frontier_search_s_first_steps_are_fifty_per_op(monkeypatch: pytest.MonkeyPatch) -> None:
    """``prove_first`` gives the frontier search FRONTIER_FIRST_PER_OP steps per op plus
    256, at most the session's steps (no limit but a huge one when those are None)."""
    monkeypatch.setattr(exact, "_quick_walk", lambda ops, deadline: Outcome(None))
    caps: list[int] = []

    def spy(run: Any, deadline: float, until: int) -> Outcome | None:
        caps.append(until)
        run.close()
        return None

    monkeypatch.setattr(exact, "advance", spy)
    so = _one(_rolled_back(False))
    for steps in (exact.SESSION_STEPS, 300, None):
        p = Prover(session_steps=steps)
        assert p.prove_first(so) is False
        assert p._tried is not None and p._tried[1].frontier is not None
    n = 5 * exact.FRONTIER_FIRST_PER_OP + 256
    assert caps == [n, 300, n]


def test_the_searches_get_their_caps_and_stop_at_the_deadline(monkeypatch: pytest.MonkeyPatch) -> None:
    """The frontier search in both orders gets ``steps``, the just-in-time one JIT_STEPS,
    the eager one EAGER_STEPS; with ``steps`` None, no cap but a huge one; no turn runs
    past the deadline. A proof ends the searches (the others closed)."""
    ops = session_ops(_one(_rolled_back(False)), Evidence())
    seen: list[tuple[int, float]] = []

    def spy(run: Any, deadline: float, until: int) -> tuple[Outcome | None, bool]:
        seen.append((until, deadline))
        return lin.resume(run, deadline, until) if len(seen) == 4 else (None, True)

    monkeypatch.setattr(exact, "resume", spy)
    far = time.monotonic() + 60
    tries = exact._searches(ops, far, 77, Outcome(None))
    assert [u_ for u_, _ in seen] == [77, exact.JIT_STEPS, 77, exact.EAGER_STEPS]
    assert all(d <= far for _, d in seen)
    assert [t.ok for t in tries] == [None, None, None, None, True]
    seen.clear()
    tries = exact._searches(ops, far, None, Outcome(None))
    assert [u_ for u_, _ in seen] == [1 << 62] * 4
    assert tries[-1].ok is True
    # a walk that decided: no other search
    seen.clear()
    done = Outcome(True, explored=3)
    assert exact._searches(ops, far, 77, done) == [done]
    assert seen == []


# ---------------------------------------------------------------------------------------
# check_exact


class _Clock:
    """A ``time`` module whose clock moves only when told."""

    def __init__(self, now: float) -> None:
        self.now = now

    def monotonic(self) -> float:
        return self.now


def test_check_exact_gives_each_session_twice_a_fair_share_of_what_is_left(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each session's deadline: twice what is left over the sessions still to decide, at
    most the run's deadline; the sessions in ``skip`` are not judged; past the deadline a
    session is named undecided without a try."""
    clock = _Clock(100.0)
    monkeypatch.setattr(exact, "time", clock)
    got: list[tuple[str, float]] = []

    def fake(so: SessionOps, found: Evidence, deadline: float, tally: Tally) -> bool:
        got.append((so.session, deadline))
        clock.now += 3.0
        return True

    monkeypatch.setattr(exact, "judge", fake)
    h = H()
    for s in ("s1", "s2", "s3", "s4", "s5"):
        h.append(0, s, "a")
    res = exact.check_exact(h.events, budget_s=12.0, skip={"s2"})
    # s1: 2 x 12 / 4 = 6; s3: 2 x 9 / 3 = 6; s4: 2 x 6 / 2 = 6 (at 106 + 6 = 112); s5: 3
    assert got == [("s1", 106.0), ("s3", 109.0), ("s4", 112.0), ("s5", 112.0)]
    assert res.valid is True and res.stats["sessions_unknown"] == []
    got.clear()
    clock.now = 100.0
    res = exact.check_exact(h.events, budget_s=7.0)  # 3 s each: s4 and s5 past the deadline
    assert [s for s, _ in got] == ["s1", "s2", "s3"]
    assert res.valid is None and res.stats["sessions_unknown"] == ["s4", "s5"]
    got.clear()
    clock.now = 100.0
    res = exact.check_exact(h.events, budget_s=6.0)  # s3 at exactly the deadline: judged
    assert [s for s, _ in got] == ["s1", "s2", "s3"] and got[-1] == ("s3", 106.0)
    # the seconds spent, to the microsecond; the default budget: 30 s
    clock.now = 100.0
    monkeypatch.setattr(exact, "judge", lambda so, found, deadline, tally: setattr(clock, "now", clock.now + 0.4000004))
    res = exact.check_exact(h.events, skip={"s1", "s2", "s3", "s4"})
    assert res.stats["seconds"] == 0.4 and res.stats["budget_s"] == 30.0


def test_check_exact_s_verdict_and_stats() -> None:
    """False where a session is refuted (even beside an undecided one), None where one is
    undecided and none refuted, True where every one is proven; the stats say so."""
    h = H()
    h.append(0, "s1", "a")
    h.read(1, "s1", ["a"])
    h.append(0, "s2", "b")
    h.read(1, "s2", [])
    res = exact.check_exact(h.events, budget_s=30.0)
    assert res.valid is False and res.totals == {"lost-turn": 1}
    stats = dict(res.stats)
    assert stats.pop("seconds") >= 0
    assert stats.pop("sessions_unknown_detail") == []
    assert stats == {
        "checker": "exact",
        "ops": 4,
        "sessions": 2,
        "sessions_proven": 1,
        "sessions_proven_without_search": 1,
        "sessions_refuted": 1,
        "sessions_searched": 1,
        "sessions_unknown": [],
        "states_explored": 0,
        "budget_s": 30.0,
        "violations_by_kind": {"lost-turn": 1},
    }
    assert [v.kind for v in res.violations] == ["lost-turn"]
    assert exact.check_exact(h.events, skip={"s2"}).valid is True
    h.inv(0, "append", "s3", ["user", 5])  # unmodelled: undecided
    h.ok(0)
    assert exact.check_exact(h.events).valid is False
    res = exact.check_exact(h.events, skip={"s2"})
    assert res.valid is None and res.stats["sessions_unknown"] == ["s3"]


# ---------------------------------------------------------------------------------------
# what a refutation says: _kind, _seq, _backward, _explain


def test_the_kind_of_a_violation_is_read_off_the_op_that_could_not_be_placed() -> None:
    a, b, c = u("a"), u("b"), u("c")
    rb = op(9, "rollback", 0, 1, "x")
    missing = op(8, "rollback-missing", 0, 1, "x")
    read = op(0, "read", 0, 1, None, (a, c))
    detail = "returned ['a', 'c'] (2 items) where the model holds ['a', 'b'] (2 items)"
    assert exact._kind(read, (a, b), set(), [read]) == ("lost-turn", detail)
    assert exact._kind(read, (a, b), set(), [read, missing]) == ("lost-turn", detail)
    assert exact._kind(read, (a, b), set(), [read, rb]) == ("bad-rollback", detail)
    maybe = op(9, "rollback?", 0, INF, "x")
    assert exact._kind(read, (a, b), set(), [read, maybe])[0] == "bad-rollback"
    # nothing missing, something extra
    assert exact._kind(read, (a,), set(), [read])[0] == "phantom-turn"
    assert exact._kind(read, (a,), set(), [read, rb])[0] == "bad-rollback"
    assert exact._kind(read, (a,), set(), [read, missing])[0] == "phantom-turn"
    # the same turns in another order
    assert exact._kind(read, (c, a), set(), [read, rb])[0] == "reordered-turns"
    for kind in ("list", "rollback-missing", "snapshot", "snapshot-id"):
        assert exact._kind(op(0, kind, 0, 1, "x", "x"), (), {"y", "x"}, []) == (
            "vanished-checkpoint",
            "is inconsistent with the snapshots ['x', 'y'] (2 items)",
        )
    assert exact._kind(op(0, "rollback", 0, 1, "x"), (), set(), []) == (
        "bad-rollback",
        "targets 'x', which the model does not hold",
    )
    for kind in ("append", "snapshot?", "rollback?"):
        assert exact._kind(op(0, kind, 0, 1, "x"), (), set(), []) == (
            "lost-turn",
            "cannot precede the results that followed it",
        )


def test_a_sequence_is_named_by_its_first_six_items_and_its_length() -> None:
    assert exact._seq([]) == "[] (0 items)"
    assert exact._seq([u("a")]) == "['a'] (1 item)"
    assert exact._seq((GHOST, u("b", "assistant"))) == "[<a turn no read shows>, 'b'] (2 items)"
    toks = [u(t) for t in "abcdefg"]
    assert exact._seq(toks) == "['a', 'b', 'c', 'd', 'e', 'f', …] (7 items)"
    assert exact._seq(toks[:6]) == "['a', 'b', 'c', 'd', 'e', 'f'] (6 items)"
    assert exact._seq(toks, limit=2) == "['a', 'b', …] (7 items)"
    assert exact._seq([u("x" * 30)]) == f"['{'x' * 23}…'] (1 item)"
    assert exact._seq([1, "a" + _SEP + "b" + _SEP + "c"]) == "['1', 'c'] (2 items)"
    assert exact._bare(u("tok")) == "tok" and exact._bare("plain") == "plain"


def _backward_events() -> list[Any]:
    h = H()
    h.append(0, "s", "a")  # 0-1
    h.append(1, "s", "b")  # 2-3
    h.read(2, "s", ["b", "a"])  # 4-5
    h.read(3, "s", ["b"])  # 6-7
    return h.events


def test_a_backward_pair_is_told_by_the_kinds_of_its_two_ops() -> None:
    """Two appends with a read showing them reversed: reordered turns; with a witness not
    showing the later one, or none: lost turn; an append before a read that does not show
    it: lost turn; two reads, the later showing less: lost turn (the first turn it lacks);
    a read before the append of a turn it shows: phantom turn."""
    ev = _backward_events()
    a = ModelOp(0, "append", 10, 20, u("a"), None, ev[0], ev[1])
    b = ModelOp(1, "append", 30, 40, u("b"), None, ev[2], ev[3])
    r_ba = ModelOp(2, "read", 50, 60, None, (u("b"), u("a")), ev[4], ev[5])
    r_b = ModelOp(3, "read", 70, 80, None, (u("b"),), ev[6], ev[7])

    def said(later: ModelOp, earlier: ModelOp, witness: ModelOp | None) -> Any:
        found = Evidence()
        exact._backward("s", Backward(later, earlier, witness), found)
        [v] = found.violations()
        return v.kind, v.message, [e.index if e is not None else None for e in v.events]

    kind, msg, evs = said(a, b, r_ba)
    assert kind == "reordered-turns"
    assert msg == (
        "Turn 'a' was acknowledged (process 0 at event 1) before the append of turn 'b' "
        "was invoked (process 1 at event 2), yet the read by process 2 at event 5 "
        "shows 'b' before 'a'."
    )
    assert evs == [0, 1, 2, 3, 4, 5]
    kind, msg, evs = said(a, b, r_b)
    assert kind == "lost-turn"
    assert msg == (
        "Turn 'a' was acknowledged (process 0 at event 1) before the append of turn 'b' "
        "was invoked (process 1 at event 2), yet the read by process 3 at event 7 "
        "shows 'b' and does not contain 'a', and no rollback can explain it."
    )
    assert evs == [0, 1, 2, 3, 6, 7]
    kind, msg, evs = said(a, r_b, None)
    assert kind == "lost-turn"
    assert msg == (
        "Turn 'a' was acknowledged (process 0 at event 1) before the read by process 3 "
        "at event 7 was invoked (event 6), yet that read does not contain it, and no "
        "rollback can explain it."
    )
    assert evs == [0, 1, 6, 7]
    kind, msg, evs = said(r_ba, r_b, None)
    assert kind == "lost-turn"
    assert msg == (
        "Turn 'a' was shown by the read by process 2 at event 5, which completed before "
        "the read by process 3 at event 7 was invoked (event 6), yet that later read "
        "does not contain it, and no rollback can explain it."
    )
    kind, msg, evs = said(r_b, b, None)
    assert kind == "phantom-turn"
    assert msg == (
        "Turn 'b' is shown by the read by process 3 at event 7, which completed before "
        "that turn's append was invoked (process 1 at event 2)."
    )
    assert evs == [2, 3, 6, 7]  # the evidence in the order of the history
    found = Evidence()
    exact._backward("s", Backward(a, b, r_ba), found)
    assert found.blamed == {1} and found.has("reordered-turns", "s", ("chain", 0, 1))


def _valid_pair() -> tuple[SessionOps, list[ModelOp]]:
    """A session the fast rules pass (a, then a read of (a)), and its ops."""
    h = H()
    h.append(0, "s", "a")
    h.read(1, "s", ["a"])
    so = _one(h)
    return so, session_ops(so, Evidence())


def _said(so: SessionOps, ops: list[ModelOp], why: Any) -> list[tuple[str, str]]:
    found = Evidence()
    exact._explain(so, ops, why, found)
    return [(v.kind, v.message) for v in found.violations()]


def test_a_search_s_refutation_names_the_op_it_could_not_place_and_the_state() -> None:
    so, ops = _valid_pair()
    head = "No order of the 2 operations on session 's' that respects real time explains their results: "
    why = Outcome(False, stuck=ops[1], state=((), ()), depth=1)
    assert _said(so, ops, why) == [
        (
            "phantom-turn",
            head
            + (
                "after placing 1 of them the search could not place the read by process 1 at event 3, "
                "which returned ['a'] (1 item) where the model holds [] (0 items)."
            ),
        )
    ]
    found = Evidence()
    exact._explain(so, ops, why, found)
    assert found.blamed == {3} and found.has("phantom-turn", "s", ("exact", 1))
    assert [e.index for e in found.violations()[0].events] == [2, 3]
    # a lazy state (turns, ids, contents, windows) and an eager one (turns, snapshots)
    listing = ModelOp(1, "list", 0, 1, None, frozenset(), None, None)
    for state in (((), frozenset({"x"}), (), ()), ((), (("x", ()),))):
        why = Outcome(False, stuck=listing, state=state, depth=0)  # type: ignore[arg-type]
        assert _said(so, ops, why) == [
            (
                "vanished-checkpoint",
                head
                + (
                    "after placing 0 of them the search could not place the list by op 1, which is "
                    "inconsistent with the snapshots ['x'] (1 item)."
                ),
            )
        ]
    unknown = ModelOp(1, "snapshot?", 0, INF, ("x",), None, ops[1].inv, None)
    why = Outcome(False, stuck=unknown, state=((), ()), depth=0)
    assert _said(so, ops, why)[0][1].endswith(
        "could not place the snapshot by op 1, which cannot precede the results that followed it."
    )


def test_a_refutation_naming_no_op_is_searched_again_for_one() -> None:
    """The chain's UNORDERED or ``"ids"``, a search's outcome naming no op, a backward
    pair whose later op is an append of unknown outcome: the eager search names the op."""
    so, ops = _valid_pair()
    bad = [ops[0], ModelOp(1, "read", ops[1].lo, ops[1].hi, None, (), ops[1].inv, ops[1].comp)]
    want = [
        (
            "lost-turn",
            "No order of the 2 operations on session 's' that respects real time explains "
            "their results: after placing 1 of them the search could not place the read by process 1 "
            "at event 3, which returned [] (0 items) where the model holds ['a'] (1 item).",
        )
    ]
    assert _said(so, bad, UNORDERED) == want
    assert _said(so, bad, "ids") == want
    assert _said(so, bad, Outcome(False)) == want
    lost = ModelOp(0, "append", 10, INF, u("a"), None, ops[0].inv, None)
    assert _said(so, bad, Backward(lost, bad[1], None)) == want
    info = ModelOp(0, "append", 10, INF, u("a"), None, ops[0].inv, ops[1].inv)  # not "ok"
    assert _said(so, bad, Backward(info, bad[1], None)) == want
    # an acknowledged append or a read as the later op: the pair says it
    [(kind, msg)] = _said(so, bad, Backward(bad[0], bad[1], None))
    assert kind == "lost-turn" and msg.startswith("Turn 'a' was acknowledged (process 0 at event 1) before the read")
    shown = ModelOp(2, "read", 0, 5, None, (u("a"),), bad[1].inv, bad[1].comp)
    [(kind, msg)] = _said(so, bad, Backward(shown, bad[1], None))
    assert kind == "lost-turn" and msg.startswith("Turn 'a' was shown by the read by process 1 at event 3")


def test_what_the_fast_rules_prove_comes_first_and_alone() -> None:
    """Where the fast rules find violations on the session, they are the explanation (not
    their unreadable ones, reported already); the exact search adds none."""
    h = H()
    h.append(0, "s", "a")
    h.read(1, "s", [])
    h.read(1, "s", "junk")
    so = _one(h)
    ops = session_ops(so, Evidence())
    found = Evidence()
    exact._explain(so, ops, UNORDERED, found)
    assert found.totals == {"lost-turn": 1}
    [v] = found.violations()
    assert found.has("lost-turn", "s", ("fast", v.message))
    # only an unreadable one: the search explains
    h = H()
    h.append(0, "s", "a")
    h.read(1, "s", "junk")
    so = _one(h)
    ops = session_ops(so, Evidence())
    bad = [ops[0], ModelOp(1, "read", 30, 40, None, (), h.events[2], h.events[3])]
    assert [k for k, _ in _said(so, bad, UNORDERED)] == ["lost-turn"]


class _Run:
    """A stand-in for a resumable search, named, that says whether it was closed."""

    def __init__(self, name: str, depth: int) -> None:
        self.name, self.depth, self.closed = name, depth, False

    def close(self) -> None:
        self.closed = True


def _fake_searches(
    monkeypatch: pytest.MonkeyPatch, script: dict[tuple[str, int], Any], peaks: list[float] | None = None
) -> tuple[_Clock, list[Any], dict[str, _Run]]:
    """The four searches replaced by named stand-ins on a clock that moves only when a
    stand-in is resumed: ``script[(name, turn)]`` is (seconds it takes, what it returns)."""
    clock = _Clock(100.0)
    monkeypatch.setattr(exact, "time", clock)
    calls: list[Any] = []
    made: dict[str, _Run] = {}
    turns: dict[str, int] = {}

    def make(name: str, depth: int, n_ops: int) -> _Run:
        calls.append(("begin", name, n_ops))
        made[name] = _Run(name, depth)
        return made[name]

    def frontier(ops: Any, early: bool = False, ahead: float | None = None) -> _Run:
        # the search trying early ops first is begun here, for a session the first
        # steps did not decide: it looks ahead from the start; the other is resumed
        assert ahead == (0 if early else None), (early, ahead)
        return make("E", 4, len(ops)) if early else make("F", 2, len(ops))

    monkeypatch.setattr(exact, "begin_frontier", frontier)
    monkeypatch.setattr(exact, "begin_jit", lambda ops: make("J", 3, len(ops)))
    monkeypatch.setattr(exact, "begin_eager", lambda ops: make("G", 1, len(ops)))
    monkeypatch.setattr(exact, "stop", lambda run: Outcome(None, depth=run.depth))
    peak = iter(peaks or [])
    monkeypatch.setattr(exact, "_peak_mb", lambda: next(peak, 0.0))

    def resume(run: _Run, deadline: float, cap: int) -> tuple[Outcome | None, bool]:
        turns[run.name] = turns.get(run.name, 0) + 1
        calls.append((run.name, round(deadline, 9), cap))
        took: float = script[(run.name, turns[run.name])][0]
        got: tuple[Outcome | None, bool] = script[(run.name, turns[run.name])][1]
        clock.now += took
        return got

    monkeypatch.setattr(exact, "resume", resume)
    return clock, calls, made


def test_the_searches_take_turns_each_for_its_share_of_the_time(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each turn a search may run until its share of QUANTUM_S times the turn's number,
    less the time it used in earlier turns (the first search twice the others' share); one
    out of steps is stopped and the others go on; one that decides ends them all."""
    refuted = Outcome(False, depth=3)
    script = {
        ("F", 1): (0.05, (None, False)),
        ("J", 1): (0.01, (None, False)),
        ("E", 1): (0.0, (None, False)),
        ("G", 1): (0.0, (None, False)),
        ("F", 2): (0.0, (None, False)),
        ("J", 2): (0.0, (None, True)),
        ("E", 2): (0.0, (refuted, False)),
    }
    _, calls, made = _fake_searches(monkeypatch, script)
    ops = [op(0, "append", 0, 1, "a")]
    walk = Outcome(None, depth=0)
    tries = exact._searches(ops, 1000.0, 77, walk)
    assert calls == [
        ("begin", "F", 1),
        ("begin", "J", 1),
        ("begin", "E", 1),
        ("begin", "G", 1),
        ("F", 100.02, 77),
        ("J", 100.06, exact.JIT_STEPS),
        ("E", 100.07, 77),
        ("G", 100.07, exact.EAGER_STEPS),
        ("F", 100.05, 77),
        ("J", 100.07, exact.JIT_STEPS),
        ("E", 100.08, 77),
    ]
    assert tries == [walk, Outcome(None, depth=3), refuted]
    assert tries[0] is walk and tries[2] is refuted
    assert made["F"].closed and made["G"].closed and not made["J"].closed and not made["E"].closed


def test_the_searches_stop_at_the_deadline_or_past_their_memory(monkeypatch: pytest.MonkeyPatch) -> None:
    """Past the deadline a search that ran out of time is stopped (the others go on); at
    exactly SEARCH_MEMORY_MB over the peak at the start they go on, past it all stop."""
    script = {
        ("F", 1): (0.0, (None, False)),
        ("J", 1): (0.0, (None, False)),
        ("E", 1): (0.5, (None, False)),
        ("G", 1): (0.0, (Outcome(True), False)),
    }
    _, calls, made = _fake_searches(monkeypatch, script)
    frontier = _Run("F", 9)
    made["F"] = frontier
    tries = exact._searches([], 100.2, None, Outcome(None), frontier)  # type: ignore[arg-type]
    big = 1 << 62
    assert calls == [
        ("begin", "J", 0),
        ("begin", "E", 0),
        ("begin", "G", 0),
        ("F", 100.02, big),
        ("J", 100.01, big),
        ("E", 100.01, big),
        ("G", 100.2, big),
    ]
    assert [t.ok for t in tries] == [None, None, True] and tries[1].depth == 4
    # at the limit, then past it
    script = {("F", 1): (0.0, (None, False)), ("J", 1): (0.0, (None, False))}
    _, calls, made = _fake_searches(
        monkeypatch, script, peaks=[10.0, 10.0 + exact.SEARCH_MEMORY_MB, 10.5 + exact.SEARCH_MEMORY_MB]
    )
    tries = exact._searches([], 1000.0, 5, Outcome(None))
    assert [c[0] for c in calls if c[0] != "begin"] == ["F", "J"]
    assert [t.depth for t in tries] == [0, 2, 3, 4, 1]  # the walk's, then each search stopped
    assert not any(r.closed for r in made.values())


def test_check_exact_leaves_the_solver_the_time_the_searches_do_not_use(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """With no step caps (``check --exact``) and a session with rollbacks the solver covers,
    the four searches run until half the time is gone, then the solver gets the rest; its
    verdict is the last outcome, and a refutation names the deepest search's dead end."""
    script = {(name, 1): (60.0 if name == "F" else 0.0, (None, False)) for name in "FJEG"}
    _, calls, _ = _fake_searches(monkeypatch, script)
    asked: list[Any] = []

    def solve(ops: Any, deadline: float) -> Outcome:
        asked.append((len(ops), deadline))
        return Outcome(False)

    monkeypatch.setattr(exact.smt, "available", lambda: True)
    monkeypatch.setattr(exact.smt, "decide", solve)
    ops = [op(0, "snapshot", 0, 1, None, "1"), op(1, "rollback", 2, 3, "1"),
           op(2, "read", 4, 5, None, ())]
    tries = exact._searches(ops, 200.0, None, Outcome(None))
    assert [c[1] for c in calls if c[0] == "J"] == [150.0]  # half of the 100 s left
    assert asked == [(3, 200.0)]
    assert tries[-1] == Outcome(False, depth=4)  # "E" went deepest
    # a rollback of either outcome makes a session the solver's, even alone
    for alone in ([op(0, "rollback?", 0, INF, "1")], [op(0, "rollback", 0, 1, "1")]):
        _fake_searches(monkeypatch, script)
        exact._searches(alone, 200.0, None, Outcome(None))
    assert asked == [(3, 200.0), (1, 200.0), (1, 200.0)]
    asked.clear()
    # the default check (step caps) never asks the solver, nor does a session it does not
    # cover: the searches have all the time (the first takes it all)
    script[("F", 1)] = (150.0, (None, False))
    _fake_searches(monkeypatch, script)
    assert exact._searches(ops, 200.0, 5, Outcome(None))[-1].ok is None
    _fake_searches(monkeypatch, script)
    assert exact._searches([*ops, op(3, "snapshot?", 6, INF, frozenset({"2"}))], 200.0, None,
                           Outcome(None))[-1].ok is None
    assert asked == []


def test_without_a_walk_s_outcome_the_searches_start_with_the_walk(monkeypatch: pytest.MonkeyPatch) -> None:
    walked: list[Any] = []
    done = Outcome(True, explored=4)

    def walk(ops: Any, deadline: float) -> Outcome:
        walked.append((ops, deadline))
        return done

    monkeypatch.setattr(exact, "_quick_walk", walk)
    ops = [op(0, "append", 0, 1, "a")]
    assert exact._searches(ops, 123.0, 5, None) == [done]
    assert walked == [(ops, 123.0)]


def test_judge_passes_what_was_built_and_reads_the_last_outcome(monkeypatch: pytest.MonkeyPatch) -> None:
    """``judge`` hands the searches the session's ops, its deadline and steps, and what
    ``prove_first`` built; the last outcome is the verdict, every one's states counted,
    and an undecided session is named with the deepest."""
    so = _one(_rolled_back(False))
    ops = session_ops(so, Evidence())
    proof = linearize(ops, time.monotonic() + 60)
    assert proof.ok is True
    got: list[Any] = []
    answer: list[Outcome] = []

    def searches(*args: Any) -> list[Outcome]:
        got.append(args)
        return answer

    monkeypatch.setattr(exact, "_searches", searches)
    far = time.monotonic() + 60
    stuck = ops[3]
    answer[:] = [
        Outcome(None, depth=1, explored=2),
        Outcome(None, stuck=stuck, depth=4, explored=3),
        Outcome(None, depth=2, explored=5),
    ]
    tally = Tally()
    assert judge(so, Evidence(), far, tally, 9) is None
    assert got == [(ops, far, 9, None, None)]
    assert tally.explored == 10 and tally.unknown == ["s"]
    assert stuck.inv is not None
    assert tally.undecided == [Undecided("s", 5, 4, stuck.inv.index, 9)]
    answer[:] = [Outcome(None, explored=1), Outcome(None, explored=1), proof]
    assert judge(so, Evidence(), far, tally) is True
    assert tally.proven == 1 and tally.explored == 12 + proof.explored
    walk, run = Outcome(None, explored=1), _Run("F", 0)
    tried = exact._Tried(ops, walk, run)  # type: ignore[arg-type]
    got.clear()
    answer[:] = [walk, Outcome(False, stuck=ops[4], state=((u("a"),), ()), depth=4)]
    found = Evidence()
    assert judge(so, found, far, tally, 9, tried=tried) is False
    assert got == [(ops, far, 9, walk, run)]
    assert tally.refuted == 1 and found.count() == 1


# ---------------------------------------------------------------------------------------
# counts added to a tally that counted before; the time a prover spends


def counts(t: Tally) -> tuple[int, int, int]:
    return (t.proven, t.by_chain, t.refuted)


def test_each_way_adds_one_to_a_tally_that_counted_before() -> None:
    far = time.monotonic() + 60
    h = H()
    h.append(0, "s", "a")
    h.read(1, "s", ["a"])
    for so, want in (
        (_one(h), (4, 4, 3)),
        (_one(_rolled_back(False)), (4, 3, 3)),
        (_one(_rolled_back(True)), (3, 3, 4)),
    ):
        tally = Tally(proven=3, by_chain=3, refuted=3, explored=5)
        assert judge(so, Evidence(), far, tally) is (want[2] == 3)
        assert counts(tally) == want
        assert tally.explored >= 5
    tally = Tally(proven=3, by_chain=3, refuted=3, explored=5)
    assert judge(_one(_rolled_back(False)), Evidence(), far, tally) is True
    assert tally.explored > 5 + 1
    h.read(1, "s", "junk")
    tally = Tally(proven=3, by_chain=3, refuted=3)
    assert judge(_one(h), Evidence(), far, tally) is False
    assert counts(tally) == (3, 3, 4)
    for so, want in ((_one(_rolled_back(False)), (4, 3, 3)), (SessionOps("s"), (4, 4, 3))):
        p = Prover(tally=Tally(proven=3, by_chain=3, refuted=3, explored=5))
        assert p.prove_first(so) is True
        assert counts(p.tally) == want
    h = H()
    h.append(0, "s", "a")
    h.snapshot(0, "s", "x")
    h.inv(1, "rollback", "s", "x")
    h.info(1)
    h.read(1, "s", ["a"])
    p = Prover(tally=Tally(proven=3, by_chain=3, refuted=3, explored=5))
    assert p.prove_first(_one(h)) is True and counts(p.tally) == (4, 4, 3) and p.tally.explored == 5
    p = Prover(tally=Tally(proven=3, by_chain=3, refuted=3, explored=5))
    assert p.prove_first(_one(_rolled_back(False))) is True and p.tally.explored > 5 + 1


def test_a_session_the_chain_refutes_is_not_searched_before_the_fast_rules() -> None:
    """A failed rollback (not found) and a lost turn: the chain refutes it, so
    ``prove_first`` runs no search and keeps only the ops."""
    h = H()
    h.append(0, "s", "a")
    h.inv(0, "rollback", "s", "x")
    h.fail(0, "SnapshotNotFound: x")
    h.read(1, "s", [])
    so = _one(h)
    p = Prover()
    assert p.prove_first(so) is False
    assert p._tried is not None and p._tried[1].quick is None and p._tried[1].frontier is None
    assert p.judge(so, Evidence()) is False


def test_the_prover_hands_judge_its_budget_and_adds_up_the_time_spent(monkeypatch: pytest.MonkeyPatch) -> None:
    clock = _Clock(100.0)
    monkeypatch.setattr(exact, "time", clock)
    got: list[Any] = []

    def fake(*args: Any, **kw: Any) -> bool:
        got.append((args, kw))
        clock.now += 2.0
        return True

    monkeypatch.setattr(exact, "judge", fake)
    p = Prover(total_s=10.0, session_steps=33)
    found = Evidence()
    so = _one(_rolled_back(False))
    assert p.judge(so, found) is True
    assert p._start == 100.0 and p._spent == 2.0
    assert p.judge(so, found) is True
    assert p._spent == 4.0
    # the second at 102: 10 s less the 2 spent
    assert got == [
        ((so, found, 110.0, p.tally, 33), {"tried": None}),
        ((so, found, 110.0, p.tally, 33), {"tried": None}),
    ]
    tried = exact._Tried([], None)
    p._tried = ("s", tried)
    p.judge(so, found)
    assert got[-1][1] == {"tried": tried} and p._spent == 6.0

    def slow_prove(so: SessionOps) -> bool:
        clock.now += 1.5
        return True

    monkeypatch.setattr(exact, "prove", slow_prove)
    assert p.prove_first(SessionOps("s")) is True and p._spent == 7.5
    assert p.prove_first(SessionOps("s")) is True and p._spent == 9.0


# ---------------------------------------------------------------------------------------
# the proofs checked; what an unreadable op says; the peak memory


def test_a_proof_that_misses_an_op_or_does_not_replay_raises() -> None:
    a = op(0, "append", 0, 1, "a")
    r = op(1, "read", 2, 3, None, ("a",))
    ops = [a, r]
    exact._certified("s", ops, Outcome(True, order=(0, 1)))
    with pytest.raises(AssertionError, match="session 's': a linearization that does not replay"):
        exact._certified("s", ops, Outcome(True, order=(0,)))  # complete, no; replays, yes
    with pytest.raises(AssertionError):
        exact._certified("s", ops, Outcome(True, order=(1, 0)))  # complete, yes; replays, no
    chain = Chain((a, r), ())
    exact._certified_chain("s", chain, ops)
    with pytest.raises(AssertionError, match="session 's': a chain that does not replay"):
        exact._certified_chain("s", Chain((a,), ()), ops)  # replays, but misses the read
    with pytest.raises(AssertionError):
        exact._certified_chain("s", Chain((r, a), ()), ops)
    snap = op(2, "snapshot-id", 4, 5, None, "x")
    listing = op(3, "list", 6, 7, None, frozenset({"x"}))
    exact._certified_chain("s", Chain((a, r), (snap, listing)), [*ops, snap, listing])
    with pytest.raises(AssertionError):
        exact._certified_chain("s", Chain((a, r), (listing, snap)), [*ops, snap, listing])
    with pytest.raises(AssertionError):
        exact._certified_chain("s", Chain((a, r), (snap,)), [*ops, snap, listing])


def test_an_unreadable_read_or_listing_says_what_it_returned() -> None:
    h = H()
    h.inv(1, "read", "s")
    h.fail(1, "TimeoutError: slow")
    h.inv(1, "read", "s")
    h.fail(1, "")
    h.read(1, "s", "junk")
    h.inv(1, "list_snapshots", "s")
    h.ok(1, 5)
    found = Evidence()
    session_ops(_one(h), found)
    assert [(v.kind, v.message, [e.index for e in v.events]) for v in found.violations()] == [
        ("unreadable", "The read of session 's' by process 1 at event 1 raised TimeoutError: slow.", [0, 1]),
        ("unreadable", "The read of session 's' by process 1 at event 3 raised an error.", [2, 3]),
        ("unreadable", "The read of session 's' by process 1 at event 5 returned malformed data.", [4, 5]),
        ("unreadable", "The list_snapshots of session 's' by process 1 at event 7 returned malformed data.", [6, 7]),
    ]
    assert found.blamed == {1, 3, 5, 7}
    assert found.has("unreadable", "s", ("read", 3)) and found.has("unreadable", "s", ("list_snapshots", 7))


def test_the_peak_memory_is_in_megabytes() -> None:
    import resource
    import sys

    if sys.platform == "darwin":  # pragma: no cover - bytes there
        pytest.skip("ru_maxrss is in bytes on macOS")
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    peak = exact._peak_mb()
    after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    assert before <= peak <= after and peak > 1


def test_an_unmodelled_op_says_which_value_breaks_the_format() -> None:
    h = H()
    h.inv(0, "append", "s", ["user", 7])
    h.ok(0)
    with pytest.raises(_Unmodelled, match=r"^append with value \['user', 7\]$"):
        session_ops(_one(h), Evidence())
    h = H()
    h.inv(0, "rollback", "s", 7)
    h.info(0)
    with pytest.raises(_Unmodelled, match=r"^rollback to 7$"):
        session_ops(_one(h), Evidence())


# ---------------------------------------------------------------------------------------
# left by the first pass: deadlines handed on, shared strings, retried appends


def test_a_lazy_proof_is_checked_through_its_certified_order() -> None:
    """The lazy walk places s1 before b though the rollback restores (a, b): its order
    does not replay as it stands, the order ``certify`` moves s1 in does."""
    ops = [
        op(0, "append", 0, 1, "a"),
        op(1, "snapshot", 2, 20, None, "s1"),
        op(2, "append", 3, 4, "b"),
        op(3, "append", 5, 6, "c"),
        op(4, "rollback", 30, 31, "s1"),
        op(5, "read", 32, 33, None, ("a", "b")),
    ]
    out = linearize(ops, time.monotonic() + 60, lazy=True)
    assert out.ok is True and out.path
    assert not replays([ops[k] for k in out.order])
    exact._certified("s", ops, out)


def test_a_broken_proof_names_its_session(monkeypatch: pytest.MonkeyPatch) -> None:
    """Were a proof not to replay, the assertion names the session (by the chain and by a
    search, in ``judge`` and in ``prove_first``)."""
    monkeypatch.setattr(exact, "replays", lambda order: False)
    h = H()
    h.append(0, "s", "a")
    h.read(1, "s", ["a"])
    h.inv(0, "rollback", "s", "x")
    h.fail(0, "SnapshotNotFound: x")
    for so in (_one(h), _one(_rolled_back(False))):
        with pytest.raises(AssertionError, match="session 's'"):
            judge(so, Evidence(), time.monotonic() + 60, Tally())
        with pytest.raises(AssertionError, match="session 's'"):
            Prover().prove_first(so)


def test_the_deadline_is_handed_to_every_search(monkeypatch: pytest.MonkeyPatch) -> None:
    """The chain's search of the ids, the walk and the frontier search's first steps get
    the session's deadline (a time, checked only every so many steps)."""
    from harness.checker import chain as chain_mod

    seen: list[tuple[str, Any]] = []
    real_decide, real_walk, real_advance = chain_mod.decide, exact._quick_walk, lin.advance

    def decide(ops: Any, deadline: Any) -> Any:
        seen.append(("decide", deadline))
        return real_decide(ops, deadline)

    def walk(ops: Any, deadline: Any) -> Outcome:
        seen.append(("walk", deadline))
        real_walk(ops, deadline)
        return Outcome(None)

    def advance(run: Any, deadline: Any, until: int) -> Outcome | None:
        seen.append(("advance", deadline))
        return real_advance(run, deadline, until)

    monkeypatch.setattr(exact, "decide", decide)
    monkeypatch.setattr(exact, "_quick_walk", walk)
    monkeypatch.setattr(exact, "advance", advance)
    assert chain_mod.decide is real_decide
    t0 = time.monotonic()
    Prover(total_s=50.0).prove_first(_one(_rolled_back(False)))
    assert [k for k, _ in seen] == ["decide", "walk", "advance"]
    assert all(isinstance(d, float) and t0 + 40 < d < time.monotonic() + 50.0 for _, d in seen)
    seen.clear()
    far = time.monotonic() + 60
    judge(_one(_rolled_back(False)), Evidence(), far, Tally())
    assert seen[:2] == [("decide", far), ("walk", far)]


def test_the_search_that_names_the_op_gets_five_seconds(monkeypatch: pytest.MonkeyPatch) -> None:
    so, ops = _valid_pair()
    bad = [ops[0], ModelOp(1, "read", ops[1].lo, ops[1].hi, None, (), ops[1].inv, ops[1].comp)]
    seen: list[float] = []
    real = linearize

    def spy(ops: Any, deadline: float, *args: Any, **kw: Any) -> Outcome:
        seen.append(deadline - time.monotonic())
        return real(ops, deadline, *args, **kw)

    monkeypatch.setattr(exact, "linearize", spy)
    found = Evidence()
    exact._explain(so, bad, UNORDERED, found)
    assert len(seen) == 1 and 4.5 < seen[0] <= 5.0
    [v] = found.violations()
    assert v.session == "s"
    found = Evidence()
    exact._explain(so, bad, Backward(bad[0], bad[1], None), found)
    assert [v.session for v in found.violations()] == ["s"]


def test_a_read_shares_its_turns_strings_with_the_appends() -> None:
    """The turn a read shows is the very string its append appended (one string per turn:
    compared and hashed as the same object), also for a turn appended again with another
    role (the first role's string is kept)."""
    h = H()
    h.append(0, "s", "a")
    h.append(0, "s", "b", role="assistant")
    h.read(1, "s", ["a", "b"])
    ops = session_ops(_one(h), Evidence())
    a, b, r = ops
    assert r.out == (a.arg, b.arg) and r.out[0] is a.arg and r.out[1] is b.arg


def test_a_retried_append_is_bound_by_no_read() -> None:
    """A turn appended twice, once acknowledged and once of unknown outcome: which one the
    read shows is not known, so neither gets a return from it nor a state to apply to."""
    h = H()
    h.append(0, "s", "a")  # 10-20
    h.inv(1, "append", "s", "a")  # 30
    h.info(1)  # 40
    h.read(2, "s", ["a"])  # 50-60
    ops = session_ops(_one(h), Evidence())
    assert _rows(ops) == [
        (0, "append", 10, 20, u("a"), None),
        (1, "append", 30, INF, u("a"), None),
        (2, "read", 50, 60, None, (u("a"),)),
    ]


def test_a_read_extending_an_unreadable_one_is_parsed_whole() -> None:
    """An unreadable read is not the one the next read extends; a read extending a readable
    one with a malformed item after it is unreadable; a tuple of an unknown token is a
    turn like a list."""
    h = H()
    h.append(0, "s", "b")
    h.read(1, "s", [["user", "b"], ["user", 2]])
    h.read(1, "s", [["user", "b"], ["user", 2], ["user", "c"]])
    h.read(1, "s", ["b"])
    h.read(1, "s", [["user", "b"], ["user", 3]])
    h.read(1, "s", [["user", "b"], ("user", "q")])
    found = Evidence()
    ops = session_ops(_one(h), found)
    assert found.totals == {"unreadable": 3}
    assert [o.out for o in ops if o.kind == "read"] == [(u("b"),), (u("b"), u("q"))]
    assert _turns([("user", "q")], {}, {}) == (u("q"),)


def test_the_overlap_of_one_op_is_one_and_a_token_may_hold_spaces() -> None:
    assert exact._overlap([op(0, "read", 0, 1)]) == 1
    assert exact._seq([u("hello world")]) == "['hello world'] (1 item)"


def test_no_time_left_names_the_session_with_its_ops_as_the_model_sees_them() -> None:
    h = _rolled_back(False)
    h.inv(0, "append", "s", "z")
    h.fail(0)  # a failed append: a pair of the session, not an op of the model
    tally = Tally()
    assert judge(_one(h), Evidence(), time.monotonic() - 1, tally) is None
    assert tally.undecided == [Undecided("s", 5, 0, 0, 11)]


def test_a_pair_the_chain_finds_backward_is_the_explanation_where_the_fast_rules_see_none() -> None:
    """b's append began after a's was acknowledged, yet a read running across both shows
    b alone: the fast rules pass it, the chain refutes it, and its pair is what is said."""
    h = H()
    h.inv(2, "read", "s")
    h.append(0, "s", "a")
    h.append(1, "s", "b")
    h.ok(2, ["b"])
    tally, found = Tally(), Evidence()
    assert judge(_one(h), found, time.monotonic() + 60, tally) is False
    assert tally.refuted == 1
    [v] = found.violations()
    assert v.kind == "lost-turn" and v.session == "s"
    assert v.message.startswith("Turn 'a' was acknowledged (process 0 at event 2) before the append of turn 'b'")
