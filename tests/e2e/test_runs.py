"""End to end: real worker processes against a real SQLite file or a redis-server the run
starts itself. Reference stores exit 0 with zero violations; each zoo store exits 1 with
the violation kind that names its bug."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.result import RunResult
from harness.runner.coordinator import run
from harness.scenario import load_scenario
from harness.stores import BUILTINS

SCENARIOS = Path(__file__).resolve().parents[2] / "scenarios"

#: zoo store -> the scenario that tells its story, for the stores that concurrency alone
#: exposes (those a fault exposes are in tests/chaos), from their declarations
STORY = {name: info.scenario for name, info in BUILTINS.items()
         if info.expected is not None and info.fault is None and info.scenario is not None}
#: backend -> its reference store
REFERENCE = {info.backend: name for name, info in BUILTINS.items() if info.expected is None}
#: (scenario, store): each reference store passes each scenario of its backend's zoo
CLEAN = [("smoke.toml", "sqlite"),
         *sorted({(sc, REFERENCE[BUILTINS[zoo].backend]) for zoo, sc in STORY.items()})]


def _run(tmp_path: Path, scenario: str, store: str, seed: int, **kw: object) -> RunResult:
    sc = load_scenario(SCENARIOS / scenario).with_overrides(store=store, seed=seed, **kw)
    return run(sc, reports=tmp_path)


@pytest.mark.parametrize("store", sorted(STORY))
def test_zoo_store_is_caught_with_its_kind(store: str, tmp_path: Path) -> None:
    res = _run(tmp_path, STORY[store], store, seed=11)
    info = BUILTINS[store]
    # its kind, or one its declaration says may name it too (a back-dated turn whose reads
    # overlap in time is an incompatible order: the evidence cannot say which way it went)
    kinds = {info.expected, *info.also_caught_as}
    assert res.exit_code == 1, res.result.counts()
    assert kinds & set(res.result.counts()), res.result.counts()
    v = next(v for v in res.result.violations if v.kind in kinds)
    assert v.events and v.message
    assert (res.run_dir / "report.json").is_file()
    assert (res.run_dir / "history" / "final.jsonl.zst").is_file()


@pytest.mark.parametrize("scenario, store", CLEAN)
def test_reference_store_is_clean(scenario: str, store: str, tmp_path: Path) -> None:
    res = _run(tmp_path, scenario, store, seed=5)
    assert res.result.violations == (), [v.message for v in res.result.violations[:3]]
    assert res.exit_code == 0
    ok = res.stats["completions"].get("ok", 0)
    assert ok >= res.stats["ops"] * 0.9  # the run really did its work
    # completions are ops' only (the workers' open events are not ops)
    assert sum(res.stats["completions"].values()) <= res.stats["ops"]


def test_same_seed_same_plan(tmp_path: Path) -> None:
    a = _run(tmp_path / "a", "smoke.toml", "sqlite", seed=3, ops=20)
    b = _run(tmp_path / "b", "smoke.toml", "sqlite", seed=3, ops=20)
    assert (a.run_dir / "plan.json").read_bytes() == (b.run_dir / "plan.json").read_bytes()
    assert "--seed 3" in a.reproduce


def test_a_run_with_unlimited_ops_is_bounded_by_its_duration(tmp_path: Path) -> None:
    """No ops bound: the workers run until the duration, the final read covers the
    sessions they reached (every generation, none past), and the run passes."""
    import time

    from harness.history import is_reader, read_history
    from harness.scenario import session_generation

    started = time.monotonic()
    res = _run(tmp_path, "smoke.toml", "sqlite", seed=6, ops="unlimited", duration=2.0,
               session_lifetime=200)
    assert time.monotonic() - started < 2.0 + 10  # the duration, then the check
    assert res.exit_code == 0, res.result.counts()
    assert res.stats["worker_ops"] > 4 * 200  # past the first generation of sessions
    plan_json = (res.run_dir / "plan.json").read_bytes()
    assert len(plan_json) < 1000 and b"streams" not in plan_json
    assert 'ops = "unlimited"' in (res.run_dir / "scenario.toml").read_text()
    assert "--ops unlimited" in res.reproduce
    events = read_history(res.run_dir)
    worked = {e.session for e in events
              if e.session and not is_reader(e.process) and e.process != "nemesis"}
    readers: dict[str, set[object]] = {}  # session -> the quiescent readers that read it
    for e in events:
        if e.session and is_reader(e.process):
            readers.setdefault(e.session, set()).add(e.process)
    top = max(session_generation(s) for s in worked)
    # every session the workers touched had one quiescent read: generations retired during
    # the run by read-<n> readers, the rest by the final read
    assert top >= 1 and worked <= set(readers)
    assert all(len(r) == 1 for r in readers.values()), readers
    retired = {s for s, r in readers.items() if r != {"final"}}
    assert retired and max(map(session_generation, retired)) < min(
        session_generation(s) for s, r in readers.items() if r == {"final"})
    # the final read covers the generations the board says the workers reached: one past
    # the logs' top when a worker marked its next op and the deadline stopped it there
    assert top <= max(map(session_generation, readers)) <= top + 1
