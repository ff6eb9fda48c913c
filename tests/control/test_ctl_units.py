"""Pure parts of controlled mode: strategies, the trace mapping of shrink, the wire labels."""

from __future__ import annotations

import itertools

import pytest

from harness.backends import redis_points, sqlite_points
from harness.runner.control.strategies import PCT, make_strategy
from harness.shrink import Case


def _walk(name: str, seed: int, steps: int = 200) -> list[int]:
    s = make_strategy(name, seed, workers=4, depth=3, steps=steps)
    return [s.choose([0, 1, 2, 3] if k % 7 else [1, 3], k) for k in range(steps)]


@pytest.mark.parametrize("name", ["pct", "random", "rr", "sequential"])
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
