"""Faults in controlled mode: each lands before a scheduling decision and lasts a number of
decisions, so one seed (or one trace) gives the same faults at the same storage commands.

The grant loop (:class:`harness.runner.control.Controller`) calls :meth:`SteppedNemesis.apply`
before every decision, while every worker stands at a point, is blocked, or is done.
What each kind does there:

- ``kill``: SIGKILL the slot's process where it stands, before the storage command of its
  point, so the op in flight ends unknown. A new process (new process number) continues
  the slot after that op; the grant loop waits for it to stand at its start point before
  it decides again, so the replacement's start is no race.
- ``pause``: the slot is granted nothing for ``for_steps`` decisions while the others go
  on. If nothing else can go on, the pause ends early (``cut``).
- ``disconnect``: ``CLIENT KILL`` of the worker's Redis connections; the command it stands
  before then meets a closed connection.
- ``restart``: SIGKILL and restart the managed ``redis-server`` between two grants.
- ``disk-full``: the board's switch is on for ``for_steps`` decisions (each worker applies
  it at its next op, as in free mode).
- ``lock-hold``: a helper process takes SQLite's write lock (``BEGIN EXCLUSIVE``) and holds
  it for ``for_steps`` decisions. If a worker holds the lock (it stands between its BEGIN
  and COMMIT), the helper tries again before each next decision.

Every fault is a nemesis event carrying its decision (``step``) and, for one aimed at a
worker, the ``op`` and ``point`` where it found it. :meth:`SteppedNemesis.record` is the
schedule and where each fault landed, for ``trace.json``.
"""

from __future__ import annotations

import heapq
import sqlite3
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Protocol

from harness.backends.sqlite import SqliteTarget
from harness.runner.nemesis.faults import Nemesis
from harness.runner.procs import set_pdeathsig

__all__ = ["SteppedNemesis", "Stepping", "serve_lock"]

LOCK_REPLY_S = 30.0  # a lock helper that does not answer within this is taken as failed
_LANDED = ("step", "process", "op", "point", "blocked", "skipped")


class Stepping(Protocol):
    """What the grant loop offers the stepped nemesis."""

    def at(self, slot: int) -> dict[str, Any] | None:
        """Where the slot's worker stands (``op``, ``point``, ``blocked``); None when done."""
        ...

    def replaced(self, slot: int, proc: Any | None) -> None:
        """The slot's process was killed and ``proc`` (None: no op left) continues it:
        forget the dead one's connection, wait until the new one stands at its start."""
        ...

    def unlock(self) -> None:
        """An SQLite lock was released outside any grant: lock waiters may try again."""
        ...

    def pin(self, pids: Sequence[int]) -> None:
        """Run these processes (a restarted server) on the stepping CPU."""
        ...


