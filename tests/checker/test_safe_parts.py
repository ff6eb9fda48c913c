"""The guard around a checker (harness.checker.safe): a result passes through untouched, an
exception becomes an unknown verdict naming it in one line, with its traceback in the stats."""

from __future__ import annotations

from typing import Any

import pytest

from harness.checker.result import CheckResult
from harness.checker.safe import check_safe


def test_a_result_passes_through_with_the_arguments_handed_on() -> None:
    got: list[Any] = []
    res = CheckResult(True, stats={"x": 1})

    def checker(*args: Any, **kwargs: Any) -> CheckResult:
        got.append((args, kwargs))
        return res

    assert check_safe(checker, [1], 2, exact=True) is res
    assert got == [(([1], 2), {"exact": True})]


def test_an_exception_is_an_unknown_verdict() -> None:
    def checker(events: list[int], *, budget_s: float) -> CheckResult:
        raise KeyError(f"no {events[0]} within {budget_s}")

    res = check_safe(checker, [7], budget_s=1.5)
    assert res.valid is None
    assert res.error == "KeyError: 'no 7 within 1.5'"
    assert res.violations == () and res.totals is None
    assert list(res.stats) == ["traceback"]
    tb = res.stats["traceback"]
    assert tb.startswith("Traceback (most recent call last):")
    assert tb.endswith("KeyError: 'no 7 within 1.5'\n")
    assert "in checker" in tb


def test_an_exception_without_a_message() -> None:
    def checker() -> CheckResult:
        raise RuntimeError

    assert check_safe(checker).error == "RuntimeError: "


def test_an_interrupt_is_not_swallowed() -> None:
    def checker() -> CheckResult:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        check_safe(checker)
