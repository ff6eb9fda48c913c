"""``setup-race`` (harness.checker.setup) on literal events: only a failed ``open`` whose value
says it was a cold start is one; its key and its exact sentence."""

from __future__ import annotations

from typing import Any

import pytest

from harness.checker.setup import KIND, setup_race
from harness.history import Event


def ev(type: str = "fail", f: str = "open", value: Any = None, error: str | None = "OSError: busy",
       process: int = 3, index: int = 12) -> Event:
    return Event(index=index, time=100, process=process, type=type, f=f, session=None, value=value,
                 error=error)


COLD = {"cold_start": True, "attempt": 2}


def test_kind() -> None:
    assert KIND == "setup-race"


def test_a_failed_open_on_a_cold_start() -> None:
    assert setup_race(ev(value=COLD)) == (
        ("open", 12),
        "Process 3 could not open the store on a cold start (attempt 2; every worker opened the fresh "
        "store at the same instant): OSError: busy. Set-up code (CREATE TABLE, PRAGMA, migrations) "
        "must work when several processes run it at once.",
    )


def test_without_an_error_or_an_attempt() -> None:
    key, say = setup_race(ev(value={"cold_start": True}, error=None, process=5, index=4))  # type: ignore[misc]
    assert key == ("open", 4)
    assert say.startswith("Process 5 could not open the store on a cold start (attempt None; ")
    assert "same instant): no error given. Set-up" in say
    assert "no error given" in setup_race(ev(value=COLD, error=""))[1]  # type: ignore[index]


@pytest.mark.parametrize("event", [
    ev(type="ok", value=COLD),
    ev(type="info", value=COLD),
    ev(f="close", value=COLD),
    ev(f="read", value=COLD),
    ev(value=None),
    ev(value=[("cold_start", True)]),
    ev(value={"attempt": 1}),
    ev(value={"cold_start": False}),
    ev(value={"cold_start": 1}),
    ev(value={"cold_start": "true"}),
])
def test_anything_else_is_none(event: Event) -> None:
    assert setup_race(event) is None
