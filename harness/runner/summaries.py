"""Everything a run's report says besides the check, folded over the merged history one
event at a time: op counts, where the faults landed, the workers' opening, interleaving
coverage, how each worker ended, and the faults that broke the target.

Contract: :class:`RunSummaries` is fed the merged history in order (:meth:`feed`), while
the run goes on or after it, and each method then returns what the batch function of the
same name returns on the whole history (:func:`harness.runner.account.account`,
:func:`harness.runner.opening.opening_summary`, :func:`harness.coverage.interleavings`,
:func:`harness.runner.nemesis.fault_summary`, :meth:`Supervisor.report`). Memory does not
grow with the number of events: each section is a fold that keeps counters, the open op of
each process and a few entries per process, per fault and per session.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from harness.coverage import Sweep
from harness.history import OP_FS, Event, is_reader
from harness.runner.account import Ended, WorkerLog, account, broken_by
from harness.runner.nemesis.landed import Landing
from harness.runner.opening import Opening
from harness.runner.supervise import ProcessNames, Supervisor

__all__ = ["RunSummaries"]

class RunSummaries:
    """The non-checker sections of a run's report, fed one event at a time."""

    def __init__(self, faults: Sequence[dict[str, Any]], capabilities: frozenset[str]) -> None:
        self._faults = tuple(faults)
        self._capabilities = capabilities
        self.events = 0  # events fed so far
        self._invokes = 0
        self._reader_invokes = 0
        self._completions: dict[str, int] = {}
        self._open_failed: str | None = None
        self._opened = False
        self._broken: list[str] = []
        self._log = WorkerLog()
        self._opening = Opening()
        self._landing = Landing(faults)
        self._sweep = Sweep()
        self._names = ProcessNames()

    def feed(self, e: Event) -> None:
        """The next event of the merged history (``e.index`` = its position)."""
        self.events += 1
        if e.type == "invoke":
            self._invokes += 1
            self._reader_invokes += is_reader(e.process)
        elif e.f in OP_FS and e.process != "nemesis":  # completions of ops only
            self._completions[e.type] = self._completions.get(e.type, 0) + 1
        if e.f == "open":
            if e.type != "ok" and self._open_failed is None:
                self._open_failed = e.error or ""
            elif e.type == "ok" and not is_reader(e.process):
                self._opened = True
        if (problem := broken_by(e)) is not None:
            self._broken.append(problem)
        self._log.feed(e)
        self._opening.feed(e)
        self._landing.feed(e)
        self._sweep.feed(e)
        self._names.feed(e)

    def unopenable(self) -> str | None:
        """The first failed ``open`` event's error when no worker (a harness reader aside)
        opened its store; None when one did, or no open failed."""
        return None if self._opened else self._open_failed

    def stats(self, elapsed: float) -> dict[str, Any]:
        """The run's op counts (``events``, ``ops``, ``worker_ops``, ``final_ops``,
        ``completions`` by type, ``seconds``). The quiescent readers' ops are the
        harness's, not the workload's: counted apart (``final_ops``)."""
        return {"events": self.events, "ops": self._invokes,
                "worker_ops": self._invokes - self._reader_invokes,
                "final_ops": self._reader_invokes, "completions": dict(self._completions),
                "seconds": round(elapsed, 3)}

    def faults(self) -> dict[str, Any] | None:
        """Where each fault landed (None for a plan without faults)."""
        return self._landing.summary() if self._faults else None

    def resources(self, supervisor: Supervisor) -> dict[str, Any]:
        return supervisor.report(self._names)

    def opening(self, workers: int, clock: tuple[int, int] | None, timeout: float,
                failed: Sequence[dict[str, Any]]) -> dict[str, Any]:
        return self._opening.summary(workers, clock, timeout, failed)

    def coverage(self) -> dict[str, Any]:
        return self._sweep.result(self._capabilities).to_dict()

    def account(self, handles: Sequence[Ended], planned: Sequence[int | None], min_ops: int,
                interrupted: bool,
                finished: Sequence[int]) -> tuple[list[dict[str, Any]], list[str]]:
        return account(handles, self._log, planned, min_ops, interrupted, finished)

    def fault_problems(self) -> list[str]:
        return list(self._broken)
