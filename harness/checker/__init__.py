"""The checker: a memory store's model and its invariants, as pure functions of a history."""

from harness.checker.api import check, check_path
from harness.checker.result import KINDS, CheckResult, Violation

__all__ = ["KINDS", "CheckResult", "Violation", "check", "check_path"]
