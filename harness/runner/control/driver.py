"""The coordinator's side of controlled mode: one worker at a time, chosen by the seed.

Workers connect to a Unix socket (any start method works), say who they are and stop at
their ``start`` point. Once every worker is there, the grant loop runs:

1. wait for the worker granted last to reach its next point (or finish). If it stays
   silent past ``block_ms`` it is *blocked* (waiting on something outside the harness's
   points): that is recorded in the trace and another worker is granted;
2. the eligible workers are those at a point, minus those that just hit ``SQLITE_BUSY``
   and have not seen another worker step since (retrying them could not succeed);
3. the strategy (or, in a replay, the trace) picks one; the grant is recorded.

Since only one worker runs between two points, each step sees the store exactly as the
steps before it left it, and the history follows from the grants. Only a blocked step is
timing-dependent; the trace says where that happened.

Faults (a :class:`harness.runner.nemesis.SteppedNemesis`) are applied before a decision, while
no worker runs: a killed worker's replacement is waited for until it stands at its start
point, and a paused one is not eligible.
"""

from __future__ import annotations

import math
import os
import select
import shutil
import socket
import struct
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness.runner.control.hooks import Attach
from harness.runner.control.strategies import Sequential, Strategy, make_strategy
from harness.runner.control.trace import Trace
from harness.runner.control.windows import command_windows
from harness.scenario_control import ControlSpec

if TYPE_CHECKING:
    from harness.runner.launch import Handle
    from harness.runner.nemesis.stepped import SteppedNemesis

__all__ = ["Controller", "OpTable", "socket_dir"]

#: (slot, op index) -> (kind, session) of that planned op, None past the plan.
OpTable = Callable[[int, int], "tuple[str, str] | None"]

READY, RUNNING, BLOCKED, DONE = range(4)
_HEAD = struct.Struct("<ciB")
_START_S = 60.0  # for every worker to connect
#: Points whose step may release an SQLite lock (a worker that ends releases its own too).
_RELEASES = frozenset({"COMMIT", "END", "ROLLBACK", "RELEASE", "SCRIPT"})


