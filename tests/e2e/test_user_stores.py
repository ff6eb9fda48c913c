"""Pointing harness at your own store: a ``package.module:factory`` spec, capabilities,
declared "backend unavailable" exceptions, what a malformed read and a store that cannot
open (or a factory that returns no store) come out as."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.errors import TargetError
from harness.history import read_history
from harness.runner.coordinator import run
from harness.scenario import PayloadSpec, Scenario

HERE = Path(__file__).resolve().parent


@pytest.fixture(autouse=True)
def importable(monkeypatch: pytest.MonkeyPatch) -> None:
    # fork start: the workers inherit sys.path, as they inherit a user's PYTHONPATH
    monkeypatch.syspath_prepend(str(HERE))


def test_only_its_capabilities_are_planned_and_it_passes(tmp_path: Path) -> None:
    res = run(Scenario(store="user_stores:AppendOnlyStore", seed=1, workers=3, ops=40),
              reports=tmp_path)
    assert res.exit_code == 0, res.result.counts()
    assert {e.f for e in read_history(res.run_dir)} - {"open"} == {"append", "read"}


def test_a_malformed_read_is_unreadable(tmp_path: Path) -> None:
    res = run(Scenario(store="user_stores:GarbledReadStore", seed=1, workers=2, ops=30),
              reports=tmp_path)
    assert res.exit_code == 1
    assert "unreadable" in res.result.counts()
    v = next(v for v in res.result.violations if v.kind == "unreadable")
    assert any("MalformedRead" in (e.error or "") for e in v.events)


def test_namedtuple_turns_of_str_subclasses_are_read_as_turns(tmp_path: Path) -> None:
    sc = Scenario(store="user_stores:TypedTurnsStore", seed=2, workers=2, ops=60,
                  payload=PayloadSpec(max_bytes=4000, long_rate=0.3))  # long ones: tokens too
    res = run(sc, reports=tmp_path)
    assert res.exit_code == 0, res.result.counts()
    reads = [e for e in read_history(res.run_dir) if e.f == "read" and e.type == "ok" and e.value]
    assert reads and all(isinstance(t, list) and len(t) == 2 for e in reads for t in e.value)
    assert any("…[" in t[1] for e in reads for t in e.value)  # a long content, as its token


def test_a_store_that_cannot_open_is_a_setup_error(tmp_path: Path) -> None:
    sc = Scenario(store="user_stores:broken_factory", backend="sqlite", seed=1, workers=2, ops=5)
    with pytest.raises(TargetError, match="could not be opened: RuntimeError: wrong credentials"):
        run(sc, reports=tmp_path)


def test_a_factory_returning_none_is_a_setup_error_and_leaves_no_run_dir(tmp_path: Path) -> None:
    sc = Scenario(store="user_stores:none_factory", backend="sqlite", seed=1, workers=2, ops=24)
    with pytest.raises(TargetError, match="its factory returned None, not a store"):
        run(sc, reports=tmp_path)
    assert list(tmp_path.iterdir()) == []  # the setup failed: no half-written run directory


def test_declared_unavailable_errors_are_info_not_unreadable(tmp_path: Path) -> None:
    sc = Scenario(store="user_stores:DownOnReadStore", seed=1, workers=2, ops=60)
    res = run(sc, reports=tmp_path)
    down = [e for e in read_history(res.run_dir) if "DriverDown" in (e.error or "")]
    assert down and {(e.f, e.type) for e in down} == {("read", "info")}
    assert res.exit_code == 0, res.result.counts()
    undeclared = run(sc.with_overrides(store="user_stores:UndeclaredDownOnReadStore"),
                     reports=tmp_path)
    assert undeclared.exit_code == 1 and "unreadable" in undeclared.result.counts()
