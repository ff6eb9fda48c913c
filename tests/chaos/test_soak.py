"""Soak: a run many times longer than the smoke run keeps the coordinator's memory flat
while it checks the history as it goes (issue 13). Asserted on the coordinator's own RSS
samples (psutil, every 0.2 s, in report.json's resources), never on time."""

from __future__ import annotations

import statistics
from pathlib import Path

import pytest

from harness.history import is_reader, iter_history
from harness.runner.coordinator import run
from harness.scenario import load_scenario

SCENARIOS = Path(__file__).resolve().parents[2] / "scenarios"


@pytest.mark.slow
def test_a_long_chaos_run_keeps_the_coordinators_memory_flat(tmp_path: Path) -> None:
    # kills, pauses, disk-full and lock-hold; short session generations so that sessions
    # are retired and dropped many times over
    sc = load_scenario(SCENARIOS / "chaos-sqlite.toml").with_overrides(
        seed=11, ops="unlimited", duration=24, session_lifetime=60)
    res = run(sc, reports=tmp_path)
    assert res.verdict == "pass", (res.problems, res.result.counts())
    (coordinator,) = [p for p in res.stats["resources"]["processes"] if p["role"] == "coordinator"]
    rss = coordinator["series"]["rss"]
    assert len(rss) >= 30, len(rss)
    third = len(rss) // 3
    middle, last = rss[third: 2 * third], rss[2 * third:]
    # past the warm-up, what the coordinator holds does not grow with the run
    assert statistics.median(last) <= 1.2 * statistics.median(middle), [r >> 20 for r in rss]
    assert max(last) <= 1.25 * max(middle), [r >> 20 for r in rss]
    # nor do its descriptors: one per killed worker's pipe was once never closed
    fds = coordinator["series"]["fds"]
    kills = res.stats["faults"]["kinds"]["kill"]["applied"]
    assert kills >= 20 and max(fds[third:]) <= max(fds[:third]) + 8, (kills, fds)
    readers = {e.process for e in iter_history(res.run_dir) if is_reader(e.process)}
    assert len(readers) >= 10  # sessions were retired, judged and dropped all along
