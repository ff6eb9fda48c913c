"""The record of one run, as the runner hands it to the reports: what ran, against what,
the checker's result, how every worker ended, and the verdict that follows. Plain data;
nothing here runs anything."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.checker.result import CheckResult
from harness.scenario import Scenario
from harness.stores.registry import StoreInfo

__all__ = ["EXIT_CODES", "RunResult", "verdict"]

#: The exit code of each verdict (docs/design.md): a violation is a violation even in a
#: run cut short, so ``fail`` wins over every other; ``unknown``, ``interrupted`` and
#: ``incomplete`` say the run proves nothing either way.
EXIT_CODES = {"pass": 0, "fail": 1, "unknown": 3, "interrupted": 3, "incomplete": 3}


def verdict(result: CheckResult, interrupted: bool, problems: tuple[str, ...]) -> str:
    """The verdict of a run: ``fail`` if the checker found violations (whatever else
    happened), else ``unknown`` if the check did not finish, else ``interrupted`` if a stop
    signal came, else ``incomplete`` if any of ``problems`` (how the run fell short), else
    ``pass``."""
    if result.valid is False:
        return "fail"
    if result.valid is None:
        return "unknown"
    if interrupted:
        return "interrupted"
    return "incomplete" if problems else "pass"


@dataclass(frozen=True, slots=True)
class RunResult:
    """``workers`` holds one record per worker process (slot, pid, exit, ops, why it
    ended, time to open); ``problems`` the sentences that make the run incomplete."""

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
    workers: tuple[dict[str, Any], ...] = ()
    problems: tuple[str, ...] = ()

    @property
    def verdict(self) -> str:
        return verdict(self.result, self.interrupted, self.problems)

    @property
    def exit_code(self) -> int:
        return EXIT_CODES[self.verdict]
