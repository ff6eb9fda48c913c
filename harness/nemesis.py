"""The faults: kill, pause, disconnect, server restart, disk full and held locks, applied
at the times the plan drew from the seed, each one an event of ``process = "nemesis"``.

Free mode runs them from the coordinator's wait loop (:meth:`Nemesis.tick`, main thread,
so a restarted ``redis-server`` keeps its parent-death signal). What each kind does:

- ``kill``: SIGKILL the slot's worker process, whatever it is doing. Its op in flight stays
  an invoke without completion (unknown). A new process, with a new process number,
  continues the slot after that op: every worker marks on a shared :class:`Board` the
  index of the op it is about to run.
- ``pause``: SIGSTOP the worker (``psutil.suspend``), SIGCONT it ``duration`` s later: longer
  than lock leases and cache TTLs, as a GC pause or a swapped-out VM would be.
- ``disconnect``: ``CLIENT KILL ADDR`` for each TCP connection the worker has to Redis
  (found with psutil). A kill that lands between two commands is healed silently by
  redis-py's reconnect; so the nemesis aims at the worst moment, after the server has
  applied a command and before the client reads the reply: it stalls the server with a
  busy Lua script for ``stall`` s (default 0.05), during which the worker's next command
  queues up, and sends the kill near the end of the stall on a second connection. Redis
  runs the queued command, then the kill, and the reply is never sent. ``stall = 0``
  sends a plain kill.
- ``restart``: SIGKILL the harness-managed ``redis-server`` and start it again on the same
  port and directory, with the scenario's persistence (AOF replays). Destructive: refused
  against an external server unless the user passes ``--allow-destructive-faults``; then
  it is ``SHUTDOWN NOSAVE`` and a wait of up to 30 s for the server's own supervisor
  (systemd, docker) to bring it back.
- ``disk-full``: every SQLite connection in every worker gets ``PRAGMA max_page_count``
  set to the file's current page count, for ``duration`` s: a write that must grow the
  database fails with SQLITE_FULL ("database or disk is full"), SQLite's own out-of-space
  path. Why not a real full disk: filling a filesystem hurts every process on the
  machine, the harness's own logs first; ``RLIMIT_FSIZE`` gives EFBIG, which SQLite
  reports as an I/O error, not SQLITE_FULL. ``max_page_count`` is per connection, so the
  workers apply it themselves at their next op when the :class:`Board` says so (they
  find the store's connections with the garbage collector, no store cooperation needed).
- ``lock-hold``: a helper process opens the database and holds ``BEGIN EXCLUSIVE`` for
  ``duration`` s, as a backup job or a migration would. In WAL mode readers go on;
  writers wait for their busy timeout. The helper logs its own start and end events.

:func:`fault_summary` then reads the merged history to say where each fault landed: which
op the target had in flight, and how those ops ended.
"""

from __future__ import annotations

import bisect
import contextlib
import gc
import heapq
import itertools
import socket
import sqlite3
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import psutil
import redis

from harness.errors import InputError
from harness.history import Event, HistoryWriter
from harness.targets import ManagedRedis, SqliteTarget, Target, set_pdeathsig

__all__ = ["APPLIES", "DESTRUCTIVE", "Board", "Nemesis", "Slots", "check_faults",
           "fault_summary"]

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
WRITES = frozenset({"append", "snapshot", "rollback"})
RESTART_WAIT_S = 30.0

_STALL = """local t0 = redis.call('TIME')
repeat local t = redis.call('TIME')
until (t[1] - t0[1]) * 1000000 + (t[2] - t0[2]) >= tonumber(ARGV[1])
return 1"""


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


class Board:
    """Shared memory between the coordinator and its workers: ``progress[slot]``, the op
    index each slot's process is about to run, and ``disk_full``, non-zero while a
    disk-full fault is on. Picklable while processes are being started."""

    def __init__(self, ctx: Any, slots: int) -> None:
        self.progress = ctx.Array("q", [-1] * slots, lock=False)
        self.disk_full = ctx.Value("q", 0, lock=False)

    def track(self, ops: Iterable[Any], slot: int, start: int) -> Iterator[Any]:
        """In a worker: yield its ops (the first being op ``start``), marking each on the
        board first and applying the disk-full switch between ops."""
        limit = _PageLimit()
        for i, op in enumerate(ops, start):
            self.progress[slot] = i
            limit.apply(self.disk_full.value)
            yield op


