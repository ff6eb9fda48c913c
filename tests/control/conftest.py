"""Helpers of the controlled-mode tests: small scenarios, run in controlled mode."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from harness.coordinator import RunResult, run
from harness.scenario import PayloadSpec, RedisSpec, Scenario

HERE = Path(__file__).resolve().parent


def scenario(store: str, *, seed: int, workers: int = 3, ops: int = 20, sessions: int = 2,
             strategy: str = "pct", weights: dict[str, int] | None = None,
             **control: Any) -> Scenario:
    """A small controlled scenario (short payloads, no fsync per write)."""
    return Scenario(
        name="ctl", store=store, seed=seed, workers=workers, ops=ops, sessions=sessions,
        duration=60, weights=weights or {"append": 6, "read": 3, "snapshot": 1,
                                         "list_snapshots": 1},
        payload=PayloadSpec(max_bytes=0, long_rate=0.0), redis=RedisSpec(persistence="none"),
        control={"enabled": True, "strategy": strategy, **control})


@pytest.fixture
def run_ctl(tmp_path: Path, redis_url: str) -> Any:
    """Run a scenario; Redis stores go to the session's redis-server."""

    def _run(sc: Scenario) -> RunResult:
        url = redis_url if ("redis" in sc.store or "Redis" in sc.store) else ""
        return run(sc, reports=tmp_path / "reports", redis_url=url)

    return _run


@pytest.fixture
def ctl_stores(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> str:
    """Make ``ctl_stores`` importable (workers fork, so they inherit it)."""
    monkeypatch.syspath_prepend(str(HERE))
    import ctl_stores

    monkeypatch.setattr(ctl_stores.FlockRedisStore, "lock_dir", str(tmp_path))
    return "ctl_stores"
