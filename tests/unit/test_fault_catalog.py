"""The fault catalog: a kind is one module, and every reader of faults (scenario validation,
the plan, the ``[control] faults`` parser, the refusal of faults a backend does not take)
takes a new one with no other edit; every built-in kind goes through all of them alike."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from harness.errors import InputError, ScenarioError
from harness.faults import CATALOG, NoOp, discover, registered
from harness.faults.base import Key
from harness.plan import make_plan
from harness.runner.nemesis import check_faults
from harness.scenario import from_dict

#: A whole new kind, as someone adding one would write it: this file and nothing else.
FLOOD = '''
"""The ``flood`` fault: a test kind, aimed at a worker, lasting, with a key of its own."""

from __future__ import annotations

from dataclasses import dataclass

from harness.faults.base import Fault, Key, Stepped, Timed, duration, number


@dataclass(frozen=True, slots=True)
class Flood:
    name: str = "flood"
    backends: tuple[str, ...] = ("redis",)
    destructive: bool = False
    aimed: bool = True
    keys: tuple[Key, ...] = (
        duration(0.25),
        Key("rate", 3, "an integer from 1 to 10",
            lambda v: number(v) and v == int(v) and 1 <= v <= 10),
    )
    for_steps: int | None = 7

    def at_time(self, fault: Fault, nemesis: Timed) -> None:
        nemesis.log(fault, rate=fault["rate"])

    def at_step(self, fault: Fault, nemesis: Stepped) -> None:
        nemesis.log(fault, for_steps=fault["for_steps"])


KIND = Flood()
'''


@pytest.fixture
def flood(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    """The flood kind, found by discovery in a package of its own (a file dropped in a
    package is a kind), and registered for the test."""
    pkg = tmp_path / "extra_faults"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "flood.py").write_text(textwrap.dedent(FLOOD))
    monkeypatch.syspath_prepend(str(tmp_path))
    found = discover([str(pkg)], "extra_faults")
    assert list(found) == ["flood"]
    with registered(*found.values()):
        yield found["flood"]
    assert "flood" not in CATALOG


def _sc(faults: list[dict[str, Any]], **kw: Any) -> Any:
    return from_dict({"workers": 3, "duration": 2.0, "faults": faults, **kw})


def test_a_new_kind_is_validated_from_what_it_declares(flood: Any) -> None:
    _sc([{"kind": "flood", "every": 0.5, "worker": 2, "rate": 10, "duration": 0.1}])
    for fault, says in [
        ({"kind": "flood", "at": 1, "rate": 11}, "rate must be an integer from 1 to 10, got 11"),
        ({"kind": "flood", "at": 1, "duration": 0}, "duration must be a positive number"),
        ({"kind": "flood", "at": 1, "stall": 0.1}, "unknown key 'stall' for a flood fault"),
        ({"kind": "flood", "at": 1, "worker": 3}, "worker must be a worker slot from 0 to 2"),
        ({"kind": "flood", "rate": 2}, "a flood fault needs exactly one of at"),
    ]:
        with pytest.raises(ScenarioError, match="faults\\[0\\]") as err:
            _sc([fault])
        assert says in str(err.value)


def test_a_new_kind_is_planned_in_both_modes(flood: Any) -> None:
    sc = _sc([{"kind": "flood", "every": 0.5}, {"kind": "flood", "at": 1.0, "rate": 5}])
    faults = make_plan(sc, 4).faults
    assert len(faults) == 5  # four periods of 0.5 s, and the one at 1.0
    assert all(0 <= f["worker"] < 3 and f["duration"] == 0.25 for f in faults)
    assert sorted(f["rate"] for f in faults) == [3, 3, 3, 3, 5]  # its default, and as given
    stepped = make_plan(sc.with_overrides(control={"enabled": True, "steps": 100}), 4).faults
    assert [set(f) for f in stepped] == [{"id", "kind", "at_step", "worker", "for_steps"}] * 5
    assert all(f["for_steps"] == max(1, round(0.25 / 2.0 * 100)) for f in stepped)


def test_a_new_kind_is_taken_by_the_control_parser(flood: Any) -> None:
    sc = _sc([], control={"enabled": True, "faults": [
        {"kind": "flood", "at_step": 4, "worker": 1},
        {"kind": "flood", "at_step": 9, "worker": 0, "for_steps": 2}]})
    assert make_plan(sc, 1).faults == (
        {"id": 0, "kind": "flood", "at_step": 4, "worker": 1, "for_steps": 7},
        {"id": 1, "kind": "flood", "at_step": 9, "worker": 0, "for_steps": 2})
    with pytest.raises(ScenarioError, match="a flood fault needs worker"):
        _sc([], control={"enabled": True, "faults": [{"kind": "flood", "at_step": 4}]})


def test_a_new_kind_is_refused_where_it_does_not_apply(flood: Any) -> None:
    check_faults([{"kind": "flood"}], "redis", external=True)
    with pytest.raises(InputError, match="'flood' applies to redis targets only"):
        check_faults([{"kind": "flood"}], "sqlite", external=False)


def test_unknown_until_registered() -> None:
    with pytest.raises(ScenarioError, match="unknown fault kind 'no-op'"):
        _sc([{"kind": "no-op", "at": 1}])
    with registered(NoOp()):
        assert make_plan(_sc([{"kind": "no-op", "at": 1}]), 1).faults == (
            {"id": 0, "kind": "no-op", "at": 1.0},)
    with pytest.raises(ScenarioError, match="unknown fault kind 'no-op'"):
        _sc([{"kind": "no-op", "at": 1}])


def test_a_kind_that_breaks_the_catalog_is_refused() -> None:
    with pytest.raises(ValueError, match="two fault kinds are named 'kill'"), \
            registered(NoOp(name="kill")):
        pass
    with pytest.raises(ValueError, match="lasts, so it needs a duration key"), \
            registered(NoOp(name="endless", for_steps=5)):
        pass
    assert not isinstance(CATALOG["kill"], NoOp)
    assert set(CATALOG) == {"kill", "pause", "disconnect", "restart", "disk-full", "lock-hold"}


@pytest.mark.parametrize("name", sorted(CATALOG))
def test_every_kind_goes_through_every_reader_alike(name: str) -> None:
    kind = CATALOG[name]
    assert all(isinstance(k, Key) and k.ok(k.default) for k in kind.keys)
    table = {"kind": name, "every": 0.5, **{k.name: k.default for k in kind.keys}}
    if kind.aimed:
        table["worker"] = 1
    timed = make_plan(_sc([table]), 2).faults
    assert len(timed) == 4 and all(("worker" in f) == kind.aimed for f in timed)
    assert all(f[k.name] == k.default for f in timed for k in kind.keys)
    ctl = _sc([table], control={"enabled": True})
    stepped = make_plan(ctl, 2).faults
    assert all(("for_steps" in f) == (kind.for_steps is not None) for f in stepped)
    explicit = {k: stepped[0][k] for k in ("kind", "at_step", "worker") if k in stepped[0]}
    (again,) = make_plan(_sc([], control={"enabled": True, "faults": [explicit]}), 2).faults
    assert again.get("for_steps") == kind.for_steps
    for backend in kind.backends:
        check_faults(timed, backend, external=False)


def test_validating_a_scenario_starts_no_runner_library() -> None:
    code = ("import sys, harness.scenario, harness.plan; "
            "print(sorted({m.split('.')[0] for m in sys.modules} "
            "& {'multiprocess', 'psutil', 'redis'}))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "[]"