def _one_cpu() -> int:
    """The CPU a controlled run steps on: the last this process may use (-1: no choice)."""
    try:
        allowed = sorted(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return -1
    return allowed[-1] if len(allowed) > 1 else -1


@contextmanager
def _pinned(pids: Sequence[int], cpu: int) -> Iterator[None]:
    """Run ``pids`` (0: this process) on ``cpu`` within the block, then as before."""
    before: dict[int, set[int]] = {}
    if cpu >= 0:
        for pid in pids:
            with suppress(OSError):
                before[pid] = os.sched_getaffinity(pid)
                os.sched_setaffinity(pid, {cpu})
    try:
        yield
    finally:
        for pid, cpus in before.items():
            with suppress(OSError):
                os.sched_setaffinity(pid, cpus)


#: Longest path an AF_UNIX socket may have on Linux (``sun_path`` is 108 bytes with its NUL).
SUN_PATH_MAX = 107
_SOCKET = "ctl"
_TMP_PREFIX = "hxc-"


def socket_dir(run_dir: Path | None) -> tuple[str, bool]:
    """(directory of the control socket, whether it is a temporary one to remove).

    In the run directory (``.control/``) when its socket path fits :data:`SUN_PATH_MAX`, so
    a coordinator killed with SIGKILL leaves nothing in the system temp dir; else a short
    ``hxc-<pid>-*`` directory there, and each new one first removes those whose coordinator
    process is gone (a SIGKILLed run's)."""
    if run_dir is not None:
        here = run_dir.resolve() / ".control"
        if len(os.fsencode(here / _SOCKET)) <= SUN_PATH_MAX:
            here.mkdir(exist_ok=True)
            return str(here), False
    _sweep_stale(Path(tempfile.gettempdir()))
    return tempfile.mkdtemp(prefix=f"{_TMP_PREFIX}{os.getpid()}-"), True


def _sweep_stale(tmp: Path) -> None:
    """Remove the ``hxc-<pid>-*`` directories (ours by uid) whose process has ended."""
    for d in tmp.glob(f"{_TMP_PREFIX}*-*"):
        pid = d.name[len(_TMP_PREFIX):].split("-", 1)[0]
        with suppress(OSError, ValueError):
            if d.stat().st_uid == os.getuid() and not _alive(int(pid)):
                shutil.rmtree(d, ignore_errors=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class _Worker:
    __slots__ = ("busy", "fd", "granted", "label", "lockwait", "op", "slot", "sock", "state")

    def __init__(self, slot: int) -> None:
        self.slot = slot
        self.sock: socket.socket | None = None
        self.fd = -1
        self.state = RUNNING  # until its start point arrives
        self.op = -1
        self.granted = -2  # the op of its last grant: at a point of that op again = mid-op
        self.label = ""
        self.busy = False
        self.lockwait = False


class _View:
    """Where each worker stands (:class:`harness.runner.control.strategies.View`)."""

    def __init__(self, workers: dict[int, _Worker], ops: OpTable) -> None:
        self.workers = workers
        self.ops = ops

    def op_index(self, slot: int) -> int:
        return self.workers[slot].op

    def op(self, slot: int) -> tuple[str, str] | None:
        n = self.workers[slot].op
        return self.ops(slot, n) if n >= 0 else None

    def mid_op(self, slot: int) -> bool:
        w = self.workers[slot]
        return w.op >= 0 and w.op == w.granted


class Controller:
    """Listens for the workers of one run and drives them (see the module docstring)."""

    def __init__(self, spec: ControlSpec, seed: int, workers: int, steps_estimate: int,
                 run_dir: Path | None = None, ops: OpTable = lambda _slot, _n: None) -> None:
        self.spec = spec
        self.bound = spec.block_ms / 1000.0
        self.dir, self.temporary = socket_dir(run_dir)  # see socket_dir: where, and why
        self.address = os.path.join(self.dir, _SOCKET)
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.listener.bind(self.address)
        self.listener.listen(workers + 8)
        self.listener.setblocking(False)
        self.cpu = _one_cpu() if spec.pin else -1
        self.attach = Attach(self.address, seed, spec.busy_retries, self.cpu)  # for WorkerSpecs
        self.poller = select.poll()
        self.poller.register(self.listener.fileno(), select.POLLIN)
        self.workers = {w: _Worker(w) for w in range(workers)}
        self.by_fd: dict[int, _Worker | None] = {}
        self.bufs: dict[int, bytearray] = {}
        self.socks: dict[int, socket.socket] = {}
        self.replay = spec.trace
        self.replay_blocked = frozenset(spec.blocked)
        self.rk = 0  # position in the replayed trace
        self.wait_since = 0.0
        name = "replay" if spec.trace is not None else spec.strategy
        self.strategy: Strategy = make_strategy(
            spec.strategy, seed, workers, spec.depth, spec.steps or steps_estimate)
        self.fallback = Sequential()
        self.ops = ops
        self.view = _View(self.workers, ops)
        self.trace = Trace(name, seed, workers, replayed=spec.trace is not None)
        self.nemesis: SteppedNemesis | None = None
        self.fault_k = -1  # the last decision before which faults were applied
        self.pinned: dict[int, set[int]] = {}  # restarted servers moved to our CPU

    # --- the socket side ----------------------------------------------------------------

    def _accept(self) -> None:
        while True:
            try:
                sock, _ = self.listener.accept()
            except BlockingIOError:
                return
            fd = sock.fileno()
            self.socks[fd] = sock
            self.by_fd[fd] = None
            self.bufs[fd] = bytearray()
            self.poller.register(fd, select.POLLIN)

    def _drop(self, fd: int) -> None:
        w = self.by_fd.pop(fd, None)
        if w is not None:
            self._done(w)
        self.poller.unregister(fd)
        self.socks.pop(fd).close()

    def _feed(self, fd: int, data: bytes) -> None:
        buf = self.bufs[fd]
        buf += data
        while buf:
            w = self.by_fd.get(fd)
            kind = bytes(buf[:1])
            if w is None:
                if kind != b"h" or len(buf) < 5:
                    return
                (slot,) = struct.unpack_from("<i", buf, 1)
                del buf[:5]
                w = self.workers.setdefault(slot, _Worker(slot))
                w.sock, w.fd, w.state = self.socks[fd], fd, RUNNING
                self.by_fd[fd] = w
            elif kind == b"d":
                del buf[:1]
                self._done(w)
            elif kind in (b"p", b"b"):
                if len(buf) < _HEAD.size:
                    return
                _, op, n = _HEAD.unpack_from(buf)
                if len(buf) < _HEAD.size + n:
                    return
                w.label = bytes(buf[_HEAD.size : _HEAD.size + n]).decode("utf-8", "replace")
                del buf[: _HEAD.size + n]
                w.op, w.busy, w.lockwait, w.state = op, kind == b"b", kind == b"b", READY
            else:
                raise RuntimeError(f"control socket: unexpected byte {bytes(kind)!r}")

    def _done(self, w: _Worker) -> None:
        # Only the first news of the end counts: a worker says "done" while it runs (a
        # step of the trace), and its socket closing later arrives at a time no seed
        # decides; clearing the lock waits again then made the eligible set, so the
        # trace, depend on timing.
        if w.state == DONE:
            return
        w.state = DONE
        for other in self.workers.values():  # its connections are closed: locks are free
            other.lockwait = False

    def _pump(self, timeout_s: float) -> None:
        """Read whatever the workers said within ``timeout_s`` (0: only what is there)."""
        ms = math.ceil(timeout_s * 1000) if timeout_s > 0 else 0
        for fd, _ in self.poller.poll(ms):
            if fd == self.listener.fileno():
                self._accept()
                continue
            try:
                data = os.read(fd, 65536)
            except OSError:
                data = b""
            if data:
                self._feed(fd, data)
            else:
                self._drop(fd)

    def _grant(self, w: _Worker) -> None:
        t = self.trace
        if w.busy:
            t.busy.append(len(t.grants))
        t.grants.append(w.slot)
        t.ops.append(w.op)
        w.granted = w.op
        t.points.append(w.label)
        if w.label in _RELEASES:  # this step may free a lock: the waiters may try again
            for other in self.workers.values():
                if other is not w:
                    other.lockwait = False
        w.state = RUNNING
        try:
            os.write(w.fd, b"g")
        except OSError:
            w.state = DONE

    # --- the grant loop -----------------------------------------------------------------

    def _start(self, procs: Sequence[Handle], deadline: float) -> None:
        """Wait until every worker stands at its start point (or died before)."""
        while time.monotonic() < deadline:
            for slot, p in enumerate(procs):
                w = self.workers.get(slot)
                if w is not None and w.sock is None and p.exitcode is not None:
                    w.state = DONE
            if all(w.state != RUNNING for w in self.workers.values()):
                return
            self._pump(0.05)
        for w in self.workers.values():
            if w.state == RUNNING and w.sock is None:
                w.state = DONE

    def _await(self, w: _Worker, deadline: float) -> None:
        limit = min(deadline, time.monotonic() + self.bound)
        k = len(self.trace.grants) - 1
        while w.state == RUNNING:
            left = limit - time.monotonic()
            if left <= 0:
                w.state = BLOCKED
                self.trace.blocked.append(k)
                if self.replay is not None and k not in self.replay_blocked:
                    self.trace.divergences.append(f"step {k}: worker {w.slot} blocked")
                return
            self._pump(left)
        if self.replay is not None and k in self.replay_blocked:
            self.trace.divergences.append(f"step {k}: worker {w.slot} was blocked, not now")

    def _choose(self, ready: list[_Worker]) -> _Worker | None:
        """The worker to grant, or None to wait for news first."""
        if self.replay is not None and self.rk < len(self.replay):
            return self._follow()
        eligible = [w.slot for w in ready if not w.lockwait]
        if not eligible:
            if any(w.state == BLOCKED for w in self.workers.values()):
                self._pump(self.bound)  # the lock holder is blocked: give it time
                return None
            eligible = [w.slot for w in ready]
        strat = self.fallback if self.replay is not None else self.strategy
        return self.workers[strat.choose(eligible, len(self.trace.grants), self.view)]

    def _follow(self) -> _Worker | None:
        assert self.replay is not None
        want = self.replay[self.rk]
        w = self.workers.get(want)
        if w is not None and w.state == READY:
            self.rk += 1
            self.wait_since = 0.0
            return w
        now = time.monotonic()
        self.wait_since = self.wait_since or now
        if w is None or w.state == DONE or now - self.wait_since > self.bound:
            what = "done" if w is None or w.state == DONE else "not at a point"
            self.trace.divergences.append(f"trace step {self.rk}: worker {want} is {what}")
            self.rk += 1
            self.wait_since = 0.0
            return None
        self._pump(min(self.bound, 0.05))
        return None

    def drive(self, procs: Sequence[Handle], deadline: float, pin: Sequence[int] = (),
              nemesis: SteppedNemesis | None = None,
              check: Callable[[], None] = lambda: None) -> Trace:
        """Run the grant loop until every worker is done or ``deadline`` (monotonic s),
        applying ``nemesis``'s faults at their decisions and calling ``check`` (which may
        raise to stop the run) on every turn. The coordinator and the processes ``pin`` (a
        managed server) share the workers' CPU meanwhile, if the spec says so."""
        self.nemesis = nemesis
        try:
            with _pinned([0, *pin], self.cpu):
                return self._drive(procs, deadline, check)
        finally:
            for pid, cpus in self.pinned.items():
                with suppress(OSError):
                    os.sched_setaffinity(pid, cpus)

    def _drive(self, procs: Sequence[Handle], deadline: float,
               check: Callable[[], None]) -> Trace:
        t0 = time.monotonic()
        self._start(procs, min(deadline, t0 + _START_S))
        running: _Worker | None = None
        while True:
            check()
            if time.monotonic() >= deadline:
                self.trace.deadline_hit = True
                break
            if running is not None:
                self._await(running, deadline)
                running = None
            else:
                self._pump(0)
            if self.nemesis is not None and self.fault_k < len(self.trace.grants):
                self.fault_k = len(self.trace.grants)
                self.nemesis.apply(self.fault_k, self)
            ready = self._ready()
            if not ready:
                if all(w.state == DONE for w in self.workers.values()):
                    break
                self._pump(min(0.5, max(0.0, deadline - time.monotonic())))
                continue
            w = self._choose(sorted(ready, key=lambda x: x.slot))
            if w is not None:
                self._grant(w)
                running = w
        self.trace.seconds = time.monotonic() - t0
        return self.trace

    def _ready(self) -> list[_Worker]:
        """The workers at a point, minus paused ones (unless only those could go on)."""
        ready = [w for w in self.workers.values() if w.state == READY]
        nem = self.nemesis
        if nem is None or not ready:
            return ready
        free = [w for w in ready if not nem.held(w.slot)]
        if free or any(w.state in (RUNNING, BLOCKED) for w in self.workers.values()):
            return free
        nem.release_holds()
        return ready

    # --- what the stepped nemesis asks of the grant loop (harness.runner.nemesis.Stepping) ----

    def at(self, slot: int) -> dict[str, Any] | None:
        w = self.workers.get(slot)
        if w is None or w.state == DONE:
            return None
        return {"op": w.op, "point": w.label if w.state == READY else "",
                "blocked": w.state == BLOCKED}

    def replaced(self, slot: int, proc: Handle | None) -> None:
        w = self.workers[slot]
        if w.fd in self.socks:  # the dead process's end: drop it, the slot lives on
            self.poller.unregister(w.fd)
            self.socks.pop(w.fd).close()
            self.bufs.pop(w.fd, None)
            self.by_fd.pop(w.fd, None)
        w.sock, w.fd, w.busy, w.granted = None, -1, False, -2
        self.unlock()  # its locks died with it
        if proc is None:
            w.state = DONE
            return
        w.state = RUNNING
        end = time.monotonic() + _START_S
        while w.state == RUNNING and proc.exitcode is None and time.monotonic() < end:
            self._pump(0.05)
        if w.state == RUNNING:
            w.state = DONE
            self.trace.divergences.append(
                f"step {len(self.trace.grants)}: the replacement of worker {slot} never "
                "reached its start point")

    def unlock(self) -> None:
        for w in self.workers.values():
            w.lockwait = False

    def pin(self, pids: Sequence[int]) -> None:
        if self.cpu < 0:
            return
        for pid in pids:
            with suppress(OSError):
                self.pinned.setdefault(pid, os.sched_getaffinity(pid))
                os.sched_setaffinity(pid, {self.cpu})

    def close(self) -> None:
        for fd in list(self.socks):
            self._drop(fd)
        self.listener.close()
        if self.temporary:
            shutil.rmtree(self.dir, ignore_errors=True)
        else:  # the run directory's .control/: only what the controller made in it
            with suppress(OSError):
                os.unlink(self.address)
            with suppress(OSError):
                os.rmdir(self.dir)

    def summary(self) -> dict[str, Any]:
        """The trace's summary, with the command windows its grants opened
        (:func:`harness.runner.control.windows.command_windows`)."""
        return self.trace.summary() | {"windows": command_windows(self.trace, self.ops)}

    def write(self, run_dir: Path) -> None:
        if self.nemesis is not None:
            self.trace.faults = self.nemesis.record()
        self.trace.write(run_dir, self.summary())
