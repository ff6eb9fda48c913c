"""harness: a multi-process chaos and concurrency stress harness for agent memory stores.

The public face; everything else is reached through its module (see README, "What's here").
"""

from harness.checker import CheckResult, Violation, check
from harness.coordinator import RunResult, run
from harness.errors import HarnessError, InputError, SnapshotNotFound
from harness.scenario import Scenario, load_scenario
from harness.stores import MemoryStore

__all__ = [
    "CheckResult",
    "HarnessError",
    "InputError",
    "MemoryStore",
    "RunResult",
    "Scenario",
    "SnapshotNotFound",
    "Violation",
    "check",
    "load_scenario",
    "run",
]
