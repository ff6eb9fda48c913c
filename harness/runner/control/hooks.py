"""Scheduling points inside a controlled worker process, at storage-command granularity.

:func:`attach` connects the worker to the coordinator's control socket and patches, in
this process only:

- ``sqlite3.connect``: every connection is made with a subclass of the requested factory
  whose ``execute``, ``executemany``, ``executescript``, ``commit`` and ``rollback`` (and
  its cursors' ``execute``...) first stop at a point. The busy timeout is set to 0 and
  waiting for a lock becomes explicit: a statement that fails with ``SQLITE_BUSY`` (or
  ``BUSY_RECOVERY``) stops at a *busy* point and is retried when granted again, up to
  ``busy_retries`` times, then the error is raised as a busy timeout would. The wait is
  thus a sequence of scheduling decisions, not a length of time, and replays exactly.
  ``SQLITE_BUSY_SNAPSHOT`` is raised at once, as SQLite itself does.
- ``redis.connection.AbstractConnection.send_packed_command``: every command or pipeline
  sent through redis-py (sync) stops at a point first.
- ``random`` and ``uuid.uuid4`` are seeded from the run's seed, the worker slot and (for
  the replacement of a killed process) the process number, so ids a store draws
  (snapshot ids) are the same in a replay and differ between processes.

Stores opened afterwards, built-in or third-party, are covered without changes as long
as they reach ``sqlite3.connect`` and redis-py through those module attributes.

Wire format (worker -> coordinator): ``h`` + slot (int32) once; then per point
``p`` (or ``b``: retrying after SQLITE_BUSY) + op index (int32) + label length (uint8) +
label; ``d`` when done. Coordinator -> worker: one byte ``g`` per grant.
"""

from __future__ import annotations

import contextlib
import os
import random
import socket
import sqlite3
import struct
import threading
import uuid
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any, Literal, overload

__all__ = ["Attach", "Client", "attach"]

_BUSY_CODES = (5, 261)  # SQLITE_BUSY, SQLITE_BUSY_RECOVERY: the busy handler would wait
_CONNECT_ARGS = ("database", "timeout", "detect_types", "isolation_level",
                 "check_same_thread", "factory", "cached_statements", "uri")
_POINT = struct.Struct("<ciB")

CLIENT: Client | None = None


@dataclass(frozen=True, slots=True)
class Attach:
    """What a worker needs to join a controlled run (a field of its WorkerSpec)."""

    address: str  # the coordinator's control socket
    seed: int
    busy_retries: int = 1000
    cpu: int = -1  # the CPU to run on (-1: wherever)


class Client:
    """This worker's end of the control socket."""

    def __init__(self, address: str, slot: int, busy_retries: int) -> None:
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.connect(address)
        self.fd = self.sock.fileno()
        self.op = -1  # index of the op being run, sent with every point
        self.depth = 0  # > 0 while inside a point's command (nested sends are not points)
        self.busy_retries = busy_retries
        self.points = 0
        self.lock = threading.Lock()
        os.write(self.fd, b"h" + struct.pack("<i", slot))

    def point(self, label: str, busy: bool = False) -> None:
        """Stop here until the coordinator grants this worker its next step."""
        lb = label.encode("utf-8", "replace")[:200]
        # A store's own threads take their points one at a time (one message in flight).
        with self.lock:
            os.write(self.fd, _POINT.pack(b"b" if busy else b"p", self.op, len(lb)) + lb)
            self.points += 1
            if os.read(self.fd, 1) != b"g":
                os._exit(4)  # the coordinator is gone: stop without touching the store

    def ops(self, ops: Sequence[Any], start: int = 0) -> Sequence[Any]:
        """``ops[start:]``, telling each point which op (by index in ``ops``) it is in."""
        return _Numbered(self, ops, start)

    def done(self) -> None:
        with contextlib.suppress(OSError):
            os.write(self.fd, b"d")
        self.sock.close()


