"""The ``lock-hold`` fault (SQLite): another process holds the database's write lock.

Free mode: a helper process opens the database and holds ``BEGIN EXCLUSIVE`` for
``duration`` s (default 1.0), as a backup job or a migration would. In WAL mode readers go
on; writers wait for their busy timeout. The helper logs its own start and end events
(``nemesis-lock-<id>.jsonl``); a helper killed at the end of the run gets its end logged
for it, ``cut``.

Controlled mode: a helper process takes the lock and holds it for ``for_steps`` decisions
(default 20); it is told when to take and release it, so both happen between the same two
decisions every time. If a worker holds the lock (it stands between its BEGIN and COMMIT),
the helper tries again before each next decision.

Example: ``[[faults]] kind = "lock-hold", every = 2.0, duration = 0.5``.
"""

from __future__ import annotations

import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.faults.base import Fault, Key, Stepped, Timed, duration

__all__ = ["KIND", "LockHold", "hold_lock", "serve_lock"]

LOCK_REPLY_S = 30.0  # a lock helper that does not answer within this is taken as failed


@dataclass(frozen=True, slots=True)
class LockHold:
    name: str = "lock-hold"
    backends: tuple[str, ...] = ("sqlite",)
    destructive: bool = False
    aimed: bool = False
    keys: tuple[Key, ...] = (duration(1.0),)
    for_steps: int | None = 20

    def at_time(self, fault: Fault, nemesis: Timed) -> None:
        log = nemesis.history / f"nemesis-lock-{fault['id']}.jsonl"
        log.touch()
        p = nemesis.mp.Process(target=hold_lock, name=f"harness-lock-hold-{fault['id']}",
                               args=(str(nemesis.target.path), fault["duration"], str(log),
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
            locker = lockers[fid] = _Locker(nemesis.mp, nemesis.target.path, fid)
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


def hold_lock(db: str, seconds: float, log_path: str, fault_id: int) -> None:
    """Helper process of a free-mode ``lock-hold``: hold SQLite's write lock for
    ``seconds``, logging its start (with how long it waited for the lock) and end."""
    from harness.procs import set_pdeathsig
    from harness.runner.history_writer import HistoryWriter

    set_pdeathsig()
    with HistoryWriter(log_path, "nemesis") as log:
        asked = time.monotonic()
        conn = sqlite3.connect(db, timeout=60.0, isolation_level=None)
        conn.execute("BEGIN EXCLUSIVE")
        log.log("info", "lock-hold", None, {"id": fault_id, "phase": "start",
                                             "duration": seconds,
                                             "waited": round(time.monotonic() - asked, 4)})
        time.sleep(seconds)  # the fault is this long, by definition
        conn.execute("ROLLBACK")
        conn.close()
        log.log("info", "lock-hold", None, {"id": fault_id, "phase": "end", "cut": False})


class _Locker:
    """The helper process of one controlled-mode lock-hold, told when to take and release
    the lock (:func:`serve_lock`)."""

    def __init__(self, mp: Any, db: Path, fault_id: int) -> None:
        self.conn, child = mp.Pipe()
        self.proc = mp.Process(target=serve_lock, args=(str(db), child),
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


def serve_lock(db: str, pipe: Any) -> None:
    """Helper process of a controlled-mode ``lock-hold``: on ``take``, try ``BEGIN
    EXCLUSIVE`` at once and answer whether it got the lock; on ``release`` (or a closed
    pipe), let go."""
    from harness.procs import set_pdeathsig

    set_pdeathsig()
    conn = sqlite3.connect(db, timeout=0, isolation_level=None)
    try:
        while True:
            try:
                what = pipe.recv()
            except EOFError:
                return
            if what != "take":
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                pipe.send(True)
                return
            try:
                conn.execute("BEGIN EXCLUSIVE")
                pipe.send(True)
            except sqlite3.OperationalError:
                pipe.send(False)
    finally:
        conn.close()


KIND = LockHold()
