"""The session's ops as the searches see them (harness.checker.exact.session_ops)."""

from __future__ import annotations

from harness.checker.evidence import Evidence
from harness.checker.exact import _SEP, session_ops
from harness.checker.model import GHOST
from harness.checker.ops import group_by_session
from tests.checker.builder import H


def test_a_read_that_extends_the_one_before_is_parsed_as_a_whole_one_is() -> None:
    """``session_ops`` reuses the turns of the read before for the items a read shares
    with it: the same turns as parsing it whole, a role changed in the shared part makes
    another turn, and a malformed item after the shared part makes the read unreadable."""
    h = H()
    h.append(0, "s", "a")
    h.append(0, "s", "b")
    h.read(1, "s", ["a"])
    h.read(1, "s", ["a", "b"])  # extends the one before
    h.read(1, "s", [["assistant", "a"], ["user", "b"]])  # a's role changed
    h.read(1, "s", [["user", "a"], ["user", "b"], ["user"]])  # a malformed item last
    h.read(1, "s", ["a", "b"])
    [so] = group_by_session(h.events)[0].values()
    found = Evidence()
    ops = session_ops(so, found)
    a, b = f"user{_SEP}a", f"user{_SEP}b"
    assert [o.out for o in ops if o.kind == "read"] == [
        (a,), (a, b), (f"assistant{_SEP}a", b), (a, b)]
    assert all(o.arg is None for o in ops if o.kind == "read")
    assert found.totals == {"unreadable": 1}


def test_the_overlap_counts_the_ops_pending_at_each_invocation() -> None:
    """``_overlap`` (which decides whether the lazy walk is tried): the mean number of
    ops pending when one is invoked, itself included; an op that returned at that very
    instant is not pending, one that never returned always is."""
    from harness.checker.exact import _overlap
    from harness.checker.model import ModelOp
    from harness.checker.ops import INF

    def ops(*spans: tuple[int, int]) -> list[ModelOp]:
        return [ModelOp(n, "read", lo, hi) for n, (lo, hi) in enumerate(spans)]

    assert _overlap([]) == 0
    assert _overlap(ops((0, 1), (2, 3), (4, 5))) == 1  # one after another
    assert _overlap(ops((0, 10), (1, 2), (3, 4))) == 5 / 3  # 1, then 2, then 2
    assert _overlap(ops((0, 5), (5, 6))) == 1  # returned at the instant of the next
    assert _overlap(ops((0, 5), (4, 6))) == 3 / 2
    assert _overlap(ops((0, INF), (1, 2), (3, 4))) == 5 / 3  # never returned: pending
    assert _overlap(ops((3, 4), (0, 1), (0, 2))) == (1 + 2 + 1) / 3  # any order of ops


def test_a_listing_that_returns_what_the_one_before_did_shares_its_set() -> None:
    """A listing whose ids are those of the listing before shares that one's set (the
    lazy step then compares by identity); one whose value is no list is unreadable,
    whatever came before it, and does not become the one a later listing is compared
    with."""
    h = H()
    h.inv(0, "list_snapshots", "s")
    h.ok(0, "")  # malformed: a string
    h.snapshot(0, "s", "x")
    h.list(0, "s", ["x"])
    h.list(0, "s", ["x"])
    h.inv(0, "list_snapshots", "s")
    h.ok(0, "x")  # malformed again, after a good one
    [so] = group_by_session(h.events)[0].values()
    found = Evidence()
    lists = [o for o in session_ops(so, found) if o.kind == "list"]
    assert [o.out for o in lists] == [frozenset({"x"})] * 2
    assert lists[0].out is lists[1].out
    # each keeps its own events, which a violation's evidence names
    assert [o.comp.index for o in lists if o.comp is not None] == [
        e.index for e in h.events if e.f == "list_snapshots" and e.value == ["x"]]
    assert found.totals == {"unreadable": 2}


def test_an_append_whose_turn_a_read_shows_is_bounded_by_that_reads_return() -> None:
    """An append of a whose turn a read returning before it shows took effect before that
    read returned: that is its return (every linearization places it before the read, so
    nothing that may follow it changes). An append that returned before any read showed
    its turn keeps its own, as does a turn appended twice (which of the two the read
    shows is not known), and an append no read shows (a ghost)."""
    h = H()
    h.inv(0, "append", "s", ["user", "a"])
    h.inv(1, "read", "s")
    read_a = h.ok(1, [["user", "a"]])
    ok_a = h.ok(0)  # the append of a returns after the read that shows it
    h.append(0, "s", "b")  # returns before the read below
    h.inv(2, "append", "s", ["user", "c"])  # c appended twice: a retry
    h.inv(3, "append", "s", ["user", "c"])
    h.inv(1, "read", "s")
    h.ok(1, [["user", t] for t in ("a", "b", "c")])
    ok_c = [h.ok(2), h.ok(3)]
    h.append(0, "s", "d")  # no read shows it
    [so] = group_by_session(h.events)[0].values()
    ops = session_ops(so, Evidence())
    his = [(o.arg, o.hi) for o in ops if o.kind == "append"]
    oks = [e.time for e in h.events if e.f == "append" and e.type == "ok"]
    b_ok, d_ok = oks[1], oks[-1]
    c = f"user{_SEP}c"
    assert his == [(f"user{_SEP}a", read_a.time), (f"user{_SEP}b", b_ok),
                   (c, ok_c[0].time), (c, ok_c[1].time), (GHOST, d_ok)]
    assert read_a.time < ok_a.time == oks[0]
