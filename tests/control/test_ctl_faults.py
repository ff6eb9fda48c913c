"""Faults in controlled mode: each lands before a scheduling decision, so a seed (or a
trace) gives the same faults at the same storage commands and the same history; the
reference stores stay clean under every fault; a fault-only bug is caught the same way
every time; shrink keeps a fault the failure needs and drops one it does not."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from ctl_helpers import scenario

from harness.errors import ScenarioError
from harness.history import read_history
from harness.plan import make_plan
from harness.replay import compare_runs, replay, run_repro
from harness.runner.control import read_trace
from harness.scenario import PayloadSpec, from_dict, load_scenario
from harness.shrink import shrink

SCENARIOS = Path(__file__).resolve().parents[2] / "scenarios"
KINDS = {"sqlite": {"kill", "pause", "disk-full", "lock-hold"},
         "redis": {"kill", "pause", "disconnect", "restart"}}


def test_kill_at_a_decision_replays_exactly(run_ctl: Any, tmp_path: Path) -> None:
    """Kill worker 1 before decision 30: the trace says at which storage command it
    landed; its op stays unknown and process 3 continues the slot; replaying from the
    trace and from the seed gives the same history, faults and violations."""
    faults = [{"kind": "kill", "worker": 1, "at_step": 30},
              {"kind": "pause", "worker": 0, "at_step": 10, "for_steps": 8}]
    a = run_ctl(scenario("zoo.sqlite-max-turn-race", seed=1, strategy="random", workers=3,
                         ops=10, weights={"append": 3, "read": 1}, faults=faults))
    assert a.result.valid is False, "the random walk should break this store"
    kill, pause = read_trace(a.run_dir).faults
    assert kill["step"] == 30 and kill["process"] == 1 and kill["point"], kill
    assert pause["step"] == 10 and pause["for_steps"] == 8
    events = read_history(a.run_dir)
    (killed,) = [e for e in events if e.f == "kill"]
    assert killed.value["step"] == 30 and killed.value["replaced_by"] == 3
    last = [e for e in events if e.process == 1][-1]
    assert last.type == "invoke", "the op the kill caught never completes"
    assert any(e.process == 3 for e in events), "a new process continues the slot"
    grants_to_0 = read_trace(a.run_dir).grants[10:18]
    assert 0 not in grants_to_0, "a paused worker is granted nothing"

    for source in ("trace", "seed"):
        b = replay(a.run_dir, source=source, reports=tmp_path / source)
        fid = compare_runs(a.run_dir, b.run_dir)
        assert fid.faithful and fid.same_trace, f"from the {source}: {fid.line()}"
        assert read_trace(b.run_dir).faults == read_trace(a.run_dir).faults
        assert b.result.counts() == a.result.counts()


def test_unflushed_pipeline_is_caught_under_controlled_kills(run_ctl: Any) -> None:
    """Appends acknowledged before they are sent: the kills (times drawn from the seed,
    moved onto decisions) take them with the process. Same seed, same lost turns."""
    sc = scenario("zoo.redis-unflushed-pipeline", seed=2, workers=2, ops=12,
                  weights={"append": 1}).with_overrides(
        duration=6, faults=({"kind": "kill", "every": 1.5},))
    assert all("at_step" in f for f in make_plan(sc, 2).faults)
    a, b = run_ctl(sc), run_ctl(sc)
    assert "lost-turn" in a.result.counts(), a.result.counts()
    fid = compare_runs(a.run_dir, b.run_dir)
    assert fid.faithful and fid.same_trace, fid.line()
    assert a.result.counts() == b.result.counts()
    unfaulted = run_ctl(sc.with_overrides(faults=()))
    assert "lost-turn" not in unfaulted.result.counts(), "only the kill loses them"


@pytest.mark.parametrize("backend", ["sqlite", "redis"])
def test_reference_store_is_clean_under_every_fault(backend: str, run_ctl: Any,
                                                    tmp_path: Path) -> None:
    """The chaos scenario (every fault that applies; Redis with appendfsync always),
    controlled: no violation, every kind applied, nothing left running, and a replay
    from the trace repeats it exactly (restarts and lock holds included)."""
    sc = load_scenario(SCENARIOS / f"chaos-{backend}.toml").with_overrides(
        seed=1, workers=3, ops=30, payload=PayloadSpec(max_bytes=2000, long_rate=0.05),
        control={"enabled": True, "strategy": "random"})
    a = run_ctl(sc)
    assert a.result.violations == (), [v.message for v in a.result.violations[:3]]
    kinds = a.stats["faults"]["kinds"]
    assert set(kinds) == KINDS[backend], kinds
    assert all(k["applied"] >= 1 for k in kinds.values()), kinds
    assert kinds["kill"]["in_flight"] >= 1 and kinds["kill"]["outcomes"] == {
        "None": kinds["kill"]["in_flight"]}
    assert a.stats["resources"]["leftover"] == []
    t = read_trace(a.run_dir)
    assert not t.divergences and not t.blocked and t.summary()["faults"] >= len(KINDS[backend])
    b = replay(a.run_dir, reports=tmp_path / "replay")
    fid = compare_runs(a.run_dir, b.run_dir)
    assert fid.faithful and fid.same_trace, fid.line()


@pytest.mark.parametrize(("store", "seed", "at", "keeps"), [
    ("zoo.sqlite-crash-resume", 2, 50, True),  # only a process that dies exposes it
    ("zoo.sqlite-max-turn-race", 1, 25, False),  # a race: the kill is beside the point
])
def test_shrink_keeps_a_needed_fault_and_drops_the_others(
        store: str, seed: int, at: int, keeps: bool, run_ctl: Any, tmp_path: Path) -> None:
    sc = scenario(store, seed=seed, workers=2, ops=6, strategy="random",
                  weights={"append": 3, "read": 1},
                  faults=[{"kind": "kill", "worker": 0, "at_step": at}])
    failing = run_ctl(sc)
    assert "lost-turn" in failing.result.counts(), failing.result.counts()

    r = shrink(failing.run_dir, out=tmp_path / "repro", max_runs=60, budget_s=40)
    assert r.kind == "lost-turn" and r.reference_passes
    assert r.case.ops < r.original.ops
    repro = load_scenario(r.repro)
    assert repro.faults == ()
    if keeps:
        assert [f["kind"] for f in r.case.faults] == ["kill"], r.case
        assert repro.control["faults"] == [dict(f) for f in r.case.faults]
        again = run_repro(r.repro, tmp_path / "again")
        assert "lost-turn" in again.result.counts()
        assert read_trace(again.run_dir).faults[0]["step"] == r.case.faults[0]["at_step"]
    else:
        assert r.case.faults == () and "faults" not in repro.control, r.case


def test_a_pause_with_nothing_else_to_run_ends_early(run_ctl: Any) -> None:
    res = run_ctl(scenario("sqlite", seed=1, workers=1, ops=3, faults=[
        {"kind": "pause", "worker": 0, "at_step": 2, "for_steps": 500}]))
    end = [e.value for e in read_history(res.run_dir) if e.f == "pause"][-1]
    assert end["phase"] == "end" and end["cut"] is True and end["step"] == 2
    assert res.result.valid is True


def test_timed_faults_move_onto_decisions_by_the_seed() -> None:
    sc = scenario("sqlite", seed=1, workers=2, ops=50).with_overrides(
        duration=6, faults=({"kind": "kill", "every": 1.5}, {"kind": "pause", "at": 3.0,
                                                             "duration": 0.6}))
    a, b = make_plan(sc, 7).faults, make_plan(sc, 8).faults
    assert a == make_plan(sc, 7).faults and a != b
    estimate = 2 * 100 + 2 * 2  # two decisions per op and per worker
    (pause,) = [f for f in a if f["kind"] == "pause"]
    assert pause["at_step"] == estimate // 2 and pause["for_steps"] == round(estimate / 10)
    kills = [f for f in a if f["kind"] == "kill"]
    assert len(kills) == 4 and all(0 <= f["worker"] < 2 for f in kills)
    assert all(k * estimate // 4 <= f["at_step"] < (k + 1) * estimate // 4
               for k, f in enumerate(kills))
    assert "at" not in kills[0] and "stall" not in kills[0]


@pytest.mark.parametrize(("faults", "message"), [
    ([{"kind": "flood", "at_step": 1}], "unknown fault kind 'flood'"),
    ([{"kind": "kill", "at_step": 1}], "a kill fault needs worker"),
    ([{"kind": "restart"}], "a restart fault needs at_step"),
    ([{"kind": "kill", "worker": 0, "at_step": -1}], "at_step must be an integer >= 0"),
    ([{"kind": "kill", "worker": 5, "at_step": 1}], "worker must be a worker slot from 0"),
    ([{"kind": "pause", "worker": 0, "at_step": 1, "for_steps": 0}], "for_steps must be"),
    ([{"kind": "kill", "worker": 0, "at_step": 1, "for_steps": 3}], "unknown key 'for_steps'"),
    ([{"kind": "kill", "worker": 0, "at": 1.0}], "unknown key 'at'"),
    ({"kind": "kill"}, "control.faults must be an array"),
])
def test_control_faults_are_validated(faults: Any, message: str) -> None:
    with pytest.raises(ScenarioError, match=message):
        from_dict({"workers": 2, "control": {"enabled": True, "faults": faults}})


def test_controlled_mode_takes_faults_and_free_mode_refuses_decisions() -> None:
    sc = from_dict({"workers": 2, "control": {"enabled": True},
                    "faults": [{"kind": "kill", "at": 1.0}]})
    assert make_plan(sc, 1).faults[0]["kind"] == "kill"
    free = from_dict({"workers": 2, "control": {"faults": [
        {"kind": "restart", "at_step": 3}]}}, source="x.toml")
    with pytest.raises(ScenarioError, match=r"control\.faults .* needs controlled mode"):
        make_plan(free, 1)
