"""The ``lock-hold`` fault (SQLite, PostgreSQL): another process holds the store's locks.

Free mode: a helper process opens the database and holds, for ``duration`` s (default 1.0),
as a backup job or a migration would: on SQLite, ``BEGIN EXCLUSIVE`` (in WAL mode readers
go on; writers wait for their busy timeout); on PostgreSQL, ``LOCK TABLE`` on every table
of the run's schema ``IN ACCESS EXCLUSIVE MODE`` (readers and writers wait; a schema with
no table yet is locked in nothing, and the start event says ``tables: 0``). The helper logs its own start and end events
(``nemesis-lock-<id>.jsonl``); a helper killed at the end of the run gets its end logged
for it, ``cut``.

Controlled mode: a helper process takes the lock and holds it for ``for_steps`` decisions
(default 20); it is told when to take and release it, so both happen between the same two
decisions every time. If a worker holds the lock (it stands between its BEGIN and COMMIT),
the helper tries again before each next decision (PostgreSQL: ``NOWAIT``).

Example: ``[[faults]] kind = "lock-hold", every = 2.0, duration = 0.5``.
"""

from __future__ import annotations

import sqlite3
import time
from dataclasses import dataclass
from typing import Any

from harness.faults.base import Fault, Key, Stepped, Timed, duration

__all__ = ["KIND", "LockHold", "hold_lock", "serve_lock"]

LOCK_REPLY_S = 30.0  # a lock helper that does not answer within this is taken as failed


@dataclass(frozen=True, slots=True)
class LockHold:
    name: str = "lock-hold"
    backends: tuple[str, ...] = ("sqlite", "postgres")
    destructive: bool = False
    aimed: bool = False
    keys: tuple[Key, ...] = (duration(1.0),)
    for_steps: int | None = 20

    def at_time(self, fault: Fault, nemesis: Timed) -> None:
        log = nemesis.history / f"nemesis-lock-{fault['id']}.jsonl"
        log.touch()
        p = nemesis.mp.Process(target=hold_lock, name=f"harness-lock-hold-{fault['id']}",
                               args=(_where(nemesis.target), fault["duration"], str(log),
                                     fault["id"]))
        p.start()

        def cut() -> None:
            if b'"end"' not in log.read_bytes():  # killed while holding
                nemesis.log(fault, phase="end", cut=True)

        nemesis.helper(fault, p, cut, log)

    def at_step(self, fault: Fault, nemesis: Stepped) -> None:
        fid = fault["id"]
        lockers = nemesis.memo("lock-hold", lambda: _lockers(nemesis))
        locker = lockers.get(fid)
        if locker is None:
            locker = lockers[fid] = _Locker(nemesis.mp, _where(nemesis.target), fid)
        if not locker.take():  # a worker holds the write lock: try before the next decision
            nemesis.again(fault, skipped="the write lock was never free")
            return
        nemesis.log(fault, phase="start", for_steps=fault["for_steps"],
                    waited_steps=nemesis.step - fault["at_step"])

        def release(cut: bool) -> None:
            locker.release()
            lockers.pop(fid, None)
            nemesis.unlock()
            nemesis.log(fault, phase="end", cut=cut)

        nemesis.later(fault["for_steps"], release)


def _lockers(nemesis: Stepped) -> dict[int, _Locker]:
    """The run's lock helpers by fault id; those still there when the run ends (waiting
    for the lock) are stopped then."""
    lockers: dict[int, _Locker] = {}

    def stop() -> None:
        for locker in lockers.values():
            locker.stop()
        lockers.clear()

    nemesis.at_close(stop)
    return lockers


def _where(target: Any) -> str:
    """What a helper opens: the SQLite file's path, or the PostgreSQL URL (its schema's)."""
    return str(target.path) if getattr(target, "kind", "") == "sqlite" else str(target.url)


