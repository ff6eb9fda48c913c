"""Fault tables, the schedule drawn from the seed, the refusal of faults that do not apply,
where faults landed (from a literal history), and the leak test: all pure, milliseconds."""

from __future__ import annotations

from typing import Any

import pytest

from harness.errors import InputError, ScenarioError
from harness.history import Event
from harness.plan import fault_schedule, make_plan
from harness.runner.nemesis import check_faults, fault_summary
from harness.runner.supervise import steady_growth
from harness.scenario import Scenario, from_dict


def _sc(faults: list[dict[str, Any]], **kw: Any) -> Scenario:
    return from_dict({"workers": 4, "duration": 3.0, "faults": faults, **kw})


def test_schedule_is_a_function_of_the_seed() -> None:
    sc = _sc([{"kind": "kill", "every": 0.5}, {"kind": "pause", "at": 1.0, "duration": 2.0,
                                               "worker": 1}])
    a, b, c = (make_plan(sc, s).faults for s in (7, 7, 8))
    assert a == b and a != c
    assert make_plan(sc, 7).to_json() == make_plan(sc, 7).to_json()
    kills = [f for f in a if f["kind"] == "kill"]
    assert len(kills) == 6  # one in each half second of the 3 s run
    assert all(k * 0.5 <= f["at"] < (k + 1) * 0.5 for k, f in enumerate(kills))
    assert all(0 <= f["worker"] < 4 for f in kills)
    (pause,) = [f for f in a if f["kind"] == "pause"]
    assert (pause["at"], pause["duration"], pause["worker"]) == (1.0, 2.0, 1)
    assert [f["id"] for f in a] == list(range(len(a)))
    assert [f["at"] for f in a] == sorted(f["at"] for f in a)


def test_every_honours_start_stop_count_and_kind_defaults() -> None:
    sc = _sc([{"kind": "disk-full", "every": 0.2, "start": 1.0, "stop": 2.0},
              {"kind": "lock-hold", "every": 0.1, "count": 3},
              {"kind": "disconnect", "at": 0.5},
              {"kind": "restart", "at": 9.0}])  # after the run's 3 s: never
    faults = fault_schedule(sc, 1)
    disk = [f for f in faults if f["kind"] == "disk-full"]
    assert len(disk) == 5 and all(1.0 <= f["at"] < 2.0 for f in disk)
    assert all(f["duration"] == 0.5 for f in disk)  # the kind's default
    assert len([f for f in faults if f["kind"] == "lock-hold"]) == 3
    (disc,) = [f for f in faults if f["kind"] == "disconnect"]
    assert disc["stall"] == 0.05 and "worker" in disc
    assert not [f for f in faults if f["kind"] == "restart"]


@pytest.mark.parametrize("fault, says", [
    ({"kind": "flood", "at": 1}, "unknown fault kind 'flood'"),
    ({"kind": "kill", "at": 1, "duration": 2}, "unknown key 'duration' for a kill fault"),
    ({"kind": "pause", "at": 1, "every": 1}, "exactly one of at"),
    ({"kind": "pause"}, "exactly one of at"),
    ({"kind": "kill", "at": 1, "count": 2}, "goes with every"),
    ({"kind": "kill", "every": 0}, "every must be"),
    ({"kind": "kill", "at": 1, "worker": 4}, "worker must be a worker slot from 0 to 3"),
    ({"kind": "pause", "at": 1, "duration": -1}, "duration must be a positive"),
    ({"kind": "disconnect", "at": 1, "stall": 5}, "stall must be between"),
    ({"kind": "disk-full", "every": 1, "start": 2, "stop": 1}, "stop must be"),
])
def test_bad_fault_tables_are_scenario_errors(fault: dict[str, object], says: str) -> None:
    with pytest.raises(ScenarioError, match="faults\\[0\\]") as err:
        _sc([fault])
    assert says in str(err.value)


def test_worker_is_checked_again_when_workers_are_overridden() -> None:
    sc = _sc([{"kind": "kill", "at": 1, "worker": 3}])
    with pytest.raises(ScenarioError, match="worker must be"):
        sc.with_overrides(workers=2)


