"""One seed, one interleaving: the same seed gives the same trace and the same history
(up to times and pids), and replaying the trace gives the same history and violations."""

from __future__ import annotations

from typing import Any

import pytest
from ctl_helpers import scenario

from harness.replay import compare_runs, replay
from harness.runner.control import read_trace


@pytest.mark.parametrize(("store", "strategy"), [
    ("sqlite", "random"),
    ("redis", "pct"),
    ("zoo.sqlite-max-turn-race", "random"),
    ("zoo.redis-rmw-append", "rr"),
])
def test_same_seed_same_trace_and_history(store: str, strategy: str, run_ctl: Any) -> None:
    sc = scenario(store, seed=7, strategy=strategy)
    a, b = run_ctl(sc), run_ctl(sc)
    fid = compare_runs(a.run_dir, b.run_dir)
    assert fid.same_trace, fid.line()
    assert fid.same_history, fid.line()
    assert fid.same_violations, fid.line()
    t = read_trace(a.run_dir)
    assert t.decisions > sc.workers * sc.ops  # a point at every statement / command
    assert not t.blocked and not t.divergences and not t.deadline_hit
    if store == "sqlite":  # lock waits became explicit steps, and still no violation
        assert t.busy and a.result.valid is True


@pytest.mark.parametrize("store", ["zoo.sqlite-max-turn-race", "zoo.redis-rmw-append"])
def test_replay_from_trace_gives_same_violations(store: str, run_ctl: Any,
                                                 tmp_path: Any) -> None:
    a = run_ctl(scenario(store, seed=3, strategy="random", workers=3, ops=15))
    assert a.result.valid is False, "the random walk should break this store"
    b = replay(a.run_dir, reports=tmp_path / "replays")
    fid = compare_runs(a.run_dir, b.run_dir)
    assert fid.faithful and fid.same_trace, fid.line()
    assert read_trace(b.run_dir).replayed
    assert b.result.counts() == a.result.counts()


def test_pct_depends_on_the_seed(run_ctl: Any) -> None:
    traces = {tuple(read_trace(run_ctl(scenario("redis", seed=s, ops=10)).run_dir).grants)
              for s in (1, 2, 3)}
    assert len(traces) > 1


def test_spawned_workers_are_controlled_too(run_ctl: Any) -> None:
    sc = scenario("sqlite", seed=5, workers=2, ops=8, strategy="random").with_overrides(
        start_method="spawn")
    a, b = run_ctl(sc), run_ctl(sc)
    assert compare_runs(a.run_dir, b.run_dir).faithful
    assert a.result.valid is True