class SteppedNemesis(Nemesis):
    """Applies a controlled-mode fault schedule (faults with ``at_step``, ``for_steps``);
    see the module docstring. Use as a context manager around the grant loop, as the
    free-mode :class:`Nemesis`: leaving it ends every fault still on."""

    def __init__(self, *args: Any, **kw: Any) -> None:
        super().__init__(*args, **kw)
        self.schedule = sorted(self.pending, key=lambda f: int(f["id"]))
        self.step = -1
        self.view: Stepping | None = None
        self.holds: dict[int, Callable[[bool], None]] = {}  # paused slot -> its end
        self.retry: list[dict[str, Any]] = []  # lock-holds waiting for the lock
        self.lockers: dict[int, _Locker] = {}
        self.landed: dict[int, dict[str, Any]] = {}

    @staticmethod
    def _due(fault: dict[str, Any]) -> tuple[float, int]:
        return fault["at_step"], fault["id"]

    def apply(self, step: int, view: Stepping) -> None:
        """Apply every fault (and fault end) due before decision ``step``."""
        self.step, self.view = step, view
        while self.ends and self.ends[0][0] <= step:
            heapq.heappop(self.ends)[2](False)
        retry, self.retry = self.retry, []
        for fault in retry:
            self._lock_hold(fault)
        while self.pending and self.pending[-1]["at_step"] <= step:
            fault = self.pending.pop()
            getattr(self, "_" + fault["kind"].replace("-", "_"))(fault)

    def held(self, slot: int) -> bool:
        """Whether the slot is paused (not to be granted)."""
        return slot in self.holds

    def release_holds(self) -> None:
        """End every pause now: only paused workers could go on."""
        for end in list(self.holds.values()):
            end(True)

    def record(self) -> list[dict[str, Any]]:
        """The schedule, in id order, each fault with where it landed (``step`` None: the
        run ended before it came up)."""
        return [{**f, "step": None, **self.landed.get(f["id"], {})} for f in self.schedule]

    def close(self) -> None:
        for fault in self.retry:
            self._log(fault, skipped="the write lock was never free")
        self.retry = []
        while self.ends:
            heapq.heappop(self.ends)[2](True)
        for locker in self.lockers.values():
            locker.stop()
        self.lockers.clear()
        super().close()

    # -- what differs from free mode ------------------------------------------------

    def _later(self, delay: float, end: Callable[[bool], None]) -> None:
        heapq.heappush(self.ends, (self.step + int(delay), next(self.seq), end))

    def _log(self, fault: dict[str, Any], **value: Any) -> None:
        value = {"step": self.step, **value}
        slot = fault.get("worker")
        if slot is not None and self.view is not None and "skipped" not in value:
            where = self.view.at(slot)
            if where is not None:
                value.update(op=where["op"], point=where["point"])
                if where["blocked"]:
                    value["blocked"] = True
        super()._log(fault, **value)
        if value.get("phase") != "end":
            self.landed.setdefault(fault["id"], {k: value[k] for k in _LANDED if k in value})

    def _aim(self, fault: dict[str, Any]) -> tuple[int, Any] | None:
        # The grant loop knows a worker is done before its process has exited: asking the
        # process would make "skipped" a race.
        if self.view is not None and self.view.at(fault["worker"]) is None:
            self._log(fault, skipped="the worker slot has finished", slot=fault["worker"])
            return None
        return super()._aim(fault)

    def _kill(self, fault: dict[str, Any]) -> list[Any]:
        slot = fault["worker"]
        if self._aim(fault) is None:
            return []
        new = super()._kill(fault)
        if slot in self.holds:  # a paused process that is killed is paused no more
            self.holds[slot](True)
        if self.view is not None:
            self.view.replaced(slot, new[0] if new else None)
        return new

    def _pause(self, fault: dict[str, Any]) -> None:
        slot = fault["worker"]
        found = self._aim(fault)
        if found is None:
            return
        if slot in self.holds:
            self._log(fault, skipped="already paused", slot=slot)
            return
        where = {"slot": slot, "process": found[0]}
        ended = False

        def resume(cut: bool) -> None:
            nonlocal ended
            if not ended:
                ended = True
                self.holds.pop(slot, None)
                self._log(fault, phase="end", cut=cut, **where)

        self.holds[slot] = resume
        self._log(fault, phase="start", for_steps=fault["for_steps"], **where)
        self._later(fault["for_steps"], resume)

    def _restart(self, fault: dict[str, Any]) -> None:
        super()._restart(fault)
        if self.view is not None:
            self.view.pin(list(getattr(self.target, "pids", [])))

    def _disk_full(self, fault: dict[str, Any]) -> None:
        self._disk_full_for(fault, "for_steps")

    def _lock_hold(self, fault: dict[str, Any]) -> None:
        assert isinstance(self.target, SqliteTarget)
        fid = fault["id"]
        locker = self.lockers.get(fid)
        if locker is None:
            locker = self.lockers[fid] = _Locker(self.ctx, self.target.path, fid)
        if not locker.take():  # a worker holds the write lock: try before the next decision
            self.retry.append(fault)
            return
        self._log(fault, phase="start", for_steps=fault["for_steps"],
                  waited_steps=self.step - fault["at_step"])

        def release(cut: bool) -> None:
            locker.release()
            self.lockers.pop(fid, None)
            if self.view is not None:
                self.view.unlock()
            self._log(fault, phase="end", cut=cut)

        self._later(fault["for_steps"], release)


class _Locker:
    """The helper process of one stepped lock-hold, told when to take and release the
    lock (``serve_lock``), so both happen between the same two decisions every time."""

    def __init__(self, ctx: Any, db: Path, fault_id: int) -> None:
        self.conn, child = ctx.Pipe()
        self.proc = ctx.Process(target=serve_lock, args=(str(db), child),
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
    """Helper process of a stepped ``lock-hold``: on ``take``, try ``BEGIN EXCLUSIVE`` at
    once and answer whether it got the lock; on ``release`` (or a closed pipe), let go."""
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
