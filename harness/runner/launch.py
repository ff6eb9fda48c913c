"""Starting worker processes, behind one small interface: a :class:`Launcher` starts a
worker from its spec and says where its history log goes; the :class:`Handle` it returns
signals the process, waits for it and tells how it ended.

Everything the coordinator, the final reader, the nemesis's replacements (its ``respawn``
callback) and controlled mode do to a worker goes through these two, so that another
launcher can later run workers on other hosts against one store, as Jepsen's control node
drives its nodes. :class:`LocalLauncher` is today's: forked (or spawned) processes on this
machine, logs under the run directory.

Example::

    launcher = LocalLauncher(run_dir, multiprocess.get_context("fork"))
    h = launcher.start(replace(spec, log_path=launcher.log_path(0)))
    if not launcher.wait_any([h], timeout=5.0):
        h.kill()
    h.wait()
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from contextlib import suppress
from pathlib import Path
from signal import SIGKILL
from typing import Any, Protocol

from multiprocess.connection import wait

from harness.runner.stop import holding_stop_signals
from harness.runner.worker import WorkerSpec, run_worker

__all__ = ["Handle", "Launcher", "LocalHandle", "LocalLauncher", "stop_all"]


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


def stop_all(handles: Sequence[Handle]) -> None:
    """SIGKILL every one still running, then reap them all."""
    for h in handles:
        if h.alive:
            h.kill()
    for h in handles:
        h.wait()


class LocalHandle:
    """A worker process on this machine (a ``multiprocess.Process``)."""

    __slots__ = ("_log_path", "process")

    def __init__(self, process: Any, log_path: str) -> None:
        self.process = process
        self._log_path = log_path

    @property
    def pid(self) -> int:
        return int(self.process.pid)

    @property
    def log_path(self) -> str:
        return self._log_path

    @property
    def sentinel(self) -> int:
        return int(self.process.sentinel)

    @property
    def exitcode(self) -> int | None:
        code: int | None = self.process.exitcode
        return code

    @property
    def alive(self) -> bool:
        return bool(self.process.is_alive())

    def signal(self, sig: int) -> None:
        if self.process.exitcode is None:  # not reaped yet, so the pid is still its own
            with suppress(ProcessLookupError):
                os.kill(self.process.pid, sig)

    def kill(self) -> None:
        self.signal(SIGKILL)

    def wait(self, timeout: float | None = None) -> int | None:
        self.process.join(timeout)
        return self.exitcode


class LocalLauncher:
    """Workers as processes of this machine, from the multiprocess context ``ctx`` (its
    start method: fork, forkserver or spawn); logs in ``run_dir/history/``. ``ctx`` also
    makes what the workers share with the coordinator (a Board, the nemesis's helpers)."""

    def __init__(self, run_dir: Path, ctx: Any) -> None:
        self.history = Path(run_dir) / "history"
        self.ctx = ctx

    def log_path(self, process: int | str) -> str:
        return str(self.history / f"{process}.jsonl")

    def start(self, spec: WorkerSpec) -> LocalHandle:
        with holding_stop_signals():
            p = self.ctx.Process(target=run_worker, args=(spec,),
                                 name=f"harness-worker-{spec.process}")
            p.start()
        return LocalHandle(p, spec.log_path)

    def wait_any(self, handles: Sequence[Handle], timeout: float) -> list[Handle]:
        by_sentinel = {h.sentinel: h for h in handles}
        return [by_sentinel[s] for s in wait(list(by_sentinel), timeout=timeout)]
