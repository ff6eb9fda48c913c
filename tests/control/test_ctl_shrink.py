"""`shrink` cuts a failing controlled run to a minimal one and writes a pytest test that
fails on the buggy store and passes on the reference store; the CLI ties it together."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from ctl_helpers import scenario

from harness.replay import search
from harness.scenario import load_scenario
from harness.shrink import shrink

REFERENCE = {"zoo.redis-rmw-append": "redis", "zoo.sqlite-max-turn-race": "sqlite"}


def _pytest(test: Path, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        # no langsmith plugin: its import is ~1.3 s of CPU per pytest process (pyproject.toml)
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:langsmith_plugin",
         test.name],
        cwd=test.parent, capture_output=True, text=True, timeout=120,
        env={**os.environ, **env})


@pytest.mark.parametrize("store", sorted(REFERENCE))
def test_shrink_to_two_workers_and_a_regression_test(store: str, tmp_path: Path) -> None:
    # three workers, two sessions: the shrink still drops a worker, cuts most ops and
    # merges the sessions; four workers x 30 ops took 40-45 candidate runs, this 25-37
    sc = scenario(store, seed=100, workers=3, ops=20, strategy="pct",
                  weights={"append": 6, "read": 3})
    failing = search(sc, schedules=10, reports=tmp_path / "runs")
    assert failing.result.valid is False

    r = shrink(failing.run_dir, out=tmp_path / "repro", budget_s=100)
    assert r.kind == "lost-turn"
    assert len(r.case.streams) == 2, r.case
    assert r.case.ops <= 4, r.case
    assert r.case.sessions == 1
    assert len(r.case.trace) < len(r.original.trace)
    assert r.reference == REFERENCE[store] and r.reference_passes

    repro = load_scenario(r.repro)
    assert repro.workers == 2 and repro.control["trace"] and repro.control["streams"]
    on_zoo = _pytest(r.test)
    assert on_zoo.returncode == 1, on_zoo.stdout
    assert "lost-turn" in on_zoo.stdout
    on_reference = _pytest(r.test, HARNESS_REPRO_STORE=REFERENCE[store])
    assert on_reference.returncode == 0, on_reference.stdout


def test_cli_run_controlled_replay_and_shrink(tmp_path: Path) -> None:
    scenario_file = Path(__file__).resolve().parents[2] / "scenarios" / "sqlite-max-turn-race.toml"
    reports = tmp_path / "reports"

    def harness(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "harness", *args], capture_output=True,
                              text=True, timeout=300, cwd=tmp_path)

    ran = harness("run", str(scenario_file), "--controlled", "--strategy", "random",
                  "--seed", "1", "--schedules", "5", "--ops", "20", "--workers", "3",
                  "--reports", str(reports), "-q")
    assert ran.returncode == 1, ran.stdout + ran.stderr
    assert "--controlled --strategy random" in ran.stdout
    run_dir = max(reports.iterdir(), key=lambda p: p.stat().st_mtime)

    replayed = harness("replay", str(run_dir), "--runs", "2", "--reports", str(reports))
    assert replayed.returncode == 1, replayed.stdout + replayed.stderr
    assert "fidelity: 2/2 replays" in replayed.stdout

    shrunk = harness("shrink", str(run_dir), "--out", str(tmp_path / "out"))
    assert shrunk.returncode == 0, shrunk.stdout + shrunk.stderr
    assert "-> 2 workers" in shrunk.stdout
    assert "passes" in shrunk.stdout
    assert (tmp_path / "out" / "test_repro_lost_turn.py").is_file()

    free = harness("replay", str(reports / "nope"))
    assert free.returncode == 2