class _Numbered(Sequence[Any]):
    def __init__(self, client: Client, ops: Sequence[Any], start: int) -> None:
        self.client, self.all, self.start = client, ops, start

    def __len__(self) -> int:
        return max(0, len(self.all) - self.start)

    @overload
    def __getitem__(self, i: int) -> Any: ...
    @overload
    def __getitem__(self, i: slice) -> Sequence[Any]: ...
    def __getitem__(self, i: int | slice) -> Any:
        return self.all[self.start :][i]

    def __iter__(self) -> Iterator[Any]:
        for i in range(self.start, len(self.all)):
            self.client.op = i
            yield self.all[i]


def attach(how: Attach, slot: int, process: int | str | None = None) -> Client:
    """Connect to the coordinator, install the hooks, and stop at the ``start`` point."""
    global CLIENT
    if how.cpu >= 0:
        with contextlib.suppress(OSError):
            os.sched_setaffinity(0, {how.cpu})
    key = f"{how.seed}:{slot}" if process in (None, slot) else f"{how.seed}:{slot}:{process}"
    random.seed(key)
    rng = random.Random(f"{key}:uuid")
    uuid.uuid4 = lambda: uuid.UUID(int=rng.getrandbits(128), version=4)
    CLIENT = Client(how.address, slot, how.busy_retries)
    _patch_sqlite()
    _patch_redis()
    CLIENT.point("start")
    return CLIENT


# --- SQLite -----------------------------------------------------------------------------

def _label(sql: Any) -> str:
    if not isinstance(sql, str):
        return "SQL"
    head = sql.lstrip()[:40].split(None, 2)
    if not head:
        return "SQL"
    word = head[0].upper()
    if word in ("BEGIN", "PRAGMA") and len(head) > 1:
        return f"{word} {head[1].upper()}"
    return word


def _step(conn: Any, label: str, fn: Callable[..., Any], *args: Any) -> Any:
    """Run one statement as one scheduling step, waiting for locks by stepping again."""
    c = CLIENT
    if c is None or c.depth:
        return fn(*args)
    c.point(label)
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
        c.point(label, busy=True)


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
            label = _label(sql)
            out = _step(self.connection, label, super().execute, sql, parameters)
            if label == "PRAGMA BUSY_TIMEOUT":
                _pragma_timeout(self.connection, sql)
            return out

        def executemany(self, sql: Any, seq: Any, /) -> Any:
            return _step(self.connection, _label(sql), super().executemany, sql, seq)

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


def _patch_sqlite() -> None:
    orig = sqlite3.connect
    if getattr(orig, "_harness", False):
        return

    def connect(*args: Any, **kw: Any) -> Any:
        kw.update(zip(_CONNECT_ARGS, args, strict=False))
        timeout = kw.pop("timeout", 5.0)
        factory = kw.pop("factory", sqlite3.Connection)
        conn: Any = orig(timeout=0, factory=_connection_class(factory), **kw)
        conn._harness_waits = bool(timeout and timeout > 0)
        return conn

    connect._harness = True  # type: ignore[attr-defined]
    sqlite3.connect = connect
    sqlite3.dbapi2.connect = connect


# --- redis-py ---------------------------------------------------------------------------

def _redis_label(command: Any) -> str:
    first = command if isinstance(command, bytes | str) else (command[0] if command else b"")
    if isinstance(first, str):
        first = first.encode()
    parts = bytes(first[:64]).split(b"\r\n", 3)
    if len(parts) >= 3 and parts[0].startswith(b"*"):
        return parts[2].decode("ascii", "replace").upper()
    return "REDIS"


def _patch_redis() -> None:
    try:
        from redis.connection import AbstractConnection
    except ImportError:
        return
    orig: Callable[..., None] = AbstractConnection.send_packed_command

    def send_packed_command(self: Any, command: Any, check_health: bool = True) -> None:
        c = CLIENT
        if c is None or c.depth:
            return orig(self, command, check_health)
        c.point(_redis_label(command))
        c.depth += 1
        try:
            return orig(self, command, check_health)
        finally:
            c.depth -= 1

    if getattr(orig, "_harness", False):
        return
    send_packed_command._harness = True  # type: ignore[attr-defined]
    AbstractConnection.send_packed_command = send_packed_command  # type: ignore[method-assign]
