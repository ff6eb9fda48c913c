"""harness: a multi-process chaos and concurrency stress harness for agent memory stores.

The public face; everything else is reached through its module (see the README's map).
Names are imported on first use, so ``import harness.checker`` (or ``harness.history``)
does not pull in the runner and its process, psutil and Redis machinery.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from harness.checker import CheckResult, Violation, check
    from harness.errors import HarnessError, InputError, SnapshotNotFound
    from harness.result import RunResult
    from harness.runner.coordinator import run
    from harness.scenario import Scenario, load_scenario
    from harness.stores.base import MemoryStore

#: Public name -> the module that defines it.
_WHERE = {
    "CheckResult": "harness.checker",
    "HarnessError": "harness.errors",
    "InputError": "harness.errors",
    "MemoryStore": "harness.stores.base",
    "RunResult": "harness.result",
    "Scenario": "harness.scenario",
    "SnapshotNotFound": "harness.errors",
    "Violation": "harness.checker",
    "check": "harness.checker",
    "load_scenario": "harness.scenario",
    "run": "harness.runner.coordinator",
}

# Spelled out (not sorted(_WHERE)) so that linters see the re-exports; a test keeps the two equal.
__all__ = ["CheckResult", "HarnessError", "InputError", "MemoryStore", "RunResult", "Scenario",
           "SnapshotNotFound", "Violation", "check", "load_scenario", "run"]


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module 'harness' has no attribute {name!r}")
    value = getattr(importlib.import_module(_WHERE[name]), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_WHERE])