class _PageLimit:
    """Disk full inside a worker: ``max_page_count`` at the current size on every SQLite
    connection of this process while the switch is on, the old limit back after."""

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
        return cur if cur is not None and cur[1].is_alive() else None

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
        self.pending = sorted(faults, key=lambda f: (f["at"], f["id"]))[::-1]
        self.target = target
        self.slots = slots
        self.ctx = ctx
        self.history = run_dir / "history"
        self.log: HistoryWriter | None = None
        self.t0 = 0.0
        self.ends: list[tuple[float, int, Callable[[bool], None]]] = []
        self.seq = itertools.count()
        self.paused: set[int] = set()
        self.helpers: dict[int, Any] = {}
        self.link = _ServerLink(target.url) if target.kind == "redis" else None

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
                self._log({"kind": "lock-hold", "id": fid}, phase="end", cut=True)
            p.join()
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
        p.kill()
        p.join()
        new = self.slots.replace(fault["worker"])
        self._log(fault, at=t, slot=fault["worker"], process=number, pid=p.pid,
                  replaced_by=new[0] if new else None, replacement_pid=new[1].pid if new else None)
        return [new[1]] if new else []

    def _pause(self, fault: dict[str, Any]) -> None:
        found = self._aim(fault)
        slot = fault["worker"]
        if found is None or slot in self.paused:
            if found is not None:
                self._log(fault, skipped="already paused", slot=slot)
            return
        number, p = found
        proc = psutil.Process(p.pid)
        proc.suspend()
        self.paused.add(slot)
        where = {"slot": slot, "process": number, "pid": p.pid}
        self._log(fault, phase="start", duration=fault["duration"], **where)

        def resume(cut: bool) -> None:
            with contextlib.suppress(psutil.NoSuchProcess):  # killed while paused
                proc.resume()
            self.paused.discard(slot)
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
        board = self.slots.board
        board.disk_full.value = fault["id"] + 1
        self._log(fault, phase="start", duration=fault["duration"])

        def clear(cut: bool) -> None:
            if board.disk_full.value == fault["id"] + 1:
                board.disk_full.value = 0
            self._log(fault, phase="end", cut=cut)

        self._later(fault["duration"], clear)

    def _lock_hold(self, fault: dict[str, Any]) -> None:
        assert isinstance(self.target, SqliteTarget)
        log = str(self.history / f"nemesis-lock-{fault['id']}.jsonl")
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


class _ServerLink:
    """The nemesis's own two connections to the Redis target (no retries)."""

    def __init__(self, url: str) -> None:
        self.url = url
        u = urlparse(url)
        self.port = u.port or 6379
        try:
            self.ips = {a[4][0] for a in socket.getaddrinfo(u.hostname or "127.0.0.1",
                                                            self.port)}
        except OSError:
            self.ips = set()
        self.pool: Any = None
        self.conns: list[Any] = []

    def _connections(self) -> list[Any]:
        if not self.conns:
            self.pool = redis.ConnectionPool.from_url(self.url, socket_timeout=10)
            self.conns = [self.pool.make_connection() for _ in range(2)]
            for c in self.conns:
                c.connect()  # now: a connect during the stall would wait for its end
        return self.conns

    def client_addrs(self, pid: int) -> list[str]:
        """``ip:port`` (as Redis shows it) of each connection of ``pid`` to the server."""
        try:
            conns = psutil.Process(pid).net_connections(kind="tcp")
        except psutil.Error:
            return []
        out = []
        for c in conns:
            if c.raddr and c.raddr.port == self.port and c.raddr.ip in self.ips \
                    and c.status == psutil.CONN_ESTABLISHED:
                ip = c.laddr.ip
                out.append(f"[{ip}]:{c.laddr.port}" if ":" in ip else f"{ip}:{c.laddr.port}")
        return out

    def kill_clients(self, addrs: list[str], stall: float) -> tuple[int, int]:
        """Kill the clients at ``addrs`` at the end of a ``stall`` of the server: (how
        many were killed, monotonic ns when the kill was sent)."""
        if not addrs:
            return 0, time.monotonic_ns()
        staller, killer = self._connections()
        try:
            if stall > 0:
                staller.send_command("EVAL", _STALL, 0, int(stall * 1e6))
                time.sleep(stall * 0.9)  # aim: the worker's next command is queued by now
            sent = time.monotonic_ns()
            for a in addrs:
                killer.send_command("CLIENT", "KILL", "ADDR", a, "SKIPME", "yes")
            killed = sum(int(killer.read_response()) for _ in addrs)
            if stall > 0:
                staller.read_response()
            return killed, sent
        except redis.RedisError:
            self.close()
            raise

    def shutdown_and_wait(self, wait_s: float) -> None:
        """External server only: crash it (SHUTDOWN NOSAVE), wait for it to come back."""
        _, conn = self._connections()
        try:
            conn.send_command("SHUTDOWN", "NOSAVE")
            conn.read_response()
        except redis.ConnectionError:
            pass  # the expected end of a shutdown
        self.close()
        r = redis.Redis.from_url(self.url, socket_connect_timeout=0.5, socket_timeout=0.5)
        end = time.monotonic() + wait_s
        try:
            while True:
                try:
                    if r.ping():
                        return
                except redis.RedisError:
                    if time.monotonic() > end:
                        raise
                time.sleep(0.05)  # polling a server we cannot be notified by
        finally:
            r.close()

    def close(self) -> None:
        for c in self.conns:
            with contextlib.suppress(Exception):
                c.disconnect()
        self.conns = []
        if self.pool is not None:
            self.pool.disconnect()
            self.pool = None


