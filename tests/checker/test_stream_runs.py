"""Real runs (shipped scenarios, real stores, zoo stores with known bugs, real processes)
streamed through the streaming checker give the batch checker's verdict.

Each session is retired once no op can touch it any more (after its last event: today the
quiescent read that ends a run reads every session) and each process is ended after its
last event, as a coordinator following the per-worker logs would; sessions are several
generations deep (``session_lifetime``), so most are judged and dropped mid-history."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from harness.checker.stream import StreamChecker
from harness.coverage import interleavings
from harness.history import read_history
from harness.plan import Plan
from harness.runner.coordinator import run
from harness.runner.nemesis import fault_summary
from harness.runner.streaming import check_stored
from harness.scenario import load_scenario
from tests.checker.streaming import assert_same, last_positions

SCENARIOS = Path(__file__).resolve().parents[2] / "scenarios"

RUNS: list[tuple[str, dict[str, Any], str | None]] = [
    ("smoke.toml", {"ops": 400, "session_lifetime": 50, "duration": 20}, None),
    ("sqlite-max-turn-race.toml", {"ops": 300, "session_lifetime": 40, "sessions": 2}, "lost-turn"),
    ("sqlite-rollback.toml", {"ops": 300, "session_lifetime": 40}, None),
    ("redis-sessions.toml", {"ops": 200, "session_lifetime": 25}, "cross-session-bleed"),
    # kills, pauses and restarts mid-op: open invokes that never complete
    ("chaos-sqlite.toml", {"ops": 25000, "duration": 3.0, "session_lifetime": 200}, None),
]


@pytest.mark.parametrize(("scenario", "overrides", "kind"), RUNS, ids=[r[0] for r in RUNS])
def test_real_runs_stream_to_the_batch_verdict(
    tmp_path: Path, redis_server: Any, scenario: str, overrides: dict[str, Any], kind: str | None,
) -> None:
    sc = load_scenario(SCENARIOS / scenario).with_overrides(seed=7, **overrides)
    url = redis_server.url if sc.backend == "redis" or "redis" in sc.store else ""
    result = run(sc, reports=tmp_path / "reports", redis_url=url)
    events = read_history(result.run_dir)
    want = assert_same(events)
    # the run itself was checked while it went on (the follower, the streaming checker,
    # retired generations): the same verdict as the batch checker, and so is harness check
    assert result.result.violations == want.violations and result.result.totals == want.totals
    stored, n = check_stored(result.run_dir / "history")
    assert stored.violations == want.violations and n == len(events)
    # and the report's other sections, folded while the run went on, are the batch ones
    assert result.stats["coverage"] == interleavings(events, result.store.capabilities).to_dict()
    plan = Plan.from_json((result.run_dir / "plan.json").read_bytes())
    if plan.faults:
        assert result.stats["faults"] == fault_summary(events, plan.faults)
    if kind is not None:
        assert kind in want.counts()

    sessions, procs = last_positions(events)
    retire_at: dict[int, list[str]] = {}
    for s, i in sessions.items():
        retire_at.setdefault(i, []).append(s)
    end_at: dict[int, list[Any]] = {}
    for p, i in procs.items():
        end_at.setdefault(i, []).append(p)
    checker = StreamChecker()
    judged_early = 0
    for i, e in enumerate(events):
        checker.feed(e)
        for s in retire_at.get(i, ()):
            checker.retire(s)
        for p in end_at.get(i, ()):
            checker.process_ended(p)
        judged_early = checker.retained()["judged_sessions"]
    got = checker.finish()
    assert got.violations == want.violations and got.totals == want.totals
    assert judged_early >= len(sessions) // 2  # most sessions were judged before the end
