"""The SQLite backend: the run's SQLite file, what ``sqlite3`` errors mean, the disk-full
switch (``max_page_count``) and the record of a worker's connections it acts on, and (in
:mod:`harness.backends.sqlite_points`) the controlled-mode points on ``sqlite3``
connections."""

from __future__ import annotations

import gc
import os
import sqlite3
import weakref
from functools import cache
from pathlib import Path
from typing import Any
from urllib.parse import quote

from harness.backends import sqlite_points
from harness.backends.base import Stepper, Target
from harness.backends.sqlite_points import CONNECT_ARGS
from harness.errors import TargetError

__all__ = ["BACKEND", "PageLimit", "SqliteBackend", "SqliteTarget", "connections",
           "track_connections"]

#: This process's connections made since :func:`track_connections` (weakly: a store's
#: dropped connection is still finalized, and its transaction rolled back, as without us).
_TRACKED: weakref.WeakSet[sqlite3.Connection] = weakref.WeakSet()


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


@cache
def _trackable(base: type) -> type:
    """A subclass of the connection factory ``base`` (``sqlite3.Connection`` cannot be
    weakly referenced; a subclass can), otherwise the same."""
    return type(base.__name__, (base,), {"__module__": base.__module__})


def track_connections() -> None:
    """From now on, remember every connection this process makes through
    ``sqlite3.connect`` (patched once per process; composes with the controlled-mode
    points' patch in either order). Installed in a worker before its store opens."""
    orig = sqlite3.connect
    if getattr(orig, "_harness_tracked", False):
        return

    def connect(*args: Any, **kw: Any) -> Any:
        kw.update(zip(CONNECT_ARGS, args, strict=False))
        kw["factory"] = _trackable(kw.get("factory", sqlite3.Connection))
        conn = orig(**kw)
        _TRACKED.add(conn)
        return conn

    # A forked child's inherited connections are its parent's (a test process's, say),
    # not its store's: it starts with none.
    os.register_at_fork(after_in_child=_TRACKED.clear)
    connect._harness_tracked = True  # type: ignore[attr-defined]
    connect._harness = getattr(orig, "_harness", False)  # type: ignore[attr-defined]
    sqlite3.connect = connect
    sqlite3.dbapi2.connect = connect


def connections() -> list[sqlite3.Connection]:
    """This process's SQLite connections: those :func:`track_connections` saw made, or, if
    it saw none (the store made them before the patch, or through a ``connect`` it had
    imported by name), every one the garbage collector knows of, a scan that costs 0.1 s
    and more in a process that inherited a large heap."""
    tracked = list(_TRACKED)
    if tracked:
        return tracked
    return [o for o in gc.get_objects() if isinstance(o, sqlite3.Connection)]


class PageLimit:
    """Disk full inside a worker: ``max_page_count`` at the current size on every SQLite
    connection of this process (:func:`connections`) while the switch is on, the old limit
    back after. SQLite then fails writes that need a new page with its own
    ``SQLITE_FULL``. Making one starts tracking the process's connections, so that turning
    the switch on costs microseconds, not a scan of the heap that would use up a short
    fault before any write sees it."""

    def __init__(self) -> None:
        self.on = 0
        self.saved: list[tuple[sqlite3.Connection, int]] = []
        track_connections()

    def apply(self, switch: int) -> None:
        if switch == self.on:
            return
        self.on = switch
        if not switch:
            for conn, old in self.saved:
                _pragma(conn, f"PRAGMA max_page_count = {old}")
            self.saved = []
            return
        for conn in connections():
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
        sqlite_points.install(client)

    def dump(self, url: str, namespace: str = "") -> dict[str, Any]:
        """Every table (by name) and its rows in rowid order (the order they were written;
        a ``WITHOUT ROWID`` table by its columns). The file has no namespace."""
        path = url[len("sqlite://"):] if url.startswith("sqlite:///") else url
        if not Path(path).is_file():
            raise TargetError(f"no SQLite file at {path}")
        # read-only, so a dump never creates or converts a file; "//x" (from
        # "sqlite:////x") is not a URI authority
        conn = sqlite3.connect(f"file:{quote('/' + path.lstrip('/'))}?mode=ro", uri=True)
        try:
            out: dict[str, Any] = {}
            conn.execute("BEGIN")  # one read transaction: every table at the same moment
            tables = conn.execute("SELECT name, sql FROM sqlite_master WHERE type = 'table' "
                                  "AND name NOT LIKE 'sqlite_%' ORDER BY name").fetchall()
            for name, sql in tables:
                q = '"' + name.replace('"', '""') + '"'
                cols = [r[1] for r in conn.execute(f"PRAGMA table_info({q})")]
                order = ("rowid" if "WITHOUT ROWID" not in (sql or "").upper()
                         else ", ".join(str(i + 1) for i in range(len(cols))))
                out[f"{name} ({', '.join(cols)})"] = conn.execute(
                    f"SELECT * FROM {q} ORDER BY {order}").fetchall()
            return out
        except sqlite3.DatabaseError as err:
            raise TargetError(f"cannot read the SQLite file {path}: {err}") from None
        finally:
            conn.close()

    def disk_full(self) -> PageLimit:
        return PageLimit()


BACKEND = SqliteBackend()