class _Lock:
    """The lock of one database: ``take`` (waiting, or not) and ``release``; ``tables``:
    how many tables it covers (PostgreSQL), None on SQLite."""

    def __init__(self, where: str, wait: bool) -> None:
        self.pg = where.startswith(("postgresql://", "postgres://"))
        self.wait = wait
        self.tables: int | None = None
        if self.pg:
            import psycopg

            self.conn: Any = psycopg.connect(where, autocommit=True)
        else:
            self.conn = sqlite3.connect(where, timeout=60.0 if wait else 0, isolation_level=None)

    def take(self) -> bool:
        if not self.pg:
            try:
                self.conn.execute("BEGIN EXCLUSIVE")
                return True
            except sqlite3.OperationalError:
                if self.wait:
                    raise
                return False
        import psycopg

        self.conn.execute("BEGIN")
        names = [t for (t,) in self.conn.execute(
            "SELECT quote_ident(tablename) FROM pg_tables WHERE schemaname = current_schema() "
            "ORDER BY tablename").fetchall()]
        self.tables = len(names)
        if not names:
            return True
        try:
            self.conn.execute(f"LOCK TABLE {', '.join(names)} IN ACCESS EXCLUSIVE MODE"
                              + ("" if self.wait else " NOWAIT"))
            return True
        except psycopg.errors.LockNotAvailable:
            self.conn.execute("ROLLBACK")
            return False

    def release(self) -> None:
        self.conn.execute("ROLLBACK")

    def close(self) -> None:
        self.conn.close()


def hold_lock(where: str, seconds: float, log_path: str, fault_id: int) -> None:
    """Helper process of a free-mode ``lock-hold``: hold the database's lock (SQLite's write
    lock; PostgreSQL's table locks) for ``seconds``, logging its start (with how long it
    waited for the lock) and end."""
    from harness.procs import set_pdeathsig
    from harness.runner.history_writer import HistoryWriter

    set_pdeathsig()
    with HistoryWriter(log_path, "nemesis") as log:
        asked = time.monotonic()
        lock = _Lock(where, wait=True)
        lock.take()
        log.log("info", "lock-hold", None, {"id": fault_id, "phase": "start",
                                             "duration": seconds,
                                             "waited": round(time.monotonic() - asked, 4),
                                             **({"tables": lock.tables} if lock.pg else {})})
        time.sleep(seconds)  # the fault is this long, by definition
        lock.release()
        lock.close()
        log.log("info", "lock-hold", None, {"id": fault_id, "phase": "end", "cut": False})


class _Locker:
    """The helper process of one controlled-mode lock-hold, told when to take and release
    the lock (:func:`serve_lock`)."""

    def __init__(self, mp: Any, where: str, fault_id: int) -> None:
        self.conn, child = mp.Pipe()
        self.proc = mp.Process(target=serve_lock, args=(where, child),
                               name=f"harness-lock-hold-{fault_id}")
        self.proc.start()
        child.close()

    def _ask(self, what: str) -> bool:
        try:
            self.conn.send(what)
            return bool(self.conn.recv()) if self.conn.poll(LOCK_REPLY_S) else False
        except (OSError, EOFError):
            return False

    def take(self) -> bool:
        return self._ask("take")

    def release(self) -> None:
        self._ask("release")
        self.stop()

    def stop(self) -> None:
        self.conn.close()
        self.proc.join(timeout=5)
        if self.proc.is_alive():
            self.proc.kill()
            self.proc.join()


def serve_lock(where: str, pipe: Any) -> None:
    """Helper process of a controlled-mode ``lock-hold``: on ``take``, try to take the lock
    at once and answer whether it got it; on ``release`` (or a closed pipe), let go."""
    from harness.procs import set_pdeathsig

    set_pdeathsig()
    lock = _Lock(where, wait=False)
    held = False
    try:
        while True:
            try:
                what = pipe.recv()
            except EOFError:
                return
            if what != "take":
                if held:
                    lock.release()
                pipe.send(True)
                return
            held = lock.take()
            pipe.send(held)
    finally:
        lock.close()


KIND = LockHold()
