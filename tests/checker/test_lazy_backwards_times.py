"""The lazy model's certificate where a snapshot's recorded return precedes its invocation
(``certify``'s test of where a window ends, which mutation testing found unpinned).

Events given in memory reach the checker as they are (``check`` asks for them merged by
time, and does not check it), and each invoke is paired with its process's next event,
so a snapshot can be invoked at 10 and return at 5 (a log file like that is refused on
reading: ``harness.history.iter_history``). The lazy step closes a window only at an op
placed *after* the snapshot that was invoked after it returned (``make_step``); the
snapshot itself never closes its own window, and ``certify`` must follow the same
window, or the certificate it builds does not replay and the proof fails its own check
(an AssertionError out of ``check``).

Same conventions and helpers as test_lazy_parts.py: ``ModelOp(id, kind, lo, hi, arg,
out)``; a lazy state is (turns, ids, contents, open windows)."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.checker import check, check_path
from harness.checker.exact import replays
from harness.checker.lazy import certify
from harness.errors import HistoryError
from harness.history import Event, write_history
from tests.checker.test_lazy_parts import AB, A, E, op, run

# a; s1 invoked at 10 but returned at 5 (its window stays open to ops invoked by 5); b
# (3-20), within that window, so s1 may hold (a, b); the rollback restores (a, b), the
# read shows it
BACKWARDS = [op(0, "append", 0, 1, "a"), op(1, "snapshot", 10, 5, None, "s1"),
             op(2, "append", 3, 20, "b"), op(3, "rollback", 30, 31, "s1"),
             op(4, "read", 40, 41, None, AB)]


def test_certify_keeps_a_snapshots_window_open_past_the_snapshot_whose_return_precedes_its_invocation() -> None:
    """The lazy model places s1 before b and lets the rollback restore (a, b), the turns
    after b, which the window (open while ops invoked by 5 come) gave s1. certify moves
    s1 after b, where its content was taken: the snapshot's own invocation (10, after its
    return at 5) does not end the window. The order as placed does not replay."""
    path = run(BACKWARDS, [0, 1, 2, 3, 4], {3: 1})  # the rollback's second candidate: (a, b)
    assert [p[0] for p in path] == [E, A, A, AB, AB, AB]
    got = certify(BACKWARDS, path)
    assert [o.id for o in got] == [0, 2, 1, 3, 4]
    assert replays(got)
    assert not replays(BACKWARDS)


def _backwards_history() -> list[Event]:
    """BACKWARDS as events, in the order a log file would hold them: the snapshot's ok
    (time 5) comes after its invoke (time 10)."""
    rows = [(1, 0, "invoke", "append", ["user", "a"]), (2, 0, "ok", "append", ["user", "a"]),
            (3, 1, "invoke", "append", ["user", "b"]),
            (10, 2, "invoke", "snapshot", None), (5, 2, "ok", "snapshot", "s1"),
            (20, 1, "ok", "append", ["user", "b"]),
            (30, 0, "invoke", "rollback", "s1"), (31, 0, "ok", "rollback", "s1"),
            (40, 0, "invoke", "read", None), (41, 0, "ok", "read", [["user", "a"], ["user", "b"]])]
    return [Event(index=i, time=t, process=p, type=ty, f=f, session="s", value=v)
            for i, (t, p, ty, f, v) in enumerate(rows)]


def test_events_out_of_time_order_are_checked_in_memory_and_refused_from_a_log(tmp_path: Path) -> None:
    """The same session end to end. Given as events (``check`` asks for them merged by
    time, and does not check that), the linearization a, b, s1, rollback, read respects
    real time, so the session is proven and the proof's certificate replays (no
    AssertionError out of the check). Written to a log file, it is refused on reading,
    in one line: the snapshot's ok comes before its own invoke, which no process does."""
    events = _backwards_history()
    res = check(events)
    assert res.valid is True and res.stats["exact"]["sessions_proven"] == 1
    write_history(tmp_path / "history.jsonl", events)
    with pytest.raises(HistoryError, match=r"event 4 .*go forward in time") as err:
        check_path(tmp_path / "history.jsonl")
    assert "\n" not in str(err.value)
