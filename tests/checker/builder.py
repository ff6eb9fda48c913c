"""A tiny builder of literal histories for the checker's tests.

Each call adds events at strictly increasing times (10 ns apart), ``index`` = position,
as ``harness.history.merge`` would produce them. Roles default to ``"user"``; a read's
turns take the role their append used.
"""

from __future__ import annotations

from typing import Any

from harness.history import Event


class H:
    """``h.append(0, "s", "a")`` is an invoke and its ok; ``h.inv``/``h.ok``/``h.fail``/
    ``h.info`` give full control over interleaving."""

    def __init__(self) -> None:
        self.events: list[Event] = []
        self.t = 0
        self.pending: dict[int | str, tuple[str, str | None, Any]] = {}
        self.roles: dict[str, str] = {}

    def _ev(self, p: int | str, type: str, f: str, s: str | None, value: Any,
            error: str | None = None, same_time: bool = False) -> Event:
        if not same_time:
            self.t += 10
        e = Event(index=len(self.events), time=self.t, process=p, type=type, f=f,
                  session=s, value=value, error=error)
        self.events.append(e)
        return e

    def turns(self, toks: list[str]) -> list[list[str]]:
        return [[self.roles.get(t, "user"), t] for t in toks]

    def inv(self, p: int | str, f: str, s: str | None, value: Any = None, **kw: Any) -> Event:
        if f == "append" and isinstance(value, str):
            value = [self.roles.setdefault(value, "user"), value]
        self.pending[p] = (f, s, value)
        return self._ev(p, "invoke", f, s, value, **kw)

    def ok(self, p: int | str, value: Any = None, **kw: Any) -> Event:
        f, s, iv = self.pending.pop(p)
        if value is None and f in ("append", "rollback"):
            value = iv
        if f == "read" and isinstance(value, list) and all(isinstance(x, str) for x in value):
            value = self.turns(value)
        return self._ev(p, "ok", f, s, value, **kw)

    def fail(self, p: int | str, error: str = "Error: boom", **kw: Any) -> Event:
        f, s, _ = self.pending.pop(p)
        return self._ev(p, "fail", f, s, None, error=error, **kw)

    def info(self, p: int | str, error: str = "ConnectionError: lost", **kw: Any) -> Event:
        f, s, _ = self.pending.pop(p)
        return self._ev(p, "info", f, s, None, error=error, **kw)

    def crash(self, p: int | str) -> None:
        """The process dies: its pending op never completes."""
        self.pending.pop(p)

    # one-call ops
    def append(self, p: int | str, s: str, tok: str, role: str = "user") -> None:
        self.roles[tok] = role
        self.inv(p, "append", s, [role, tok])
        self.ok(p)

    def read(self, p: int | str, s: str, toks: list[str] | Any) -> None:
        self.inv(p, "read", s)
        self.ok(p, toks)

    def snapshot(self, p: int | str, s: str, sid: str) -> None:
        self.inv(p, "snapshot", s)
        self.ok(p, sid)

    def rollback(self, p: int | str, s: str, sid: str) -> None:
        self.inv(p, "rollback", s, sid)
        self.ok(p)

    def list(self, p: int | str, s: str, ids: list[str]) -> None:
        self.inv(p, "list_snapshots", s)
        self.ok(p, ids)

    def fault(self, f: str = "kill", value: Any = None) -> None:
        self._ev("nemesis", "info", f, None, value)
