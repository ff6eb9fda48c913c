"""The free-mode nemesis: the checks that refuse faults that do not apply, the live process
of each worker slot, and the :class:`Nemesis` that applies a schedule of faults at times,
through each kind's ``at_time`` (:mod:`harness.faults`)."""

from __future__ import annotations

import heapq
import itertools
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any, TypeVar

from harness.backends.base import Target
from harness.errors import InputError
from harness.faults import fault_kind
from harness.faults.base import Fault
from harness.runner.history_writer import HistoryWriter
from harness.runner.nemesis.board import Board
from harness.runner.nemesis.redis_link import ServerLink

__all__ = ["Nemesis", "Slots", "check_faults"]

T = TypeVar("T")


def check_faults(faults: Iterable[dict[str, Any]], backend: str, *, external: bool,
                 allow_destructive: bool = False) -> None:
    """Refuse (InputError, exit 2) a fault that does not apply to ``backend``, or a
    destructive one against an ``external`` server without ``allow_destructive``."""
    for name in sorted({f["kind"] for f in faults}):
        kind = fault_kind(name)
        if backend not in kind.backends:
            raise InputError(f"fault {name!r} applies to {' and '.join(kind.backends)} "
                             f"targets only, and this run's target is {backend}")
        if kind.destructive and external and not allow_destructive:
            raise InputError(f"refusing the {name!r} fault against an external Redis: it "
                             "destroys the server's state. Pass --allow-destructive-faults "
                             "if that server is yours to break")


class Slots:
    """The live process of each worker slot. ``lengths[slot]`` is how many ops the slot
    has (None: unlimited, it runs until the deadline). ``respawn(slot, process, start)``
    starts a process for a slot; the new ones are added to ``procs`` (which the coordinator
    kills in its ``finally``) before anything else can fail."""

    def __init__(self, procs: list[Any], lengths: Sequence[int | None], board: Board,
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
        length = self.lengths[slot]
        if length is not None and start >= length:
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
    """Applies a free-mode fault schedule, each fault through its kind's ``at_time``, and
    is what a kind acts through (:class:`harness.faults.Timed`). Use as a context manager
    around the wait loop: entering starts the clock (fault times count from there), leaving
    ends every fault still on (resumes, releases, restores) and logs its end."""

    def __init__(self, faults: Sequence[Fault], target: Target, run_dir: Path,
                 slots: Slots, ctx: Any, allow_destructive: bool = False) -> None:
        destructive = sorted({f["kind"] for f in faults if fault_kind(f["kind"]).destructive})
        # a managed server that can crash and come back (redis-server, PostgreSQL; not the
        # fakeredis fallback), or a user's server the user allowed it on
        if destructive and not (
                (target.managed and callable(getattr(target, "restart", None)))
                or (not target.managed and allow_destructive)):
            raise InputError(f"the {destructive[0]} fault needs a server the harness manages "
                             f"(a real redis-server or PostgreSQL); {target.note}")
        self.pending = sorted(faults, key=self._due)[::-1]
        self.target = target
        self.slots = slots
        self.mp = ctx
        self.history = run_dir / "history"
        self.writer: HistoryWriter | None = None
        self.t0 = 0.0
        self.ends: list[tuple[float, int, Callable[[bool], None]]] = []
        self.seq = itertools.count()
        self.memos: dict[str, Any] = {}
        self.closers: list[Callable[[], None]] = []
        self.helpers: list[tuple[Any, Callable[[], None]]] = []
        self.helper_logs: dict[int, Path] = {}  # id(proc) -> the log a live helper writes
        self.finished_logs: set[Path] = set()  # the logs of helpers reaped since
        self.spawned: list[Any] = []  # replacement processes since the last tick
        self.link = ServerLink(target.url) if target.kind == "redis" else None

    @staticmethod
    def _due(fault: Fault) -> tuple[float, int]:
        """The order of the schedule: when, then id."""
        return fault["at"], fault["id"]

    def __enter__(self) -> Nemesis:
        self.writer = HistoryWriter(self.history / "nemesis.jsonl", "nemesis")
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
        now = time.monotonic()
        while self.ends and self.ends[0][0] <= now:
            heapq.heappop(self.ends)[2](False)
        while self.pending and self.t0 + self.pending[-1]["at"] <= now:
            fault = self.pending.pop()
            fault_kind(fault["kind"]).at_time(fault, self)
        for h in [h for h in self.helpers if not h[0].is_alive()]:
            h[0].join()
            self.helpers.remove(h)
            log = self.helper_logs.pop(id(h[0]), None)
            if log is not None:
                self.finished_logs.add(log)
        new, self.spawned = self.spawned, []
        return new

    def close(self) -> None:
        """End what is still on, now; idempotent."""
        while self.ends:
            heapq.heappop(self.ends)[2](True)
        closers, self.closers = self.closers, []
        for fn in closers:
            fn()
        for p, cut in self.helpers:
            if p.is_alive():
                p.kill()
            p.join()
            cut()
        self.helpers.clear()
        if self.link is not None:
            self.link.close()
        if self.writer is not None:
            self.writer.close()
            self.writer = None

    # -- what a fault kind acts through (harness.faults.Timed) ---------------------------

    @property
    def board(self) -> Board:
        return self.slots.board

    def log(self, fault: Fault, **value: Any) -> None:
        """A nemesis event; ``at`` (monotonic ns) when it happened before being logged."""
        at = value.pop("at", None)
        if self.writer is not None:
            self.writer.log("info", fault["kind"], None, {"id": fault["id"], **value},
                            time_ns=at)

    def later(self, span: float, end: Callable[[bool], None]) -> None:
        heapq.heappush(self.ends, (time.monotonic() + span, next(self.seq), end))

    def aim(self, fault: Fault) -> tuple[int, Any] | None:
        found = self.slots.live(fault["worker"])
        if found is None:
            self.log(fault, skipped="the worker slot has finished", slot=fault["worker"])
        return found

    def replace(self, slot: int) -> tuple[int, Any] | None:
        new = self.slots.replace(slot)
        if new is not None:
            self.spawned.append(new[1])
        return new

    def memo(self, key: str, make: Callable[[], T]) -> T:
        if key not in self.memos:
            self.memos[key] = make()
        return self.memos[key]  # type: ignore[no-any-return]

    def at_close(self, fn: Callable[[], None]) -> None:
        self.closers.append(fn)

    def helper(self, fault: Fault, proc: Any, cut: Callable[[], None],
               log: Path | None = None) -> None:
        self.helpers.append((proc, cut))
        if log is not None:
            self.helper_logs[id(proc)] = log
