"""Pure parts of controlled mode: strategies, the trace mapping of shrink, the wire labels."""

from __future__ import annotations

import itertools

import pytest

from harness.backends import redis_points, sqlite_points
from harness.runner.control.strategies import PCT, Windows, make_strategy
from harness.runner.control.trace import Trace
from harness.runner.control.windows import command_windows
from harness.shrink import Case


def _walk(name: str, seed: int, steps: int = 200) -> list[int]:
    s = make_strategy(name, seed, workers=4, depth=3, steps=steps)
    return [s.choose([0, 1, 2, 3] if k % 7 else [1, 3], k) for k in range(steps)]


@pytest.mark.parametrize("name", ["pct", "random", "rr", "sequential", "window"])
def test_strategies_are_functions_of_the_seed(name: str) -> None:
    assert _walk(name, 5) == _walk(name, 5)
    for k, w in enumerate(_walk(name, 5)):
        assert w in ([0, 1, 2, 3] if k % 7 else [1, 3])


def test_pct_runs_the_top_priority_and_switches_at_its_change_points() -> None:
    import random

    s = PCT(random.Random(1), workers=3, depth=3, steps=50)
    assert len(s.changes) == 2
    chosen = [s.choose([0, 1, 2], k) for k in range(51)]
    switches = sum(1 for a, b in itertools.pairwise(chosen) if a != b)
    assert switches == 2  # one per change point, all workers always eligible


def test_round_robin_takes_turns() -> None:
    s = make_strategy("rr", 1, workers=3)
    picks = [s.choose([0, 1, 2], k) for k in range(6)]
    assert sorted(picks[:3]) == [0, 1, 2] and picks[:3] == picks[3:]


def test_case_without_renumbers_workers_ops_and_keeps_connection_setup() -> None:
    op = {"f": "append", "session": "s1", "role": "user", "content": "x"}
    case = Case(streams=((op, op), (op,), (op, op)),
                trace=((0, -1, "start"), (1, -1, "start"), (2, -1, "start"),
                       (0, 0, "HELLO"), (0, 0, "GET"), (2, 0, "GET"), (0, 0, "SET"),
                       (0, 1, "GET"), (2, 1, "GET"), (1, 0, "GET")))
    smaller = case.without({(0, 0), (1, 0)})
    assert len(smaller.streams) == 2  # worker 1 had one op: it goes, worker 2 becomes 1
    assert smaller.trace == ((0, -1, "start"), (1, -1, "start"), (0, 0, "HELLO"),
                             (1, 0, "GET"), (0, 0, "GET"), (1, 1, "GET"))
    assert smaller.compact().streams[0][0]["session"] == "s0"
    assert case.simplified().streams[2][1]["content"] == "w2.1|"


def test_point_labels() -> None:
    assert sqlite_points.label("  begin immediate") == "BEGIN IMMEDIATE"
    assert sqlite_points.label("PRAGMA busy_timeout = 5") == "PRAGMA BUSY_TIMEOUT"
    assert sqlite_points.label("select 1") == "SELECT"
    assert redis_points.label([b"*3\r\n$5\r\nRPUSH\r\n$1\r\nk\r\n$1\r\nv\r\n"]) == "RPUSH"
    assert redis_points.label(b"garbage") == "REDIS"


class _Stand:
    """Where two workers stand, as the grant loop would tell the strategy (its input)."""

    def __init__(self, ops: dict[int, tuple[str, str]]) -> None:
        self.ops = ops
        self.index = {0: 0, 1: 0}
        self.mid = {0: False, 1: False}

    def op_index(self, slot: int) -> int:
        return self.index[slot]

    def op(self, slot: int) -> tuple[str, str] | None:
        return self.ops[slot]

    def mid_op(self, slot: int) -> bool:
        return self.mid[slot]


def test_window_holds_an_op_between_its_commands_and_runs_a_conflicting_op_inside() -> None:
    import random

    view = _Stand({0: ("snapshot", "s0"), 1: ("rollback", "s0")})
    s = Windows(random.Random(1), rate=1.0)
    view.mid[0] = True  # worker 0 ran the first command of its snapshot
    assert s.choose([0, 1], 0, view) == 1  # the rollback goes inside the snapshot
    view.mid[1] = True
    assert s.choose([0, 1], 1, view) == 1  # ... all of it, worker 0 held
    view.index[1], view.mid[1] = 1, False  # the rollback is over: worker 1 stands at its next op
    view.ops[1] = ("read", "s1")
    assert s.choose([0, 1], 2, view) == 0  # the snapshot resumes


def test_window_leaves_ops_alone_that_cannot_break_each_other() -> None:
    import random

    for other in [("rollback", "s1"), ("read", "s0")]:  # another session; two reads
        view = _Stand({0: ("read", "s0"), 1: other})
        view.mid[0] = True
        s = Windows(random.Random(1), rate=1.0)
        assert s.intruder is None
        s.choose([0, 1], 0, view)
        assert s.intruder is None


def test_command_windows_count_ops_run_inside_another_op_of_their_session() -> None:
    t = Trace("window", 1, 3)
    # worker 0's op 0 (a snapshot of s0) has three commands; worker 1's rollback of s0 and
    # worker 2's read of s1 run between them; worker 1's first try met SQLITE_BUSY
    steps = [(0, 0, "BEGIN"), (1, 0, "BEGIN"), (0, 0, "COMMIT"), (1, 0, "BEGIN"),
             (1, 0, "DELETE"), (2, 0, "SELECT"), (0, 0, "BEGIN"), (1, 1, "SELECT")]
    for slot, op, point in steps:
        t.grants.append(slot)
        t.ops.append(op)
        t.points.append(point)
    t.busy.append(3)  # the grant at 3 retries the one at 1
    plan = {(0, 0): ("snapshot", "s0"), (1, 0): ("rollback", "s0"), (1, 1): ("read", "s0"),
            (2, 0): ("read", "s1")}
    out = command_windows(t, lambda slot, n: plan.get((slot, n)))
    assert out == {"multi_command_ops": 2, "entered": 1,
                   "pairs": {"rollback inside snapshot": 1}}
    t.busy.clear()  # had the first BEGIN run, the snapshot's COMMIT would be inside the rollback
    assert command_windows(t, lambda slot, n: plan.get((slot, n)))["pairs"] == {
        "rollback inside snapshot": 1, "snapshot inside rollback": 1}
