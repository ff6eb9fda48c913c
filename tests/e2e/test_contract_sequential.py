"""The contract's state machine on a real SQLite store wrapped to misbehave: an error the
store raises fails the case as first raised (not shrunk against the store), a wrong answer
fails it shrunk to the fewest calls, and one that is not found again fails it as found."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, fields
from typing import Any

import pytest

from harness.contract import CASES, Ctx, contract_ctx, run_case

STATE_MACHINE = next(c for c in CASES if c.name == "state machine")


@dataclass(slots=True)
class _Wrapped(Ctx):
    """The reference SQLite store's context, each store it opens wrapped by ``wrap``
    (``opened`` counts them: the state machine opens one per sequence it runs)."""

    wrap: Any = None
    opened: int = 0

    def store(self, url: str | None = None) -> Any:
        self.opened += 1
        return self.wrap(Ctx.store(self, url))


class _Proxy:
    """A store as it is, but for the methods a subclass overrides."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


class _RefusesThirdAppend(_Proxy):
    """Raises at the third append of each store it wraps, as a library refusing a value."""

    appends = 0

    def append(self, session: str, role: str, content: str) -> None:
        self.appends += 1
        if self.appends == 3:
            raise ValueError("refused: a third turn")
        self.inner.append(session, role, content)


class _DropsLastTurn(_Proxy):
    """Reads a session without its last turn: a wrong answer at the first read after an append."""

    def history(self, session: str) -> Any:
        return list(self.inner.history(session))[:-1]


class _LiesOnce(_Proxy):
    """Drops the last turn at the first read of a non-empty session, then never again, in
    every store ``lied`` is shared by: a store whose answers vary between runs."""

    def __init__(self, inner: Any, lied: list[bool]) -> None:
        super().__init__(inner)
        self.lied = lied

    def history(self, session: str) -> Any:
        got = list(self.inner.history(session))
        if got and not self.lied:
            self.lied.append(True)
            return got[:-1]
        return got


@pytest.fixture
def sqlite_ctx() -> Iterator[Ctx]:
    with contract_ctx("sqlite") as ctx:
        yield ctx


def _wrapped(ctx: Ctx, wrap: Any) -> _Wrapped:
    return _Wrapped(**{f.name: getattr(ctx, f.name) for f in fields(Ctx)}, wrap=wrap)


def test_an_error_the_store_raises_fails_the_case_as_first_raised(sqlite_ctx: Ctx) -> None:
    right = _wrapped(sqlite_ctx, lambda inner: inner)
    assert run_case(STATE_MACHINE, right).status == "pass"
    ctx = _wrapped(sqlite_ctx, _RefusesThirdAppend)
    out = run_case(STATE_MACHINE, ctx)
    assert out.status == "fail" and out.detail == "refused: a third turn", out
    # one store per sequence run: no more than a run that passes draws (28 here, 2026-11-30;
    # shrinking the error as well opened 335, each against the store)
    assert 1 <= ctx.opened <= right.opened, (ctx.opened, right.opened)


def test_a_wrong_answer_fails_the_case_shrunk_to_the_fewest_calls(sqlite_ctx: Ctx) -> None:
    out = run_case(STATE_MACHINE, _wrapped(sqlite_ctx, _DropsLastTurn))
    # one append of the least role and content, then a read: nothing shorter shows it
    assert out.status == "fail" and out.detail == "read [], model [('user', '')]", out


def test_a_wrong_answer_not_found_again_still_fails_the_case(sqlite_ctx: Ctx) -> None:
    lied: list[bool] = []
    out = run_case(STATE_MACHINE, _wrapped(sqlite_ctx, lambda inner: _LiesOnce(inner, lied)))
    assert lied and out.status == "fail" and out.detail.startswith("read ["), out
