"""Interleaving coverage of real runs: a Redis run's appends overlap its reads, a scenario
without rollbacks names the rollback pairs as never overlapped, and ``harness check``
computes the same coverage from the stored history (recheck.json, the console)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import orjson

from harness.runner.coordinator import run
from harness.scenario import load_scenario

SCENARIOS = Path(__file__).resolve().parents[2] / "scenarios"


def test_a_redis_run_without_rollbacks_says_what_it_never_overlapped(
        tmp_path: Path, redis_url: str) -> None:
    sc = load_scenario(SCENARIOS / "redis-append-race.toml").with_overrides(
        store="redis", seed=4, ops=150)
    res = run(sc, reports=tmp_path, redis_url=redis_url)
    assert res.exit_code == 0
    report = orjson.loads((res.run_dir / "report.json").read_bytes())
    cov = report["coverage"]
    assert "coverage" not in report["stats"]
    assert cov["kinds"] == ["append", "read", "snapshot", "rollback", "list_snapshots"]
    assert cov["pairs"]["append+read"] > 0 and cov["pairs"]["append+append"] > 0
    assert cov["ops"]["rollback"] == 0
    never = {n["pair"]: n["sentence"] for n in cov["never"]}
    assert {f"{k}+rollback" for k in ("append", "read", "snapshot")} | {
        "rollback+rollback", "rollback+list_snapshots"} <= set(never)
    assert never["read+rollback"] == ("rollback never overlapped a read: this run says "
                                      "nothing about what readers see during a rollback")
    assert sum(sum(s.values()) for s in cov["sessions"].values()) == cov["overlaps"]

    out = subprocess.run([sys.executable, "-m", "harness", "check", str(res.run_dir)],
                         text=True, capture_output=True, check=False)
    assert out.returncode == 0, out.stderr
    assert "coverage:" in out.stdout and "never overlapped" in out.stdout
    recheck = orjson.loads((res.run_dir / "recheck.json").read_bytes())
    assert recheck["coverage"] == cov  # the run's store kinds, read back from report.json


def test_a_directory_of_logs_gets_the_coverage_the_run_reported(tmp_path: Path) -> None:
    # 300 ops a worker: with 60, a loaded machine once ran them without one append
    # overlapping a read, and the sanity check below has nothing to compare
    sc = load_scenario(SCENARIOS / "smoke.toml").with_overrides(store="sqlite", seed=2, ops=300)
    res = run(sc, reports=tmp_path)
    logs = res.run_dir / "history"
    out = subprocess.run([sys.executable, "-m", "harness", "check", str(logs)],
                         text=True, capture_output=True, check=False)
    assert out.returncode == 0, out.stderr
    assert "coverage:" in out.stdout
    report = orjson.loads((res.run_dir / "report.json").read_bytes())
    assert report["coverage"]["pairs"]["append+read"] > 0
    recheck = orjson.loads((logs / "recheck.json").read_bytes())
    assert recheck["coverage"]["pairs"] == report["coverage"]["pairs"]  # the same history
