"""What a run hands on in memory rather than reading back from disk: the progress counts
(from the board the workers mark) and a controlled run's summary (from its controller)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson

from harness.runner.coordinator import run
from harness.scenario import load_scenario

SCENARIOS = Path(__file__).resolve().parents[2] / "scenarios"


def test_progress_counts_the_ops_the_workers_have_begun(tmp_path: Path) -> None:
    # more ops than the workers can do in the duration: the run lasts it, and the wait
    # loop reports progress every 0.5 s meanwhile
    sc = load_scenario(SCENARIOS / "smoke.toml").with_overrides(
        seed=6, workers=2, ops=100_000, duration=1.6)
    seen: list[dict[str, Any]] = []
    res = run(sc, reports=tmp_path, progress=lambda ev, data: seen.append(data)
              if ev == "progress" else None)
    ops = [d["ops"] for d in seen]
    assert len(ops) >= 3 and ops == sorted(ops) and ops[-1] > ops[0], ops
    invokes = res.stats["ops"]  # every op begun logs an invoke, bar the one just marked
    assert ops[-1] <= invokes + sc.workers, (ops, invokes)
    assert all(d["workers"] == 2 for d in seen)


def test_a_controlled_run_reports_its_controllers_summary(tmp_path: Path) -> None:
    sc = load_scenario(SCENARIOS / "smoke.toml").with_overrides(
        seed=7, workers=2, ops=15, control={"enabled": True, "strategy": "random"})
    res = run(sc, reports=tmp_path)
    summary = res.stats["control"]
    assert summary["strategy"] == "random" and summary["decisions"] > 30
    trace = orjson.loads((res.run_dir / "trace.json").read_bytes())
    assert summary == trace["summary"]
    report = orjson.loads((res.run_dir / "report.json").read_bytes())
    assert report["stats"]["control"] == summary
