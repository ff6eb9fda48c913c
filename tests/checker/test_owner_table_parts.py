"""The streaming checker's table of retired appends (harness.checker.owner_table), part by
part, on literal events: which turns are plan-made (``writer_of``), session ids and ranks,
the events of an append rebuilt exactly from a row (ok, info, fail-free, never completed,
list or tuple values, pids, errors), the lowest-ranked owner kept, plan-made turns found
through their writer's array (before its first turn, past its span, not yet reached) and
other tokens through the dict, and the appends kept whole because their events fit no
shape (an error on the invoke, another value, another process, junk fields, times past
64 bits)."""

from __future__ import annotations

from array import array
from typing import Any

from harness.checker.owner_table import RetiredOwners, writer_of
from harness.history import Event


def pair(tok: str, i: int = 0, t: int = 100, typ: str | None = "ok", s: str = "s", role: str = "user",
         p: int | str = 1, pid: int = 7, as_list: bool = True, **comp_kw: Any) -> tuple[Event, Event | None]:
    v: Any = [role, tok] if as_list else (role, tok)
    inv = Event(i, t, p, "invoke", "append", s, v, None, pid)
    if typ is None:
        return inv, None
    kw: dict[str, Any] = dict(index=i + 1, time=t + 5, process=p, type=typ, f="append", session=s,
                              value=v if typ == "ok" else None, error=None if typ == "ok" else "Error: x",
                              pid=pid)
    kw.update(comp_kw)
    return inv, Event(**kw)


def test_writer_of_reads_plan_made_turns_only() -> None:
    assert writer_of("w3.17|hello") == (3, 17)
    assert writer_of("w12.345|") == (12, 345)
    assert writer_of("w3.17") is None
    assert writer_of("xw3.17|a") is None
    assert writer_of("w.1|a") is None
    assert writer_of("hello") is None


def test_sessions_get_ids_in_order_and_keep_their_first_rank() -> None:
    t = RetiredOwners()
    assert t.session("a", 5) == 0
    assert t.session("b", 2) == 1
    assert t.session("a", 9) == 0
    p = pair("x", s="a")
    t.add("x", 0, p)
    assert t.of("x") == (5, "a", p)


def test_the_events_of_an_append_are_rebuilt_exactly() -> None:
    t = RetiredOwners()
    sid = t.session("s", 3)
    cases = [
        pair("w1.0|a"),
        pair("w1.1|b", i=10, t=200, role="assistant", pid=0),
        pair("w1.2|c", i=20, t=300, as_list=False),
        pair("w1.3|d", i=30, t=400, typ="info"),
        pair("w1.4|e", i=40, t=500, typ=None),
        pair("w2.0|f", i=50, t=600, p="proc", pid=99),
        pair("w2.1|g", i=60, t=700, value=None),  # an ok whose value was not recorded
        pair("w2.2|h", i=70, t=800, pid=8),  # the completion's pid differs from the invoke's
        pair("free text", i=90, t=1000),
        pair("w9.0|j", i=100, t=1100, typ="info", error=None),
    ]
    for c in cases:
        t.add(c[0].value[1], sid, c)
    for inv, comp in cases:
        tok = inv.value[1]
        got = t.of(tok)
        assert got == (3, "s", (inv, comp)), tok
        assert type(got[2][0].value) is type(inv.value)
        if comp is not None:
            assert type(got[2][1].value) is type(comp.value)  # type: ignore[union-attr]
    assert len(t) == len(cases) and t.whole == 0


def test_the_lowest_ranked_owner_stays() -> None:
    t = RetiredOwners()
    late, early, later = t.session("late", 5), t.session("early", 2), t.session("later", 7)
    for tok in ("w1.0|a", "plain"):
        p_late, p_early, p_later = pair(tok, s="late"), pair(tok, i=3, s="early"), pair(tok, i=6, s="later")
        t.add(tok, late, p_late)
        assert t.of(tok) == (5, "late", p_late)
        t.add(tok, early, p_early)
        assert t.of(tok) == (2, "early", p_early)
        t.add(tok, later, p_later)
        assert t.of(tok) == (2, "early", p_early)
        t.add(tok, early, pair(tok, i=9, s="early"))  # the same session again: the first append stays
        assert t.of(tok) == (2, "early", p_early)
    assert len(t) == 2


def test_plan_made_turns_out_of_the_writers_span_go_to_the_dict() -> None:
    t = RetiredOwners()
    sid = t.session("s", 1)
    toks = ["w1.10|a", "w1.5|b", "w1.12|c", f"w1.{10 + (1 << 26)}|d", "w1.0|e", "w2.3|f"]
    pairs = {tok: pair(tok, i=10 * n) for n, tok in enumerate(toks)}
    for tok in toks:
        t.add(tok, sid, pairs[tok])
    for tok in toks:
        assert t.of(tok) == (1, "s", pairs[tok]), tok
    assert len(t) == len(toks)
    # never appended: before, inside and past the span, of a known writer or not
    for tok in ("w1.11|x", "w1.13|x", "w1.4|x", "w1.100|x", "w3.0|x", "w1.10|other", "other"):
        assert t.of(tok) is None, tok
    assert len(t) == len(toks)
    assert t.nbytes() < 10_000  # the far turn did not stretch the writer's array
    # nor does a writer whose first turn comes late
    late = RetiredOwners()
    late.add("w5.5000|a", late.session("s", 1), pair("w5.5000|a"))
    late.add("w5.5001|a", 0, pair("w5.5001|a"))
    assert late.nbytes() < 5_000 and late.of("w5.5001|a") == (1, "s", pair("w5.5001|a"))


