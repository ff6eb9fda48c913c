"""The streaming checker (harness.checker.stream) where mutation testing found it unpinned:
an op of a session that was judged while the op was being invoked (the caller retired the
session too early) is refused when it completes; a read showing a turn of a session still
live at ``finish`` and ranked after it is judged there like any other; and ``finish``
called again gives the same verdict."""

from __future__ import annotations

from typing import Any

import pytest

from harness.checker import CheckResult, check
from harness.checker.stream import StreamChecker, StreamError
from harness.history import Event
from tests.checker.builder import H


def fed(events: list[Event], sc: StreamChecker | None = None) -> StreamChecker:
    sc = sc if sc is not None else StreamChecker()
    for e in events:
        sc.feed(e)
    return sc


def untimed(res: CheckResult) -> dict[str, Any]:
    return {k: v for k, v in res.stats.items() if k != "seconds"}


def same_as_batch(got: CheckResult, events: list[Event]) -> None:
    """The streaming result is the batch one (but for the time taken)."""
    want = check(events)
    assert got.valid == want.valid
    assert got.violations == want.violations
    assert got.totals == want.totals
    assert untimed(got) == untimed(want)


def test_an_op_invoked_as_its_retired_session_is_judged_is_refused_when_it_completes() -> None:
    """s is retired with a read open on process 1; a new invoke of s on that process
    closes the open read as never completed, which leaves s with nothing open: it is
    judged, before the new read's own invoke is taken. When that read completes, the
    caller has broken the contract (s was retired while an op of it could still come):
    the checker says so (naming the op by its invoke) rather than drop the op."""
    h = H()
    h.inv(1, "read", "s")
    sc = fed(h.events)
    sc.retire("s")
    assert list(sc._live) == ["s"]  # its read is open
    sc.feed(h.inv(1, "read", "s"))
    assert sc._judged == {"s"} and sc._live == {}
    with pytest.raises(StreamError) as err:
        sc.feed(h.ok(1, []))
    assert str(err.value) == "event 1: an op of session 's' completed after the session was judged"


def test_a_read_showing_a_turn_of_a_later_ranked_live_session_is_a_bleed_at_finish() -> None:
    """x (rank 1) reads y's turn; neither is retired, so both are judged at ``finish``, x
    first: the owner lookup finds y still live, its append among its closed ops."""
    h = H()
    h.append(1, "x", "w1.0|a")
    h.append(2, "y", "w2.0|b")
    h.read(1, "x", ["w1.0|a", "w2.0|b"])
    sc = fed(h.events)
    assert sc._live["x"].rank == 1 and sc._live["y"].rank == 2
    res = sc.finish()
    assert res.counts() == {"cross-session-bleed": 1}
    (v,) = res.violations
    assert v.session == "x" and v.events[:2] == (h.events[2], h.events[3])
    assert res.stats["sessions"] == 2
    same_as_batch(res, h.events)


def test_finish_called_again_gives_the_same_verdict_counting_nothing_twice() -> None:
    """A second ``finish`` judges nothing more: the same violations, totals and stats (the
    ops never completed, of a session or of none, counted once)."""
    h = H()
    h.append(1, "s", "w1.0|a")
    h.read(1, "s", [])  # a lost turn
    h.inv(2, "read", None)  # of no session: an op never completed
    h.inv(3, "append", "t", "w3.0|c")  # of a session: never completed
    sc = fed(h.events)
    sc.process_ended(2)
    sc.process_ended(3)
    first = sc.finish()
    again = sc.finish()
    assert again.violations == first.violations and again.totals == first.totals
    assert again.valid is first.valid is False
    assert untimed(again) == untimed(first)
    assert first.stats["ops"] == 4 and first.stats["sessions"] == 2
    same_as_batch(again, h.events)