def test_faults_that_do_not_apply_or_destroy_external_state_are_refused() -> None:
    sqlite_only = [{"kind": "disk-full"}]
    with pytest.raises(InputError, match="applies to sqlite targets only"):
        check_faults(sqlite_only, "redis", external=False)
    with pytest.raises(InputError, match="--allow-destructive-faults"):
        check_faults([{"kind": "restart"}], "redis", external=True)
    check_faults([{"kind": "restart"}], "redis", external=True, allow_destructive=True)
    check_faults([{"kind": "restart"}, {"kind": "kill"}], "redis", external=False)


def _e(i: int, t: int, process: int | str, type_: str, f: str, value: Any = None) -> Event:
    return Event(index=i, time=t, process=process, type=type_, f=f,
                 session=None if process == "nemesis" else "s0", value=value)


def test_fault_summary_says_what_each_fault_caught_in_flight() -> None:
    faults: list[dict[str, Any]] = [{"id": 0, "kind": "kill", "at": 0.1, "worker": 0},
              {"id": 1, "kind": "pause", "at": 0.2, "worker": 1, "duration": 0.1},
              {"id": 2, "kind": "disk-full", "at": 0.3, "duration": 0.1},
              {"id": 3, "kind": "kill", "at": 0.4, "worker": 1},
              {"id": 4, "kind": "kill", "at": 9.0, "worker": 0}]  # never reached
    h = [
        _e(0, 10, 0, "invoke", "append", ["user", "a"]),
        _e(1, 15, "nemesis", "info", "kill", {"id": 0, "slot": 0, "process": 0}),
        _e(2, 18, 1, "invoke", "read"),
        _e(3, 20, "nemesis", "info", "pause", {"id": 1, "phase": "start", "process": 1}),
        _e(4, 25, 1, "ok", "read", []),
        _e(5, 30, "nemesis", "info", "pause", {"id": 1, "phase": "end", "process": 1}),
        _e(6, 31, 4, "invoke", "append", ["user", "b"]),
        _e(7, 32, "nemesis", "info", "disk-full", {"id": 2, "phase": "start"}),
        _e(8, 33, 4, "fail", "append", ["user", "b"]),
        _e(9, 34, 1, "invoke", "read"),
        _e(10, 35, 1, "ok", "read", []),
        _e(11, 40, "nemesis", "info", "disk-full", {"id": 2, "phase": "end"}),
        _e(12, 50, "nemesis", "info", "kill", {"id": 3, "skipped": "finished"}),
    ]
    s = fault_summary(h, faults)
    assert (s["scheduled"], s["applied"], s["skipped"], s["not_reached"]) == (5, 3, 1, 1)
    kill, pause, disk = s["kinds"]["kill"], s["kinds"]["pause"], s["kinds"]["disk-full"]
    assert kill["in_flight"] == 1 and kill["in_flight_writes"] == 1
    assert kill["outcomes"] == {"None": 1}  # the killed op never completed
    assert pause["in_flight"] == 1 and pause["ops"] == {"read": 1}
    assert pause["outcomes"] == {"ok": 1} and pause["in_flight_writes"] == 0
    assert disk["in_flight"] == 1 and disk["errors_during"] == 1
    assert [r["id"] for r in s["faults"]] == [0, 1, 2]


def test_steady_growth_is_growth_through_the_whole_series() -> None:
    mib = 1 << 20
    assert steady_growth([100 * mib + k * 4 * mib for k in range(12)], 8 * mib)
    warm_then_flat = [100 * mib] * 2 + [140 * mib] * 10
    assert not steady_growth(warm_then_flat, 8 * mib)
    assert not steady_growth([10, 20, 30, 40], 8)  # too few samples to say
    assert not steady_growth([100 * mib + k for k in range(12)], 8 * mib)  # too little
    assert steady_growth([10 + 3 * k for k in range(20)], 8)  # descriptors piling up

