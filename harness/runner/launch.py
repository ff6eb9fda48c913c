"""Starting worker processes, behind one small interface: a :class:`Launcher` starts a
worker from its spec, says where its history log goes and holds the run's start barrier;
the :class:`Handle` it returns signals the process, waits for it, tells how long it took
to open its store and how it ended.

The start barrier: every worker opens its store, says it is ready (:meth:`Handle.opened`
becomes its opening time) and waits; :meth:`Launcher.go` starts the run's clock and lets
them all run to its deadline. A worker started after the go (a killed slot's replacement,
the final reader) runs as soon as it has opened.

Everything the coordinator, the final reader, the nemesis's replacements (its ``respawn``
callback) and controlled mode do to a worker goes through these two, so that another
launcher can later run workers on other hosts against one store, as Jepsen's control node
drives its nodes. :class:`LocalLauncher` is today's: forked (or spawned) processes on this
machine, logs under the run directory.

Example::

    launcher = LocalLauncher(run_dir, multiprocess.get_context("fork"))
    h = launcher.start(replace(spec, log_path=launcher.log_path(0), deadline_ns=0))
    launcher.wait_open([h], timeout=60.0)          # it opened its store (or ended)
    launcher.go(time.monotonic_ns() + 10**9)       # the run's clock: 1 s from now
    if not launcher.wait_any([h], timeout=5.0):
        h.kill()
    h.wait()
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from contextlib import suppress
from pathlib import Path
from signal import SIGKILL
from typing import Any, Protocol

from multiprocess.connection import wait

from harness.runner.stop import holding_stop_signals
from harness.runner.worker import WorkerSpec, run_worker

__all__ = ["Gate", "Handle", "Launcher", "LocalHandle", "LocalLauncher", "stop_all"]


class Handle(Protocol):
    """One started worker process."""

    @property
    def pid(self) -> int:
        """Its process id (on its host)."""
        ...

    @property
    def log_path(self) -> str:
        """Where it writes its history log (its spec's ``log_path``)."""
        ...

    @property
    def slot(self) -> int:
        """The worker slot it runs (-1: a quiescent reader)."""
        ...

    @property
    def started_ns(self) -> int:
        """When it was started (monotonic ns, before the process existed): every event it
        logs is stamped later, which is what lets the run's history be merged while it
        is written (:mod:`harness.runner.follow`)."""
        ...

    @property
    def sentinel(self) -> int:
        """A descriptor that becomes readable once the process has ended."""
        ...

    @property
    def exitcode(self) -> int | None:
        """None while it runs; then its exit status, ``-N`` if signal N ended it."""
        ...

    @property
    def alive(self) -> bool:
        """Whether it is still running."""
        ...

    def signal(self, sig: int) -> None:
        """Send it ``sig``; nothing if it has already ended (its pid is never reused)."""
        ...

    def kill(self) -> None:
        """SIGKILL it (a paused process too); nothing if it has already ended."""
        ...

    def wait(self, timeout: float | None = None) -> int | None:
        """Wait until it ends (at most ``timeout`` s) and reap it; its :attr:`exitcode`."""
        ...

    @property
    def opened(self) -> float | None:
        """Seconds it took to open its store, once it said so (:meth:`Launcher.wait_open`
        listens); None before, or if it never did."""
        ...


class Launcher(Protocol):
    """Starts the worker processes of one run."""

    def log_path(self, process: int | str) -> str:
        """Where the worker numbered ``process`` writes its history log."""
        ...

    def start(self, spec: WorkerSpec) -> Handle:
        """Start a worker running ``spec`` (:func:`harness.runner.worker.run_worker`). A stop
        signal that lands meanwhile is only remembered
        (:func:`harness.runner.stop.holding_stop_signals`): the caller lists the handle,
        then its next :func:`harness.runner.stop.check_stop` raises."""
        ...

    def wait_any(self, handles: Sequence[Handle], timeout: float) -> list[Handle]:
        """Wait at most ``timeout`` s until one of ``handles`` ends; those that have."""
        ...

    def wait_open(self, handles: Sequence[Handle], timeout: float) -> None:
        """Wait at most ``timeout`` s until each of ``handles`` has opened its store
        (:attr:`Handle.opened`) or ended."""
        ...

    def go(self, deadline_ns: int) -> None:
        """Start the run's clock: every worker waiting at the barrier, and every one
        started from now on, runs until ``deadline_ns`` (monotonic) once open."""
        ...


def stop_all(handles: Sequence[Handle]) -> None:
    """SIGKILL every one still running, then reap them all."""
    for h in handles:
        if h.alive:
            h.kill()
    for h in handles:
        h.wait()


class Gate:
    """The worker's end of the start barrier (picklable while a process starts): a pipe
    on which it says it is ready, and the go with the run's deadline."""

    __slots__ = ("deadline", "go", "pipe")

    def __init__(self, pipe: Any, go: Any, deadline: Any) -> None:
        self.pipe = pipe
        self.go = go
        self.deadline = deadline

    def __getstate__(self) -> tuple[Any, Any, Any]:
        return self.pipe, self.go, self.deadline

    def __setstate__(self, state: tuple[Any, Any, Any]) -> None:
        self.pipe, self.go, self.deadline = state

    def ready(self, opened: float) -> int:
        """In the worker: say the store opened after ``opened`` s, wait for the go, and
        return the run's deadline (monotonic ns). Its parent gone (the pipe broken), the
        worker waits on: the parent-death signal ends it."""
        with suppress(OSError):
            self.pipe.send(opened)
            self.pipe.close()
        deadline = int(self.deadline.value)  # a plain shared integer, set before the go
        if deadline:
            # The go came before this process started (a killed slot's replacement, a
            # reader): no wait. Event.wait takes a lock every process of the run shares,
            # and a process SIGKILLed inside it (a kill fault landing on a replacement that
            # is still starting) left it taken for good: every later process hung there.
            return deadline
        self.go.wait()
        return int(self.deadline.value)


class LocalHandle:
    """A worker process on this machine (a ``multiprocess.Process``) and the coordinator's
    end of its ready pipe."""

    __slots__ = ("_code", "_log_path", "_opened", "_pid", "killed", "number", "process", "ready",
                 "slot", "started_ns")

    def __init__(self, process: Any, log_path: str, ready: Any = None, slot: int = 0,
                 number: int | str = 0, started_ns: int = 0) -> None:
        self.process = process
        self.started_ns = started_ns
        self._log_path = log_path
        self.ready = ready  # the pipe its "opened" comes on; None once read or broken
        self._opened: float | None = None
        self.slot = slot  # the worker slot it runs (-1: the final read)
        self.number = number  # its process number in the history
        self.killed = False  # the harness killed it (a fault, the deadline, a stop)
        pid = getattr(process, "pid", None)  # None: not started (a stand-in in tests)
        self._pid = int(pid) if pid is not None else 0
        self._code: int | None = None  # its exit code once reaped (its process is released)

    @property
    def opened(self) -> float | None:
        return self._opened

    def hear(self) -> None:
        """Read its "opened" message (the pipe is readable); EOF: it ended before."""
        with suppress(EOFError, OSError, TypeError, ValueError):
            self._opened = float(self.ready.recv())
        self.ready.close()
        self.ready = None

    @property
    def pid(self) -> int:
        return self._pid or int(self.process.pid)

    @property
    def log_path(self) -> str:
        return self._log_path

    @property
    def sentinel(self) -> int:
        return int(self.process.sentinel)

    @property
    def exitcode(self) -> int | None:
        if self._code is not None:
            return self._code
        code: int | None = self.process.exitcode
        return code

    @property
    def alive(self) -> bool:
        return self._code is None and bool(self.process.is_alive())

    def signal(self, sig: int) -> None:
        if self._code is None and self.process.exitcode is None:  # not reaped: its own pid
            with suppress(ProcessLookupError):
                os.kill(self.process.pid, sig)

    def kill(self) -> None:
        if self._code is None and self.process.exitcode is None:
            self.killed = True
        self.signal(SIGKILL)

    def wait(self, timeout: float | None = None) -> int | None:
        if self._code is not None:
            return self._code
        self.process.join(timeout)
        code = self.exitcode
        if code is not None:  # reaped: keep what the run's account needs, free its pipes
            self._pid = self.pid
            self._code = code
            with suppress(ValueError):
                self.process.close()
            if self.ready is not None:  # never heard (a replacement, killed or not): an fd
                with suppress(OSError):  # a long chaos run would leak one per process
                    self.ready.close()
                self.ready = None
        return code


class LocalLauncher:
    """Workers as processes of this machine, from the multiprocess context ``ctx`` (its
    start method: fork, forkserver or spawn); logs in ``run_dir/history/``. ``ctx`` also
    makes what the workers share with the coordinator (a Board, the nemesis's helpers)."""

    def __init__(self, run_dir: Path, ctx: Any) -> None:
        self.history = Path(run_dir) / "history"
        self.ctx = ctx
        self._go = ctx.Event()
        self._deadline = ctx.Value("q", 0, lock=False)
        self.started: list[LocalHandle] = []  # every process started, for the run's account

    def log_path(self, process: int | str) -> str:
        return str(self.history / f"{process}.jsonl")

    def start(self, spec: WorkerSpec) -> LocalHandle:
        reader, writer = self.ctx.Pipe(duplex=False)
        gate = Gate(writer, self._go, self._deadline)
        started_ns = time.monotonic_ns()
        try:
            with holding_stop_signals():
                p = self.ctx.Process(target=run_worker, args=(spec, gate),
                                     name=f"harness-worker-{spec.process}")
                p.start()
        except BaseException:
            reader.close()
            raise
        finally:
            writer.close()  # the worker holds its own: its end closes when it does
        handle = LocalHandle(p, spec.log_path, reader, spec.slot, spec.process, started_ns)
        self.started.append(handle)
        return handle

    def wait_any(self, handles: Sequence[Handle], timeout: float) -> list[Handle]:
        reaped = [h for h in handles if h.exitcode is not None]  # a fault's kill reaped it
        if reaped:
            return reaped
        by_sentinel = {h.sentinel: h for h in handles}
        return [by_sentinel[s] for s in wait(list(by_sentinel), timeout=timeout)]

    def wait_open(self, handles: Sequence[Handle], timeout: float) -> None:
        end = time.monotonic() + timeout
        pending = [h for h in handles if isinstance(h, LocalHandle) and h.ready is not None]
        while pending:
            # its pipe says it opened; its end (EOF) that it never will
            by_pipe = {h.ready: h for h in pending}
            left = end - time.monotonic()
            if left <= 0:
                return
            for conn in wait(list(by_pipe), timeout=left):
                h = by_pipe[conn]
                h.hear()
                pending.remove(h)

    def go(self, deadline_ns: int) -> None:
        self._deadline.value = deadline_ns
        self._go.set()
