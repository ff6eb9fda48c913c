"""pytest plugin of harness: the ``harness_run`` fixture runs a scenario from a test.

Enabled through the ``pytest11`` entry point; ``-p no:harness`` disables it.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest


@pytest.fixture
def harness_run(tmp_path: Path) -> Callable[..., Any]:
    """Run a scenario (a path or a Scenario) with overrides; reports go under tmp_path."""
    from harness.runner.coordinator import run
    from harness.scenario import Scenario, load_scenario

    def _run(scenario: str | Path | Scenario, **overrides: Any) -> Any:
        sc = scenario if isinstance(scenario, Scenario) else load_scenario(scenario)
        redis_url = overrides.pop("redis_url", "")
        return run(sc.with_overrides(**overrides), reports=tmp_path / "reports",
                   redis_url=redis_url)

    return _run
