"""Fixtures of the chaos tests: run a shipped chaos scenario with some of its faults."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from chaoslib import CHAOS

from harness.result import RunResult
from harness.runner.coordinator import run
from harness.scenario import load_scenario


@pytest.fixture
def chaos(tmp_path: Path) -> Callable[..., RunResult]:
    """``chaos(backend, store, faults, **overrides)``: the chaos scenario of ``backend``
    with only ``faults``, short by default; reports under tmp_path. ``ops`` is unlimited by
    default, so the run lasts its duration and every scheduled fault finds its worker
    still there."""

    def _run(backend: str, store: str, faults: tuple[dict[str, Any], ...], *,
             seed: int = 1, duration: float = 2.5, ops: int | str = "unlimited",
             **overrides: Any) -> RunResult:
        sc = load_scenario(CHAOS[backend]).with_overrides(
            store=store, seed=seed, duration=duration, ops=ops, faults=faults, **overrides)
        return run(sc, reports=tmp_path / "reports")

    return _run
