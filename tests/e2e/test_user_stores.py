"""Pointing harness at your own store: a ``package.module:factory`` spec, capabilities,
what a malformed read and a store that cannot open come out as."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.coordinator import run
from harness.errors import TargetError
from harness.history import read_history
from harness.scenario import Scenario

HERE = Path(__file__).resolve().parent


@pytest.fixture(autouse=True)
def importable(monkeypatch: pytest.MonkeyPatch) -> None:
    # fork start: the workers inherit sys.path, as they inherit a user's PYTHONPATH
    monkeypatch.syspath_prepend(str(HERE))


def test_only_its_capabilities_are_planned_and_it_passes(tmp_path: Path) -> None:
    res = run(Scenario(store="user_stores:AppendOnlyStore", seed=1, workers=3, ops=40),
              reports=tmp_path)
    assert res.exit_code == 0, res.result.counts()
    assert {e.f for e in read_history(res.run_dir)} == {"append", "read"}


def test_a_malformed_read_is_unreadable(tmp_path: Path) -> None:
    res = run(Scenario(store="user_stores:GarbledReadStore", seed=1, workers=2, ops=30),
              reports=tmp_path)
    assert res.exit_code == 1
    assert "unreadable" in res.result.counts()
    v = next(v for v in res.result.violations if v.kind == "unreadable")
    assert any("MalformedRead" in (e.error or "") for e in v.events)


def test_a_store_that_cannot_open_is_a_setup_error(tmp_path: Path) -> None:
    sc = Scenario(store="user_stores:broken_factory", backend="sqlite", seed=1, workers=2, ops=5)
    with pytest.raises(TargetError, match="could not be opened: RuntimeError: wrong credentials"):
        run(sc, reports=tmp_path)
