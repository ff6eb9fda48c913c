"""Controlled-mode scheduling points on ``sqlite3``, inside one worker process.

:func:`install` patches ``sqlite3.connect``: every connection is made with a subclass of
the requested factory whose ``execute``, ``executemany``, ``executescript``, ``commit`` and
``rollback`` (and its cursors' ``execute``...) first stop at a point. The busy timeout is
set to 0 and waiting for a lock becomes explicit: a statement that fails with
``SQLITE_BUSY`` (or ``BUSY_RECOVERY``) stops at a *busy* point and is retried when granted
again, up to ``busy_retries`` times, then the error is raised as a busy timeout would. The
wait is thus a sequence of scheduling decisions, not a length of time, and replays
exactly. ``SQLITE_BUSY_SNAPSHOT`` is raised at once, as SQLite itself does.

A point's label is the statement's first word (``BEGIN`` and ``PRAGMA`` with the next
one): these labels are what ``trace.json`` records.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from functools import cache
from typing import Any, Literal

from harness.backends.base import Stepper

__all__ = ["CONNECT_ARGS", "install", "label"]

#: ``sqlite3.connect``'s parameters, in order: a wrapper maps positional arguments by them.
CONNECT_ARGS = ("database", "timeout", "detect_types", "isolation_level", "check_same_thread",
                "factory", "cached_statements", "uri")

_BUSY_CODES = (5, 261)  # SQLITE_BUSY, SQLITE_BUSY_RECOVERY: the busy handler would wait

_client: Stepper | None = None


def install(client: Stepper) -> None:
    """Route this process's SQLite statements through ``client``'s points (patching
    ``sqlite3.connect`` once; a later call only changes the client)."""
    global _client
    _client = client
    _patch_connect()


def label(sql: Any) -> str:
    """The point label of a statement: ``SELECT``, ``BEGIN IMMEDIATE``, ``PRAGMA ...``."""
    if not isinstance(sql, str):
        return "SQL"
    head = sql.lstrip()[:40].split(None, 2)
    if not head:
        return "SQL"
    word = head[0].upper()
    if word in ("BEGIN", "PRAGMA") and len(head) > 1:
        return f"{word} {head[1].upper()}"
    return word


def _step(conn: Any, lb: str, fn: Callable[..., Any], *args: Any) -> Any:
    """Run one statement as one scheduling step, waiting for locks by stepping again."""
    c = _client
    if c is None or c.depth:
        return fn(*args)
    c.point(lb)
    retries = 0
    while True:
        c.depth += 1
        try:
            return fn(*args)
        except sqlite3.OperationalError as exc:
            code = getattr(exc, "sqlite_errorcode", None)
            if not (getattr(conn, "_harness_waits", False) and code in _BUSY_CODES
                    and retries < c.busy_retries):
                raise
        finally:
            c.depth -= 1
        retries += 1
        c.point(lb, busy=True)


def _pragma_timeout(conn: Any, sql: str) -> None:
    """A store that sets its own busy timeout: remember it, keep SQLite's at 0."""
    if "busy_timeout" in sql.lower() and "=" in sql:
        try:
            conn._harness_waits = int(sql.split("=", 1)[1].strip(" ;")) > 0
        except ValueError:
            return
        sqlite3.Connection.execute(conn, "PRAGMA busy_timeout = 0")


@cache
def _cursor_class(base: type) -> type:
    class ControlledCursor(base):  # type: ignore[misc]
        def execute(self, sql: Any, parameters: Any = (), /) -> Any:
            lb = label(sql)
            out = _step(self.connection, lb, super().execute, sql, parameters)
            if lb == "PRAGMA BUSY_TIMEOUT":
                _pragma_timeout(self.connection, sql)
            return out

        def executemany(self, sql: Any, seq: Any, /) -> Any:
            return _step(self.connection, label(sql), super().executemany, sql, seq)

        def executescript(self, script: Any, /) -> Any:
            # A script cannot be retried from the middle: let SQLite wait for the lock
            # itself (a long wait shows as a blocked step).
            conn, run = self.connection, super().executescript
            if not getattr(conn, "_harness_waits", False):
                return _step(conn, "SCRIPT", run, script)
            sqlite3.Connection.execute(conn, "PRAGMA busy_timeout = 30000")
            try:
                return _step(None, "SCRIPT", run, script)
            finally:
                sqlite3.Connection.execute(conn, "PRAGMA busy_timeout = 0")

    ControlledCursor.__name__ = f"Controlled{base.__name__}"
    return ControlledCursor


@cache
def _connection_class(base: type) -> type:
    class ControlledConnection(base):  # type: ignore[misc]
        _harness_waits = False

        def cursor(self, factory: Any = None) -> Any:
            return super().cursor(_cursor_class(factory or sqlite3.Cursor))

        def execute(self, sql: Any, parameters: Any = (), /) -> Any:
            return self.cursor().execute(sql, parameters)

        def executemany(self, sql: Any, seq: Any, /) -> Any:
            return self.cursor().executemany(sql, seq)

        def executescript(self, script: Any, /) -> Any:
            return self.cursor().executescript(script)

        def commit(self) -> None:
            if self.in_transaction:
                _step(self, "COMMIT", super().commit)

        def rollback(self) -> None:
            if self.in_transaction:
                _step(self, "ROLLBACK", super().rollback)

        def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> Literal[False]:
            # The C __exit__ commits without calling self.commit: do it through the points.
            if exc_type is None:
                try:
                    self.commit()
                except BaseException:
                    self.rollback()
                    raise
            else:
                self.rollback()
            return False

    ControlledConnection.__name__ = f"Controlled{base.__name__}"
    return ControlledConnection


def _patch_connect() -> None:
    orig = sqlite3.connect
    if getattr(orig, "_harness", False):
        return

    def connect(*args: Any, **kw: Any) -> Any:
        kw.update(zip(CONNECT_ARGS, args, strict=False))
        timeout = kw.pop("timeout", 5.0)
        factory = kw.pop("factory", sqlite3.Connection)
        conn: Any = orig(timeout=0, factory=_connection_class(factory), **kw)
        conn._harness_waits = bool(timeout and timeout > 0)
        return conn

    connect._harness = True  # type: ignore[attr-defined]
    sqlite3.connect = connect
    sqlite3.dbapi2.connect = connect
