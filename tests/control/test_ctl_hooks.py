"""Scheduling points reach stores the harness did not write; a worker that waits outside
any point is recorded as blocked; the [control] table is validated; free mode stays the
default."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from ctl_helpers import scenario

from harness.errors import ScenarioError
from harness.history import read_history
from harness.replay import compare_runs
from harness.runner.control import read_trace
from harness.runner.coordinator import run
from harness.scenario import from_dict


def test_third_party_sqlite_store_is_stepped(ctl_stores: str, run_ctl: Any) -> None:
    """Implicit transactions, cursors, executemany, executescript and the store's own
    PRAGMA busy_timeout all go through points; lock waits are steps, not sleeps."""
    sc = scenario(f"{ctl_stores}:LegacySqliteStore", seed=4, strategy="random", workers=3,
                  ops=12, weights={"append": 4, "read": 2, "snapshot": 1, "list_snapshots": 1})
    a, b = run_ctl(sc), run_ctl(sc)
    t = read_trace(a.run_dir)
    assert {"INSERT", "SELECT", "COMMIT", "SCRIPT", "PRAGMA BUSY_TIMEOUT"} <= set(t.points)
    assert t.busy, "a writer waiting for another's lock should retry as a step"
    assert not t.blocked
    assert a.result.valid is True, a.result.counts()
    assert compare_runs(a.run_dir, b.run_dir).faithful


def test_a_worker_waiting_outside_points_is_blocked(ctl_stores: str, run_ctl: Any) -> None:
    """flock() is no point: a worker waiting for it is marked blocked after block_ms and
    another is granted, so the run finishes; the trace says where that happened."""
    sc = scenario(f"{ctl_stores}:FlockRedisStore", seed=2, strategy="rr", workers=2, ops=6,
                  sessions=1, weights={"append": 1}, block_ms=50)
    res = run_ctl(sc)
    t = read_trace(res.run_dir)
    assert t.blocked, t.summary()
    assert not t.deadline_hit
    assert res.result.valid is True, res.result.counts()
    events = read_history(res.run_dir)
    appended = [e for e in events if e.f == "append" and e.type == "ok"]
    assert len(appended) == sc.workers * sc.ops


@pytest.mark.parametrize(("control", "message"), [
    ({"enabled": True, "strategy": "dfs"}, "control.strategy must be one of"),
    ({"enabled": "yes"}, "control.enabled must be true or false"),
    ({"depth": 0}, "control.depth must be an integer >= 1"),
    ({"block_ms": -1}, "control.block_ms must be a positive number"),
    ({"speed": 3}, "unknown key control.'speed'"),
    ({"trace": [0, 7]}, "control.trace names a worker >= workers"),
    ({"streams": [[{"f": "append", "session": "s0"}]]}, "append needs role and content"),
    ({"streams": [[{"f": "read", "session": "s9"}]]}, "outside sessions"),
])
def test_control_table_is_validated(control: dict[str, Any], message: str) -> None:
    with pytest.raises(ScenarioError, match=message):
        from_dict({"workers": 1, "control": control}, source="x.toml")


def test_free_mode_is_the_default(tmp_path: Path) -> None:
    sc = scenario("sqlite", seed=1, ops=5).with_overrides(control={})
    res = run(sc, reports=tmp_path)
    assert not (res.run_dir / "trace.json").exists()
    assert "control" not in res.stats


def test_explicit_streams_round_trip_through_the_run_dir(run_ctl: Any) -> None:
    streams = [[{"f": "append", "session": "s0", "role": "user", "content": 'a"\\\r\n\t|'}],
               [{"f": "read", "session": "s0"}]]
    sc = scenario("sqlite", seed=1, workers=2, ops=1, sessions=1, streams=streams)
    res = run_ctl(sc)
    from harness.scenario import load_scenario

    again = load_scenario(res.run_dir / "scenario.toml")
    assert again.control["streams"] == streams
    assert res.result.valid is True