def test_a_lookup_creates_nothing() -> None:
    t = RetiredOwners()
    sid = t.session("s", 1)
    t.add("w1.0|a", sid, pair("w1.0|a"))
    before = t.nbytes()
    for n in range(1, 2000):
        assert t.of(f"w1.{n}|a") is None
        assert t.of(f"w{n + 1}.0|a") is None
    assert t.nbytes() == before and len(t) == 1


def test_the_arrays_come_from_the_factory_and_span_from_the_writers_first_turn() -> None:
    made: list[array[int]] = []

    def new_array() -> array[int]:
        made.append(array("q"))
        return made[-1]

    t = RetiredOwners(new_array)
    sid = t.session("s", 1)
    toks = ["w1.0|a", "w2.3|b", "w1.1|a", "w1.2|a", "w1.3|a", "w1.4|a", "w1.7|a", "w2.5|b", "w2.4|b"]
    pairs = {tok: pair(tok, i=2 * n) for n, tok in enumerate(toks)}
    for tok in toks[:2]:
        t.add(tok, sid, pairs[tok])
    assert len(made) == 3  # the rows, and one per writer
    assert len(made[0]) == 2 * 8 and list(made[1]) == [0] and list(made[2]) == [1]
    for tok in toks[2:6]:
        t.add(tok, sid, pairs[tok])
    assert list(made[1]) == [0, 2, 3, 4, 5]
    t.add("w1.7|a", sid, pairs["w1.7|a"])
    assert list(made[1]) == [0, 2, 3, 4, 5, -1, -1, 6]
    t.add("w2.5|b", sid, pairs["w2.5|b"])
    t.add("w2.4|b", sid, pairs["w2.4|b"])
    assert list(made[2]) == [1, 8, 7]  # from w2's first turn, 3, on
    assert len(made) == 3 and len(made[0]) == 9 * 8
    for tok in toks:
        assert t.of(tok) == (1, "s", pairs[tok]), tok
    assert t.of("w1.5|a") is None and t.of("w2.2|b") is None and t.of("w2.6|b") is None


def test_appends_whose_events_fit_no_shape_are_kept_whole() -> None:
    t = RetiredOwners()
    sid = t.session("s", 4)
    ok = pair("w1.0|a")[1]
    assert ok is not None
    whole = [
        (Event(0, 10, 1, "invoke", "append", "s", ["user", "w1.0|a"], "odd"), ok),  # an error on the invoke
        (Event(2, 10, 1, "ok", "append", "s", ["user", "w1.1|a"]), None),  # not an invoke
        (Event(4, 10, 1, "invoke", "read", "s", ["user", "w1.2|a"]), None),  # not an append
        (Event(6, 10, 1, "invoke", "append", "other", ["user", "w1.3|a"]), None),  # another session
        (Event(8, 10, 1, "invoke", "append", "s", "w1.4|a"), None),  # a value that is no list
        (Event(8, 10, 1, "invoke", "append", "s", {"w1.5|a": 1}), None),  # nor a tuple
        (Event(10, 10.5, 1, "invoke", "append", "s", ["user", "w1.6|a"]), None),  # type: ignore[arg-type]
        (Event(12, 10, 1, "invoke", "append", "s", ["user", "w1.7|a"], None, [1]), None),  # type: ignore[arg-type]
        pair("w1.8|a", value=["user", "w1.7|other"]),  # the completion shows another value
        pair("w1.9|a", value=("user", "w1.9|a")),  # a tuple where the invoke had a list
        pair("w1.10|a", f="read"),
        pair("w1.11|a", session="other"),
        pair("w1.12|a", process=2),
        pair("w1.13|a", time=1.5),
        pair("w1.14|a", index="1"),
        pair("w1.15|a", error=["unhashable"]),
        pair("w1.16|a", t=1 << 64),  # a time past 64 bits
        pair("w1.17|a", i=(1 << 63) - 1),  # the completion's index past 64 bits
    ]
    for n, p in enumerate(whole):
        t.add(f"w1.{n}|a", sid, p)
    assert t.whole == len(whole) and len(t) == len(whole)
    for n, p in enumerate(whole):
        got = t.of(f"w1.{n}|a")
        assert got is not None and got[:2] == (4, "s") and got[2] is p, n
    # a lower-ranked owner whose events fit: the row is no longer whole
    better = t.session("first", 1)
    p = pair("w1.0|a", s="first")
    t.add("w1.0|a", better, p)
    assert t.whole == len(whole) - 1 and t.of("w1.0|a") == (1, "first", p)
    # and one that does not fit replaces a row that did
    q = pair("w1.20|a", s="s")
    t.add("w1.20|a", sid, q)
    r = (Event(0, 10, 1, "invoke", "append", "first", ["user", "w1.20|a"], "odd"), None)
    t.add("w1.20|a", better, r)
    assert t.of("w1.20|a") == (1, "first", r) and t.whole == len(whole)


def test_nbytes_grows_with_rows_names_and_tokens_of_the_dict() -> None:
    t = RetiredOwners()
    empty = t.nbytes()
    assert empty > 0
    sid = t.session("a-rather-long-session-name" * 4, 1)
    named = t.nbytes()
    assert named > empty + 100
    for n in range(100):
        t.add(f"tok{n}", sid, pair(f"tok{n}", i=2 * n))
    many = t.nbytes()
    assert many > named + 100 * (8 * 8 + 60)
    for n in range(100):
        t.add(f"w1.{n}|x", sid, pair(f"w1.{n}|x", i=2 * n))
    assert t.nbytes() > many + 100 * (8 * 8 + 8)
