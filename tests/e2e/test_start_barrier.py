"""A run starts when its workers are ready: the run's clock (its duration, its fault
schedule) starts once every worker has opened its store; a worker that cannot open within
``open_timeout`` is a setup error when none could, else it is listed in
``stats.opening.failed``; the report gives every worker's time to open."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from opening_stores import SLOW_OPEN_S

from harness.errors import ScenarioError, TargetError
from harness.history import Event, read_history
from harness.runner.coordinator import run
from harness.runner.opening import opening_summary
from harness.scenario import Scenario, from_dict, load_scenario

HERE = Path(__file__).resolve().parent
CHAOS_SQLITE = HERE.parents[1] / "scenarios" / "chaos-sqlite.toml"


@pytest.fixture(autouse=True)
def importable(monkeypatch: pytest.MonkeyPatch) -> None:
    # fork start: the workers inherit sys.path, as they inherit a user's PYTHONPATH
    monkeypatch.syspath_prepend(str(HERE))


def test_a_chaos_run_starts_its_clock_once_a_slow_store_is_open(tmp_path: Path) -> None:
    """Issue 20's case: a correct store that sleeps 3 s in its constructor (as a framework
    that sets up its world when opened does), under a 2.5 s chaos run. Before the barrier
    the faults hit workers still opening, 0 ops, PASS."""
    sc = load_scenario(CHAOS_SQLITE).with_overrides(
        store="opening_stores:SlowOpenStore", duration=2.5, seed=7)
    res = run(sc, reports=tmp_path)
    assert res.exit_code == 0, res.result.counts()
    assert res.stats["worker_ops"] > 0
    opening = res.stats["opening"]
    assert set(opening["workers"]) == {"0", "1", "2", "3"}
    assert all(s >= SLOW_OPEN_S for s in opening["workers"].values()), opening
    assert opening["failed"] == []
    events = read_history(res.run_dir)
    firsts = {0, 1, 2, 3}
    last_open = max(e.time for e in events if e.f == "open" and e.process in firsts)
    # the clock: no first worker ran an op, and no fault came, before all four were open
    assert min(e.time for e in events if e.type == "invoke" and e.process in firsts) > last_open
    assert min(e.time for e in events if e.process == "nemesis") > last_open
    # and it passes on evidence: faults caught ops in flight
    assert sum(k["in_flight"] for k in res.stats["faults"]["kinds"].values()) > 0
    assert res.verdict == "pass", (res.problems, res.result.counts())
    assert opening["run_seconds"] > 0  # the killed slots' replacements opened within the run


def test_a_store_that_never_opens_is_a_setup_error(tmp_path: Path) -> None:
    sc = Scenario(store="opening_stores:NeverOpensStore", seed=1, workers=2, ops=5,
                  duration=1, open_timeout=0.5)
    with pytest.raises(TargetError, match=re.escape(
            "could not be opened: did not open its store within open_timeout = 0.5 s")):
        run(sc, reports=tmp_path)
    assert not any(tmp_path.iterdir())  # no run directory left


def test_a_worker_that_cannot_open_in_time_is_listed_and_the_others_run(tmp_path: Path) -> None:
    sc = Scenario(store="opening_stores:OneNeverOpensStore", backend="sqlite", seed=1,
                  workers=3, ops=20, open_timeout=1)
    res = run(sc, reports=tmp_path)
    failed = res.stats["opening"]["failed"]
    assert len(failed) == 1 and "within open_timeout = 1 s" in failed[0]["error"]
    hung = failed[0]["process"]
    events = read_history(res.run_dir)
    assert [e.type for e in events if e.process == hung] == ["info"]  # its open event
    ran = {e.process for e in events if e.type == "invoke" and e.process != "final"}
    assert ran == {0, 1, 2} - {hung}
    assert set(res.stats["opening"]["workers"]) == {str(p) for p in ran}


def test_open_timeout_must_be_a_positive_finite_number() -> None:
    for bad in (0, -1, float("inf"), "60", 10**9):
        with pytest.raises(ScenarioError, match="open_timeout"):
            from_dict({"open_timeout": bad})
    assert from_dict({"open_timeout": 2.5}).open_timeout == 2.5
    assert "open_timeout = 2.5" in from_dict({"open_timeout": 2.5}).to_toml()


def _ev(i: int, t: float, process: object, type: str, f: str, value: object = None) -> Event:
    return Event(i, int(t * 1e9), process, type, f, None, value)


def test_opening_summary_counts_faults_on_a_replacement_still_opening() -> None:
    """Slot 0's process 0 opens in 1 s; the clock runs from 1 s to 11 s; a kill at 2 s
    starts replacement 2, which opens for 3 s (to 5 s); a pause aimed at it at 3 s lands
    on a worker still opening, one at 6 s does not."""
    events = [
        _ev(0, 1.0, 0, "ok", "open", {"seconds": 1.0}),
        _ev(1, 1.0, 1, "ok", "open", {"seconds": 0.5}),
        _ev(2, 2.0, "nemesis", "info", "kill", {"id": 0, "process": 0, "replaced_by": 2}),
        _ev(3, 3.0, "nemesis", "info", "pause", {"id": 1, "process": 2}),
        _ev(4, 5.0, 2, "ok", "open", {"seconds": 3.0}),
        _ev(5, 6.0, "nemesis", "info", "pause", {"id": 2, "process": 2}),
        _ev(6, 12.0, "final", "ok", "open", {"seconds": 0.25}),
    ]
    s = opening_summary(events, 2, (int(1e9), int(11e9)), 60.0)
    assert s["workers"] == {"0": 1.0, "1": 0.5}
    assert s["replacements"] == {"2": 3.0}
    assert s["final_read"] == 0.25
    assert s["faults_on_opening"] == 1
    assert s["run_seconds"] == 3.0 and s["run_share"] == 0.15
