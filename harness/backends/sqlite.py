"""The SQLite backend: the run's SQLite file, what ``sqlite3`` errors mean, the disk-full
switch (``max_page_count``), and (in :mod:`harness.backends.sqlite_points`) the
controlled-mode points on ``sqlite3`` connections."""

from __future__ import annotations

import gc
import sqlite3
from pathlib import Path

from harness.backends.base import Stepper, Target
from harness.errors import TargetError

__all__ = ["BACKEND", "PageLimit", "SqliteBackend", "SqliteTarget"]


class SqliteTarget(Target):
    """A fresh SQLite file inside the run directory: ``path``, and ``url`` for the stores.
    The lock-hold fault takes the write lock of ``path``."""

    kind = "sqlite"
    managed = True

    def __init__(self, directory: Path) -> None:
        self.path = Path(directory).resolve() / "store.db"
        self.url = f"sqlite:///{self.path}"

    def start(self) -> None:
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.path.touch()
        except OSError as err:
            raise TargetError(f"cannot create SQLite file {self.path}: {err.strerror}") from None


class PageLimit:
    """Disk full inside a worker: ``max_page_count`` at the current size on every SQLite
    connection of this process while the switch is on, the old limit back after. SQLite
    then fails writes that need a new page with its own ``SQLITE_FULL``."""

    def __init__(self) -> None:
        self.on = 0
        self.saved: list[tuple[sqlite3.Connection, int]] = []

    def apply(self, switch: int) -> None:
        if switch == self.on:
            return
        self.on = switch
        if not switch:
            for conn, old in self.saved:
                _pragma(conn, f"PRAGMA max_page_count = {old}")
            self.saved = []
            return
        for conn in [o for o in gc.get_objects() if isinstance(o, sqlite3.Connection)]:
            limit = _pragma(conn, "PRAGMA max_page_count")
            size = _pragma(conn, "PRAGMA page_count")
            if limit is not None and size is not None:
                _pragma(conn, f"PRAGMA max_page_count = {max(size, 1)}")
                self.saved.append((conn, limit))


def _pragma(conn: sqlite3.Connection, sql: str) -> int | None:
    try:
        row = conn.execute(sql).fetchone()
    except sqlite3.Error:  # closed, or made in another thread: not ours to limit
        return None
    return int(row[0]) if row else None


class SqliteBackend:
    """``backend = "sqlite"``: see the module docstring."""

    name = "sqlite"

    def target(self, run_dir: Path, namespace: str, url: str = "",
               persistence: str = "always", duration_s: float = 0.0) -> Target:
        """A fresh file under ``run_dir/target`` (a user's file is never written to)."""
        return SqliteTarget(run_dir / "target")

    def definitely_failed(self, exc: BaseException) -> bool:
        # A statement that raised rolled its transaction back (ours, or SQLite's own
        # after SQLITE_FULL): the write did not happen.
        return isinstance(exc, sqlite3.Error)

    def transient(self, exc: BaseException) -> bool:
        # "database is locked", "disk is full", I/O errors: the store could not be used.
        return isinstance(exc, sqlite3.OperationalError)

    def install_points(self, client: Stepper) -> None:
        from harness.backends import sqlite_points

        sqlite_points.install(client)

    def disk_full(self) -> PageLimit:
        return PageLimit()


BACKEND = SqliteBackend()
