"""The workers' side of the faults: a :class:`Board` in shared memory, on which each worker
marks the op it is about to run (so a killed slot's replacement continues after it) and
reads the disk-full switch, which it hands to every backend's own switch
(:meth:`harness.backends.Backend.disk_full`; SQLite's limits its connections' pages)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from harness.backends import DiskFull, backends

__all__ = ["Board"]


class Board:
    """Shared memory between the coordinator and its workers: ``progress[slot]``, the op
    index each slot's process is about to run; ``finished[slot]``, the process number + 1
    of the slot's process that ran to its end (its ops or its deadline: a process that
    ended any other way never sets it); and ``disk_full``, non-zero while a disk-full fault
    is on. Picklable while processes are being started."""

    def __init__(self, ctx: Any, slots: int) -> None:
        self.progress = ctx.Array("q", [-1] * slots, lock=False)
        self.finished = ctx.Array("q", [0] * slots, lock=False)
        self.disk_full = ctx.Value("q", 0, lock=False)
        self.switches: list[DiskFull] | None = None  # per process, made by prepare()

    def prepare(self) -> None:
        """In a worker, before its store opens: make the backends' disk-full switches, so
        that they see the store's connections being made (SQLite's tracks them) rather
        than search the process for them when a fault turns the switch on."""
        if self.switches is None:
            self.switches = [s for s in (b.disk_full() for b in backends()) if s is not None]

    def track(self, ops: Iterable[Any], slot: int, start: int) -> Iterator[Any]:
        """In a worker: yield its ops (the first being op ``start``), marking each on the
        board first and applying the disk-full switch between ops."""
        self.prepare()  # a no-op if the worker prepared before opening its store
        switches = self.switches or []
        on = 0
        for i, op in enumerate(ops, start):
            self.progress[slot] = i
            switch = self.disk_full.value
            if switch != on:  # the backends' switches are only told of a change
                on = switch
                for s in switches:
                    s.apply(switch)
            yield op
