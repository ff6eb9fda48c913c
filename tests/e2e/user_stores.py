"""Stores as a user would write them, named by ``package.module:factory`` specs."""

from __future__ import annotations

import sqlite3
import time
from typing import NamedTuple

from harness.stores import sqlite as sqlite_store


class AppendOnlyStore:
    """Appends and reads, nothing else: the plan must ask for nothing else."""

    backend = "sqlite"
    capabilities = frozenset({"append", "read"})

    def __init__(self, url: str) -> None:  # no namespace parameter: not passed
        # The reference store's connect: processes opening a fresh file at once race on
        # the switch to WAL, which SQLite refuses at once with "database is locked"
        # whatever the busy timeout (it failed a loaded CI run); connect waits it out.
        self.conn = sqlite_store.connect(url)
        self.conn.execute("CREATE TABLE IF NOT EXISTS t (id INTEGER PRIMARY KEY, s, r, c)")

    def append(self, session: str, role: str, content: str) -> None:
        self.conn.execute("INSERT INTO t (s, r, c) VALUES (?, ?, ?)", (session, role, content))

    def history(self, session: str) -> list[tuple[str, str]]:
        return self.conn.execute("SELECT r, c FROM t WHERE s = ? ORDER BY id", (session,)).fetchall()

    def close(self) -> None:
        self.conn.close()


class GarbledReadStore(AppendOnlyStore):
    """Reads come back as one string per turn, not ``(role, content)``: unreadable."""

    def history(self, session: str) -> list[tuple[str, str]]:
        return [f"{r}: {c}" for r, c in super().history(session)]  # type: ignore[misc]


class Turn(NamedTuple):
    role: str
    content: str


class Text(str):
    """A str subclass, as an ORM or a markup library may hand back."""


class TypedTurnsStore(AppendOnlyStore):
    """Reads come back as ``Turn`` namedtuples of ``Text``: still ``(role, content)`` pairs
    of strings, as the protocol asks, so nothing is unreadable."""

    def history(self, session: str) -> list[tuple[str, str]]:
        return [Turn(Text(r), Text(c)) for r, c in super().history(session)]


def broken_factory(url: str, namespace: str = "") -> AppendOnlyStore:
    raise RuntimeError("wrong credentials")


def none_factory(url: str, namespace: str = "") -> None:
    """Forgot its ``return``: a setup error, not one violation per op."""
    AppendOnlyStore(url).close()


class DriverDown(Exception):
    """The error a store's own driver raises when its backend is down."""


class DownOnReadStore(AppendOnlyStore):
    """Declares :class:`DriverDown` as "backend unavailable", and every third read raises
    it, as a store does whose server is unreachable: proof of nothing, never ``unreadable``."""

    unavailable = (DriverDown,)
    reads = 0

    def history(self, session: str) -> list[tuple[str, str]]:
        self.reads += 1
        if self.reads % 3 == 0:
            raise DriverDown("backend unreachable")
        return super().history(session)


class UndeclaredDownOnReadStore(DownOnReadStore):
    """The same, without the declaration: its failing reads are ``unreadable``."""

    unavailable = ()


class CheckThenCreateStore(AppendOnlyStore):
    """Set-up as a hand-written migration: look for the table, create it if it is missing
    (no IF NOT EXISTS), after a moment spent on the migration's other steps. Processes
    opening a fresh file at once all see no table; all but one fail to create it."""

    def __init__(self, url: str) -> None:
        self.conn = sqlite3.connect(sqlite_store.sqlite_path(url), timeout=30, isolation_level=None)
        if self.conn.execute("SELECT 1 FROM sqlite_master WHERE name = 't'").fetchone() is None:
            time.sleep(0.3)  # the migration's other steps
            self.conn.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, s, r, c)")
