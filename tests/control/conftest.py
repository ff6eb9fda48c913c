"""Fixtures of the controlled-mode tests."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from harness.result import RunResult
from harness.runner.coordinator import run
from harness.scenario import Scenario

HERE = Path(__file__).resolve().parent


@pytest.fixture
def run_ctl(tmp_path: Path) -> Any:
    """Run a scenario. A Redis store gets a redis-server of its own, started by the run:
    a shared one would carry state between runs (its Lua script cache) that changes
    which commands a client sends."""

    def _run(sc: Scenario) -> RunResult:
        return run(sc, reports=tmp_path / "reports")

    return _run


@pytest.fixture
def ctl_stores(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> str:
    """Make ``ctl_stores`` importable (workers fork, so they inherit it)."""
    monkeypatch.syspath_prepend(str(HERE))
    import ctl_stores

    monkeypatch.setattr(ctl_stores.FlockRedisStore, "lock_dir", str(tmp_path))
    return "ctl_stores"
