"""The owner table (harness.checker.owner_table) where mutation testing found it unpinned:
a row kept whole because an index or a time is past 64 bits leaves every other row where
it was (the first row, and a row replaced by a lower-ranked owner); ``nbytes`` is the
memory the table holds (within a few percent, measured with tracemalloc: its names, their
list, ranks and index, the rows, a writer's array, the dict of other tokens; the interned
shapes do not grow with the appends) and adds up each of its parts once."""

from __future__ import annotations

import gc
import sys
import tracemalloc
from collections.abc import Callable

from harness.checker.owner_table import RetiredOwners
from harness.checker.stream import StreamChecker
from harness.history import Event
from tests.checker.builder import H
from tests.checker.test_owner_table_parts import pair

# -- rows kept whole for an index or a time past 64 bits -------------------------------------


def test_a_first_row_kept_whole_for_a_time_past_64_bits_stays_found_after_more_rows() -> None:
    t = RetiredOwners()
    sid = t.session("s", 4)
    far = pair("w1.0|a", t=1 << 64)
    t.add("w1.0|a", sid, far)
    rest = {tok: pair(tok, i=10 * n) for n, tok in enumerate(["w1.1|a", "free", "w2.0|b"], 1)}
    for tok, p in rest.items():
        t.add(tok, sid, p)
    got = t.of("w1.0|a")
    assert got is not None and got[:2] == (4, "s") and got[2] is far
    for tok, p in rest.items():
        assert t.of(tok) == (4, "s", p), tok
    assert len(t) == 4 and t.whole == 1


def test_a_row_replaced_by_one_kept_whole_leaves_the_rows_after_it_in_place() -> None:
    t = RetiredOwners()
    late = t.session("late", 4)
    toks = ["w1.0|a", "w1.1|a", "free", "w2.0|b"]
    pairs = {tok: pair(tok, i=10 * n, s="late") for n, tok in enumerate(toks)}
    for tok in toks:
        t.add(tok, late, pairs[tok])
    first = t.session("first", 1)
    q = pair("w1.1|a", i=(1 << 63) - 1, s="first")  # the completion's index is past 64 bits
    t.add("w1.1|a", first, q)
    got = t.of("w1.1|a")
    assert got is not None and got[:2] == (1, "first") and got[2] is q
    for tok in ("w1.0|a", "free", "w2.0|b"):
        assert t.of(tok) == (4, "late", pairs[tok]), tok
    assert len(t) == 4 and t.whole == 1


def test_the_owner_of_a_turn_appended_past_64_bits_of_time_is_named_after_more_sessions_retire() -> None:
    """Every time past 2**63 (a forged history): each retired append is kept whole. Session
    a's turn, shown by b after a and c retired, is a bleed from a, as in the batch check."""
    h = H()
    h.append(1, "a", "w1.0|a")
    h.append(2, "c", "w2.0|c")
    h.read(3, "b", ["w1.0|a"])
    events = [Event(e.index, e.time + (1 << 63), e.process, e.type, e.f, e.session, e.value, e.error, e.pid)
              for e in h.events]
    sc = StreamChecker()
    for e in events[:2]:
        sc.feed(e)
    sc.retire("a")
    for e in events[2:4]:
        sc.feed(e)
    sc.retire("c")
    assert sc.retired_owners.whole == 2
    for e in events[4:]:
        sc.feed(e)
    sc.retire("b")
    res = sc.finish()
    assert res.counts() == {"cross-session-bleed": 1}
    [v] = res.violations
    assert v.session == "b" and v.events[:2] == (events[0], events[1])


# -- nbytes ----------------------------------------------------------------------------------

def _traced_and_counted(fill: Callable[[RetiredOwners], None]) -> tuple[int, int]:
    """The memory traced while ``fill`` fills a new table, and how much ``nbytes`` grew.

    A line tracer is paused meanwhile: what it allocates is not the table's (under the
    coverage tracer mutmut runs the tests with, tracemalloc saw 5-6% more on the sessions'
    part after hundreds of other tests, and ``-x`` then stopped the run that decides which
    lines get mutants)."""
    gc.collect()
    tracer = sys.gettrace()
    sys.settrace(None)
    tracemalloc.start()
    try:
        t = RetiredOwners()
        before, counted = tracemalloc.get_traced_memory()[0], t.nbytes()
        fill(t)
        gc.collect()
        traced = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
        sys.settrace(tracer)
    return traced, t.nbytes() - counted


def test_nbytes_is_the_memory_the_table_holds() -> None:
    """Within 5% of what tracemalloc sees: 250 sessions (their names, list, ranks and index;
    ids and ranks small enough to be shared ints), one writer's 3,000 plan-made turns (rows,
    its array; their two shapes interned once), 3,000 other tokens (rows, the dict, 60 bytes
    of two int objects a token)."""
    def sessions(t: RetiredOwners) -> None:
        for k in range(250):
            t.session(f"session-{k:06d}", k + 1)

    plan = [pair(f"w1.{n}|x", i=2 * n) for n in range(3000)]
    other = [pair(f"free-{n}", i=2 * n) for n in range(3000)]

    def appends(pairs: list[tuple[Event, Event | None]]) -> Callable[[RetiredOwners], None]:
        def fill(t: RetiredOwners) -> None:
            sid = t.session("s", 1)
            for p in pairs:
                t.add(p[0].value[1], sid, p)
        return fill

    for name, fill in (("sessions", sessions), ("plan-made", appends(plan)), ("other", appends(other))):
        traced, counted = _traced_and_counted(fill)
        assert abs(counted / traced - 1) < 0.05, (name, traced, counted)


def test_nbytes_adds_up_each_part_of_the_table_once() -> None:
    """The rows, each writer's array and their index, the dict of other tokens and 60 bytes
    a token for its two int objects, the names, their list, ranks and index."""
    t = RetiredOwners()
    ids = [t.session(name, rank) for rank, name in enumerate(("a" * 300, "b" * 40, "c"), 1)]
    toks = [*(f"w{w}.{n}|x" for w in range(5) for n in range(3)), *(f"free-{n}" for n in range(7))]
    for n, tok in enumerate(toks):
        t.add(tok, ids[n % 3], pair(tok, i=2 * n))
    size = sys.getsizeof
    parts = (size(t._rows) + sum(size(a) for _, a in t._by_writer.values()) + size(t._by_writer)
             + size(t._other) + 60 * 7 + sum(size(n) for n in ("a" * 300, "b" * 40, "c"))
             + size(t._names) + size(t._ranks) + size(t._name_ids))
    assert t.nbytes() == parts


# -- the chain -------------------------------------------------------------------------------
