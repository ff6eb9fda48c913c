"""scenarios/chaos-postgres.toml against a real PostgreSQL server the run starts (fsync
on): the reference store stays clean under every fault at once, the server's crash and
restart included (every acknowledged commit comes back); what each fault did is in the
report; a fault that does not apply to PostgreSQL is refused before anything starts."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from chaoslib import faults_of

from harness.errors import InputError
from harness.history import read_history
from harness.result import RunResult
from harness.runner.coordinator import run
from harness.scenario import load_scenario

ALL = ("kill", "pause", "disconnect", "lock-hold", "restart")
SCENARIOS = Path(__file__).resolve().parents[2] / "scenarios"


def test_reference_store_is_clean_under_every_fault(chaos: Callable[..., RunResult]) -> None:
    res = chaos("postgres", "postgres", faults_of("postgres", ALL), seed=3, duration=4.0)
    assert res.result.violations == (), [v.message for v in res.result.violations[:3]]
    kinds = res.stats["faults"]["kinds"]
    assert set(kinds) == set(ALL) and all(k["applied"] >= 1 for k in kinds.values()), kinds
    events = read_history(res.run_dir)
    ends = [e.value for e in events if e.f == "restart" and e.value.get("phase") == "end"]
    # the server came back each time, on a new pid, and the run went on to write after it
    assert ends and all("error" not in m and m["pids"] for m in ends), ends
    terminated = [e.value for e in events if e.f == "disconnect"]
    assert any(m.get("clients", 0) >= 1 for m in terminated), terminated
    held = [e.value for e in events if e.f == "lock-hold"]
    assert held and all("error" not in m for m in held), held
    resources = res.stats["resources"]
    assert resources["leaks"] == [] and resources["leftover"] == [], resources
    assert res.stats["completions"].get("ok", 0) >= 100  # the run did its work
    assert res.exit_code == 0


def test_disk_full_is_refused_on_postgres(tmp_path: Path) -> None:
    sc = load_scenario(SCENARIOS / "chaos-postgres.toml").with_overrides(
        faults=({"kind": "disk-full", "every": 1.0},))
    with pytest.raises(InputError, match="applies to sqlite targets only"):
        run(sc, reports=tmp_path)
    assert not any(tmp_path.iterdir())  # refused before a run directory was made