def fault_summary(events: Sequence[Event], faults: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Where the faults landed, from the history alone (a pure function).

    For each fault applied: the ops its target had in flight at that instant (the slot's
    process for kill, pause and disconnect; every worker for the others) and how each
    ended (``None``: never, as after a kill); for faults with a duration, the worker
    ops that failed or ended unknown while it lasted. Per kind: how many were scheduled,
    applied and skipped, how many caught an op in flight, a write in flight, and how
    those ops ended. A schedule whose faults never catch an op in flight proves little."""
    ops = _OpIndex(events)
    t0 = events[0].time if events else 0
    starts: dict[int, Event] = {}
    ends: dict[int, Event] = {}
    for e in events:
        if e.process == "nemesis" and isinstance(e.value, dict) and "id" in e.value:
            (ends if e.value.get("phase") == "end" else starts).setdefault(e.value["id"], e)
    kinds: dict[str, dict[str, Any]] = {}
    records = []
    for f in faults:
        k = kinds.setdefault(f["kind"], {"scheduled": 0, "applied": 0, "skipped": 0,
                                         "in_flight": 0, "in_flight_writes": 0,
                                         "ops": Counter(), "outcomes": Counter(),
                                         "errors_during": 0})
        k["scheduled"] += 1
        ev = starts.get(f["id"])
        if ev is None:
            continue
        if "skipped" in ev.value:
            k["skipped"] += 1
            continue
        k["applied"] += 1
        target = ev.value.get("process")
        caught = ops.in_flight(ev.time, None if target is None else [target])
        k["in_flight"] += bool(caught)
        k["in_flight_writes"] += any(c["f"] in WRITES for c in caught)
        k["ops"].update(c["f"] for c in caught)
        k["outcomes"].update(str(c["outcome"]) for c in caught)
        end = ends.get(f["id"])
        errors = ops.errors_between(ev.time, end.time, None if target is None else [target]) \
            if end is not None else 0
        k["errors_during"] += errors
        records.append({"id": f["id"], "kind": f["kind"], "at": round((ev.time - t0) / 1e9, 4),
                        **{x: ev.value[x] for x in ("slot", "process") if x in ev.value},
                        "in_flight": caught, "errors_during": errors})
    for k in kinds.values():
        k["ops"], k["outcomes"] = dict(k["ops"]), dict(k["outcomes"])
    applied = sum(k["applied"] for k in kinds.values())
    skipped = sum(k["skipped"] for k in kinds.values())
    return {"scheduled": len(faults), "applied": applied, "skipped": skipped,
            "not_reached": len(faults) - applied - skipped, "kinds": kinds,
            "faults": records[:500]}


class _OpIndex:
    """Worker ops by process, for "what was in flight at time t" questions."""

    def __init__(self, events: Sequence[Event]) -> None:
        self.by_proc: dict[Any, list[tuple[int, float, str, str | None]]] = {}
        self.errors: dict[Any, list[int]] = {}
        pending: dict[Any, Event] = {}
        for e in events:
            if e.process in ("nemesis", "final"):
                continue
            if e.type == "invoke":
                if e.process in pending:
                    self._add(pending.pop(e.process), None)
                pending[e.process] = e
            elif e.process in pending:
                self._add(pending.pop(e.process), e)
                if e.type in ("fail", "info"):
                    self.errors.setdefault(e.process, []).append(e.time)
        for inv in pending.values():
            self._add(inv, None)
        self.starts = {p: [o[0] for o in v] for p, v in self.by_proc.items()}

    def _add(self, inv: Event, done: Event | None) -> None:
        self.by_proc.setdefault(inv.process, []).append(
            (inv.time, done.time if done else float("inf"), inv.f, done.type if done else None))

    def in_flight(self, t: int, procs: list[Any] | None) -> list[dict[str, Any]]:
        out = []
        for p in self.by_proc if procs is None else procs:
            i = bisect.bisect_right(self.starts.get(p, []), t) - 1
            if i >= 0:
                _, end, f, outcome = self.by_proc[p][i]
                if end > t:
                    out.append({"process": p, "f": f, "outcome": outcome})
        return out

    def errors_between(self, a: int, b: int, procs: list[Any] | None) -> int:
        """Ops of ``procs`` (every worker: None) that failed or ended unknown in [a, b]."""
        return sum(bisect.bisect_right(t, b) - bisect.bisect_left(t, a)
                   for p, t in self.errors.items() if procs is None or p in procs)
