"""The record of one run, as the runner hands it to the reports: what ran, against what,
the checker's result and the run's statistics. Plain data; nothing here runs anything."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.checker.result import CheckResult
from harness.scenario import Scenario
from harness.stores.registry import StoreInfo

__all__ = ["RunResult"]


@dataclass(frozen=True, slots=True)
class RunResult:
    run_id: str
    run_dir: Path
    scenario: Scenario
    seed: int
    store: StoreInfo
    result: CheckResult
    interrupted: bool
    reproduce: str
    target_note: str
    stats: dict[str, Any] = field(default_factory=dict)

    @property
    def exit_code(self) -> int:
        return 0 if self.result.valid is True else 1
