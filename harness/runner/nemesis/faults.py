"""Applying the faults: the checks that refuse what does not apply, the live process of
each worker slot, and the :class:`Nemesis` that runs the schedule (see the package
docstring for what each kind does)."""

from __future__ import annotations

import contextlib
import heapq
import itertools
import sqlite3
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

import psutil
import redis

from harness.errors import InputError
from harness.runner.history_writer import HistoryWriter
from harness.runner.nemesis.board import Board
from harness.runner.nemesis.redis_link import ServerLink
from harness.targets import ManagedRedis, SqliteTarget, Target, set_pdeathsig

__all__ = ["APPLIES", "DESTRUCTIVE", "Nemesis", "Slots", "check_faults", "hold_lock"]

#: The backends each fault kind applies to.
APPLIES: dict[str, tuple[str, ...]] = {
    "kill": ("sqlite", "redis"),
    "pause": ("sqlite", "redis"),
    "disconnect": ("redis",),
    "restart": ("redis",),
    "disk-full": ("sqlite",),
    "lock-hold": ("sqlite",),
}
#: Faults that destroy server state: only on a server the harness started, unless allowed.
DESTRUCTIVE = frozenset({"restart"})
RESTART_WAIT_S = 30.0


def check_faults(faults: Iterable[dict[str, Any]], backend: str, *, external: bool,
                 allow_destructive: bool = False) -> None:
    """Refuse (InputError, exit 2) a fault that does not apply to ``backend``, or a
    destructive one against an ``external`` server without ``allow_destructive``."""
    for kind in sorted({f["kind"] for f in faults}):
        if backend not in APPLIES[kind]:
            raise InputError(f"fault {kind!r} applies to {' and '.join(APPLIES[kind])} "
                             f"targets only, and this run's target is {backend}")
        if kind in DESTRUCTIVE and external and not allow_destructive:
            raise InputError(f"refusing the {kind!r} fault against an external Redis: it "
                             "destroys the server's state. Pass --allow-destructive-faults "
                             "if that server is yours to break")


class Slots:
    """The live process of each worker slot. ``respawn(slot, process, start)`` starts a
    process for a slot; the new ones are added to ``procs`` (which the coordinator kills
    in its ``finally``) before anything else can fail."""

    def __init__(self, procs: list[Any], lengths: Sequence[int], board: Board,
                 respawn: Callable[[int, int, int], Any]) -> None:
        self.procs = procs
        self.lengths = lengths
        self.board = board
        self.respawn = respawn
        self.current: dict[int, tuple[int, Any]] | None = None
        self.next_process = len(lengths)

    def _slots(self) -> dict[int, tuple[int, Any]]:
        if self.current is None:  # the first fault: every slot runs its first process
            self.current = {i: (i, p) for i, p in enumerate(self.procs[: len(self.lengths)])}
        return self.current

    def live(self, slot: int) -> tuple[int, Any] | None:
        """(process number, process) running ``slot`` now, or None if it has finished."""
        cur = self._slots().get(slot)
        return cur if cur is not None and cur[1].alive else None

    def replace(self, slot: int) -> tuple[int, Any] | None:
        """After a kill: a new process continuing ``slot`` after its op in flight. The
        dead one leaves ``procs``, so its pipe is closed once the wait loop lets it go
        (a coordinator that kept every killed process would run out of descriptors)."""
        current = self._slots()
        dead = current.pop(slot, (slot, None))[1]
        if dead in self.procs:
            self.procs.remove(dead)
        start = self.board.progress[slot] + 1
        if start >= self.lengths[slot]:
            return None
        number, self.next_process = self.next_process, self.next_process + 1
        # Until the new process marks its first op, the slot stands before op ``start``: a
        # kill before then continues at ``start`` again, not after it.
        self.board.progress[slot] = start - 1
        p = self.respawn(slot, number, start)
        self.procs.append(p)
        current[slot] = (number, p)
        return number, p


