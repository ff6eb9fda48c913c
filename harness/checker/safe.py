"""The guard around a checker: one that raises gives an unknown verdict carrying the error,
never a missing report (Jepsen's ``check-safe``)."""

from __future__ import annotations

import traceback
from collections.abc import Callable
from typing import Any

from harness.checker.result import CheckResult

__all__ = ["check_safe"]


def check_safe(check: Callable[..., CheckResult], *args: Any, **kwargs: Any) -> CheckResult:
    """``check(*args, **kwargs)``, or, if it raises, an unknown verdict (``valid`` None)
    whose ``error`` is the exception in one line and whose stats hold the traceback.

    >>> check_safe(lambda events: 1 / 0, []).error
    'ZeroDivisionError: division by zero'
    """
    try:
        return check(*args, **kwargs)
    except Exception as exc:
        return CheckResult(None, stats={"traceback": traceback.format_exc()},
                           error=f"{type(exc).__name__}: {exc}")
