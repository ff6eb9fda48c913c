"""A kind from outside the built-in catalog runs end to end with no other edit: the no-op
kind, registered for the test, is validated, planned, taken by both nemeses (at times and
at scheduling decisions) and lands in the history, the fault summary and the trace."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from harness.faults import NoOp, registered
from harness.history import read_history
from harness.runner.control import read_trace
from harness.runner.coordinator import run
from harness.scenario import from_dict


def _scenario(**kw: Any) -> Any:
    return from_dict({"store": "sqlite", "seed": 5, "workers": 2, "sessions": 2, **kw})


def test_a_registered_kind_is_applied_at_times(tmp_path: Path) -> None:
    with registered(NoOp()):
        # five faults in the first half second, while the workers (more ops than they can
        # do) surely run: the nemesis applies faults only while some worker lives
        sc = _scenario(ops=200_000, duration=1.5,
                       faults=[{"kind": "no-op", "every": 0.1, "count": 5}])
        res = run(sc, reports=tmp_path)
    landed = [e for e in read_history(res.run_dir) if e.f == "no-op"]
    assert [e.value["id"] for e in landed] == [0, 1, 2, 3, 4]
    assert all(e.process == "nemesis" for e in landed)
    summary = res.stats["faults"]
    assert (summary["scheduled"], summary["applied"]) == (5, 5)
    assert res.exit_code == 0


def test_a_registered_kind_is_applied_at_decisions(tmp_path: Path) -> None:
    with registered(NoOp()):
        sc = _scenario(ops=20, duration=30.0, control={"enabled": True, "faults": [
            {"kind": "no-op", "at_step": 3}, {"kind": "no-op", "at_step": 11}]})
        res = run(sc, reports=tmp_path)
    landed = [e for e in read_history(res.run_dir) if e.f == "no-op"]
    assert [(e.value["id"], e.value["step"]) for e in landed] == [(0, 3), (1, 11)]
    assert [f["step"] for f in read_trace(res.run_dir).faults] == [3, 11]
    assert res.exit_code == 0