class Nemesis:
    """Applies a free-mode fault schedule. Use as a context manager around the wait loop:
    entering starts the clock (fault times count from there), leaving ends every fault
    still on (resumes, releases, restores) and logs its end."""

    def __init__(self, faults: Sequence[dict[str, Any]], target: Target, run_dir: Path,
                 slots: Slots, ctx: Any, allow_destructive: bool = False) -> None:
        if any(f["kind"] == "restart" for f in faults) and not (
                isinstance(target, ManagedRedis) or (not target.managed and allow_destructive)):
            raise InputError(f"the restart fault needs a real redis-server; {target.note}")
        self.pending = sorted(faults, key=self._due)[::-1]
        self.target = target
        self.slots = slots
        self.ctx = ctx
        self.history = run_dir / "history"
        self.log: HistoryWriter | None = None
        self.t0 = 0.0
        self.ends: list[tuple[float, int, Callable[[bool], None]]] = []
        self.seq = itertools.count()
        self.paused: set[int] = set()  # pids
        self.helpers: dict[int, Any] = {}
        self.link = ServerLink(target.url) if target.kind == "redis" else None

    @staticmethod
    def _due(fault: dict[str, Any]) -> tuple[float, int]:
        """The order of the schedule: when, then id."""
        return fault["at"], fault["id"]

    def __enter__(self) -> Nemesis:
        self.log = HistoryWriter(self.history / "nemesis.jsonl", "nemesis")
        self.t0 = time.monotonic()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def next_due(self) -> float:
        """Monotonic time of the next fault or fault end (inf when none is left)."""
        due = [self.t0 + self.pending[-1]["at"]] if self.pending else []
        return min([*due, *(e[0] for e in self.ends[:1])], default=float("inf"))

    def tick(self) -> list[Any]:
        """Apply every fault (and fault end) now due; return replacement processes."""
        new: list[Any] = []
        now = time.monotonic()
        while self.ends and self.ends[0][0] <= now:
            heapq.heappop(self.ends)[2](False)
        while self.pending and self.t0 + self.pending[-1]["at"] <= now:
            fault = self.pending.pop()
            new += getattr(self, "_" + fault["kind"].replace("-", "_"))(fault) or []
        for fid, p in list(self.helpers.items()):
            if not p.is_alive():
                p.join()
                del self.helpers[fid]
        return new

    def close(self) -> None:
        """End what is still on, now; idempotent."""
        while self.ends:
            heapq.heappop(self.ends)[2](True)
        for fid, p in self.helpers.items():
            if p.is_alive():
                p.kill()
            p.join()
            if b'"end"' not in self._helper_log(fid).read_bytes():  # killed while holding
                self._log({"kind": "lock-hold", "id": fid}, phase="end", cut=True)
        self.helpers.clear()
        if self.link is not None:
            self.link.close()
        if self.log is not None:
            self.log.close()
            self.log = None

    # -- helpers ---------------------------------------------------------------------

    def _log(self, fault: dict[str, Any], **value: Any) -> None:
        """A nemesis event; ``at`` (monotonic ns) when it happened before being logged."""
        at = value.pop("at", None)
        if self.log is not None:
            self.log.log("info", fault["kind"], None, {"id": fault["id"], **value}, time_ns=at)

    def _later(self, delay: float, end: Callable[[bool], None]) -> None:
        heapq.heappush(self.ends, (time.monotonic() + delay, next(self.seq), end))

    def _aim(self, fault: dict[str, Any]) -> tuple[int, Any] | None:
        found = self.slots.live(fault["worker"])
        if found is None:
            self._log(fault, skipped="the worker slot has finished", slot=fault["worker"])
        return found

    # -- the faults ------------------------------------------------------------------

    def _kill(self, fault: dict[str, Any]) -> list[Any]:
        found = self._aim(fault)
        if found is None:
            return []
        number, p = found
        t = time.monotonic_ns()
        p.kill()  # SIGKILL ends a paused process too
        p.wait()
        new = self.slots.replace(fault["worker"])
        self._log(fault, at=t, slot=fault["worker"], process=number, pid=p.pid,
                  replaced_by=new[0] if new else None, replacement_pid=new[1].pid if new else None)
        return [new[1]] if new else []

    def _pause(self, fault: dict[str, Any]) -> None:
        found = self._aim(fault)
        slot = fault["worker"]
        if found is None or found[1].pid in self.paused:
            if found is not None:
                self._log(fault, skipped="already paused", slot=slot)
            return
        number, p = found
        try:
            proc = psutil.Process(p.pid)
            proc.suspend()
        except psutil.NoSuchProcess:  # it ended between the look and the stop
            self._log(fault, skipped="the worker slot has finished", slot=slot)
            return
        self.paused.add(p.pid)
        where = {"slot": slot, "process": number, "pid": p.pid}
        self._log(fault, phase="start", duration=fault["duration"], **where)

        def resume(cut: bool) -> None:
            with contextlib.suppress(psutil.NoSuchProcess):  # killed while paused
                proc.resume()
            self.paused.discard(p.pid)
            self._log(fault, phase="end", cut=cut, **where)

        self._later(fault["duration"], resume)

    def _disconnect(self, fault: dict[str, Any]) -> None:
        found = self._aim(fault)
        if found is None or self.link is None:
            return
        number, p = found
        addrs = self.link.client_addrs(p.pid)
        t = time.monotonic_ns()
        try:
            killed, t = self.link.kill_clients(addrs, fault.get("stall", 0.0))
            error = None
        except redis.RedisError as err:
            killed, error = 0, f"{type(err).__name__}: {err}"
        self._log(fault, at=t, slot=fault["worker"], process=number, pid=p.pid,
                  clients=killed, stall=fault.get("stall", 0.0),
                  **({"error": error} if error else {}))

    def _restart(self, fault: dict[str, Any]) -> None:
        before = list(getattr(self.target, "pids", []))
        self._log(fault, phase="start", pids=before)
        started = time.monotonic()
        error = None
        try:
            if isinstance(self.target, ManagedRedis):
                self.target.restart()
            elif self.link is not None:
                self.link.shutdown_and_wait(RESTART_WAIT_S)
        except Exception as err:  # a server that does not come back ends the fault too
            error = f"{type(err).__name__}: {err}"
        if self.link is not None:
            self.link.close()
        self._log(fault, phase="end", pids=list(getattr(self.target, "pids", [])),
                  seconds=round(time.monotonic() - started, 4),
                  **({"error": error} if error else {}))

    def _disk_full(self, fault: dict[str, Any]) -> None:
        self._disk_full_for(fault, "duration")

    def _disk_full_for(self, fault: dict[str, Any], span: str) -> None:
        """Turn the board's disk-full switch on, and off after ``fault[span]`` (seconds
        here, decisions in controlled mode: whatever :meth:`_later` counts in)."""
        board = self.slots.board
        board.disk_full.value = fault["id"] + 1
        self._log(fault, phase="start", **{span: fault[span]})

        def clear(cut: bool) -> None:
            if board.disk_full.value == fault["id"] + 1:  # a later disk-full owns it now
                board.disk_full.value = 0
            self._log(fault, phase="end", cut=cut)

        self._later(fault[span], clear)

    def _helper_log(self, fault_id: int) -> Path:
        path = self.history / f"nemesis-lock-{fault_id}.jsonl"
        path.touch()
        return path

    def _lock_hold(self, fault: dict[str, Any]) -> None:
        assert isinstance(self.target, SqliteTarget)
        log = str(self._helper_log(fault["id"]))
        p = self.ctx.Process(target=hold_lock, name=f"harness-lock-hold-{fault['id']}",
                             args=(str(self.target.path), fault["duration"], log, fault["id"]))
        p.start()
        self.helpers[fault["id"]] = p


def hold_lock(db: str, duration: float, log_path: str, fault_id: int) -> None:
    """Helper process of ``lock-hold``: hold SQLite's write lock for ``duration`` s."""
    set_pdeathsig()
    with HistoryWriter(log_path, "nemesis") as log:
        asked = time.monotonic()
        conn = sqlite3.connect(db, timeout=60.0, isolation_level=None)
        conn.execute("BEGIN EXCLUSIVE")
        log.log("info", "lock-hold", None, {"id": fault_id, "phase": "start",
                                             "duration": duration,
                                             "waited": round(time.monotonic() - asked, 4)})
        time.sleep(duration)  # the fault is this long, by definition
        conn.execute("ROLLBACK")
        conn.close()
        log.log("info", "lock-hold", None, {"id": fault_id, "phase": "end", "cut": False})
