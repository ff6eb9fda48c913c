"""scenarios/chaos-sqlite.toml against a real SQLite file: the reference store stays clean
under every fault at once; each zoo store whose bug only a fault exposes is caught under
that fault and stays hidden under the others."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

import pytest
from chaoslib import caught_as, fault_exposed, faults_of

from harness.history import iter_ops, read_history, turn_token
from harness.plan import BLOCK, Plan
from harness.result import RunResult
from harness.stores import BUILTINS

ALL = ("kill", "pause", "disk-full", "lock-hold")

#: the zoo stores of this backend that a fault exposes, from their declarations
BUGS = fault_exposed("sqlite")
#: zoo store -> fault tweaks that make a short run catch it (a store not listed: none)
SHORT: dict[str, dict[str, dict[str, Any]]] = {
    "zoo.sqlite-swallow-full": {"disk-full": {"every": 0.8}},
    "zoo.sqlite-locked-write-behind": {"lock-hold": {"every": 0.8}},
}


def test_reference_store_is_clean_under_every_fault(chaos: Callable[..., RunResult]) -> None:
    res = chaos("sqlite", "sqlite", faults_of("sqlite", ALL), seed=3, duration=3.0)
    assert res.result.violations == (), [v.message for v in res.result.violations[:3]]
    faults, resources = res.stats["faults"], res.stats["resources"]
    assert set(faults["kinds"]) == set(ALL)
    assert all(k["applied"] >= 1 for k in faults["kinds"].values()), faults["kinds"]
    assert faults["kinds"]["kill"]["in_flight"] >= 1  # a kill that hit nothing proves little
    events = read_history(res.run_dir)
    # disk full: writes fail as `fail` with SQLite's own error, never silently
    full = [e for e in events if e.type == "fail" and "database or disk is full" in (e.error or "")]
    assert full and all(e.f in ("append", "snapshot", "rollback") for e in full)
    # killed slots continued under new process numbers
    workers = {e.process for e in events if isinstance(e.process, int)}
    assert max(workers) >= 4
    assert resources["leaks"] == [], resources["leaks"]
    assert resources["leftover"] == []
    roles = {p["role"] for p in resources["processes"]}
    assert {"coordinator", "worker", "nemesis"} <= roles  # nemesis: the lock holders
    assert res.exit_code == 0


def test_a_killed_slot_continues_its_own_stream_after_its_op_in_flight(
        chaos: Callable[..., RunResult]) -> None:
    """Unlimited ops, bounded by the duration, kills every 0.3 s: each slot's appends,
    over all the processes that ran it, are its plan stream's ops (drawn again from
    plan.json), in order, none run twice, and the replacements go on past the first
    block of drawn ops."""
    kills = ({"kind": "kill", "every": 0.3},)
    res = chaos("sqlite", "sqlite", kills, seed=4, duration=3.5)  # >= 4 kills with room on a loaded machine
    assert res.exit_code == 0, res.result.counts()
    assert res.stats["faults"]["kinds"]["kill"]["applied"] >= 4
    plan = Plan.from_json((res.run_dir / "plan.json").read_bytes())
    assert plan.total_ops is None
    appended: dict[int, list[tuple[int, int | str, str]]] = {}  # slot -> (n, process, token)
    for e in read_history(res.run_dir):
        if e.type == "invoke" and e.f == "append" and isinstance(e.process, int):
            slot, n = e.value[1].split("|", 1)[0][1:].split(".")
            appended.setdefault(int(slot), []).append((int(n), e.process, e.value[1]))
    assert len({p for ops in appended.values() for _, p, _ in ops}) > plan.workers  # replaced
    for slot, ops in appended.items():
        ns = [n for n, _, _ in ops]
        assert ns == sorted(set(ns)), f"slot {slot} ran an op twice or out of order"
        stream = list(itertools.islice(plan.stream(slot), ns[-1] + 1))
        assert all(turn_token(stream[n].content or "") == tok for n, _, tok in ops)
    assert max(n for ops in appended.values() for n, _, _ in ops) >= BLOCK


@pytest.mark.parametrize("store", BUGS)
def test_zoo_bug_is_caught_under_its_fault(store: str, chaos: Callable[..., RunResult]) -> None:
    info = BUILTINS[store]
    assert info.fault in ALL, "the chaos scenario must hold the fault that exposes it"
    res = chaos("sqlite", store, faults_of("sqlite", [info.fault], SHORT.get(store)), seed=2)
    assert res.exit_code == 1, (res.result.counts(), res.stats["faults"]["kinds"])
    assert caught_as(info) & set(res.result.counts()), res.result.counts()
    assert res.stats["resources"]["leftover"] == []


@pytest.mark.parametrize("store", BUGS)
def test_zoo_bug_stays_hidden_under_the_other_faults(
        store: str, chaos: Callable[..., RunResult]) -> None:
    info = BUILTINS[store]
    others = [k for k in ALL if k != info.fault and k not in info.also_exposed_by]
    res = chaos("sqlite", store, faults_of("sqlite", others), seed=2)
    assert res.result.violations == (), [v.message for v in res.result.violations[:3]]
    assert res.stats["faults"]["applied"] >= 1


def test_disk_full_strikes_at_once_in_workers_forked_from_a_large_heap(
        chaos: Callable[..., RunResult]) -> None:
    """Workers forked from a large process (here, this one with three million more objects)
    inherit its heap; a disk-full switch that scanned it for connections spent most of a
    short fault doing so, and writes saw almost none of it (0 or 1 failed writes in three
    runs, measured). Tracked connections make the switch take effect at once: of the
    appends that ran inside a fault's window, most fail (about 88%, measured; an append
    that fits in a page with room left succeeds). Counted as a share of the appends in the
    windows, not as a number, so a loaded machine that runs fewer ops passes too."""
    heap = [[i] for i in range(3_000_000)]
    res = chaos("sqlite", "sqlite", faults_of("sqlite", ["disk-full"], {"disk-full": {"duration": 0.8}}),
                seed=1, duration=3.0)
    assert len(heap) == 3_000_000 and res.exit_code == 0, res.result.counts()
    assert res.stats["faults"]["applied"] >= 1
    events = read_history(res.run_dir)
    marks = [e.time for e in events if e.process == "nemesis" and e.f == "disk-full"]
    windows = list(zip(marks[::2], marks[1::2], strict=True))  # each fault: start, end
    inside = [comp for inv, comp in iter_ops(events) if inv.f == "append" and comp is not None
              and any(a <= inv.time and comp.time <= b for a, b in windows)]
    full = [c for c in inside if c.type == "fail" and "database or disk is full" in (c.error or "")]
    assert len(inside) >= 20, (windows, len(inside))  # the workers ran during the faults
    assert len(full) >= 0.5 * len(inside), (len(full), len(inside))
