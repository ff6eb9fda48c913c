"""The workers' side of the faults: a :class:`Board` in shared memory, on which each worker
marks the op it is about to run (so a killed slot's replacement continues after it) and
reads the disk-full switch, which it hands to every backend's own switch
(:meth:`harness.backends.Backend.disk_full`; SQLite's limits its connections' pages)."""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator
from typing import Any

from harness.backends import DiskFull, backends

__all__ = ["FLOOR_WAIT_S", "LEAD", "Board"]


#: How many session generations a worker may run ahead of the slowest live one.
LEAD = 16
#: A worker waits this long at most for a floor that does not move (a slot stuck in its
#: store), then goes on without it until the floor moves again: a run never stalls on it.
FLOOR_WAIT_S = 5.0


class Board:
    """Shared memory between the coordinator and its workers: ``progress[slot]``, the op
    index each slot's process is about to run; ``finished[slot]``, the process number + 1
    of the slot's process that ran to its end (its ops or its deadline: a process that
    ended any other way never sets it); ``disk_full``, non-zero while a disk-full fault
    is on; and ``floor``, the session generation of the slowest live slot (-1: no floor),
    which the coordinator keeps up to date.

    A worker about to start an op of a generation more than :data:`LEAD` past the floor
    waits for the floor to rise (a slot paused, stuck on a lock or reopening after a kill
    holds the others back only once they are that far ahead). Without it, workers that
    drift apart over a long run keep every session between the slowest and the fastest
    open, and the streaming check holds them all: the run's memory would grow with its
    length. Picklable while processes are being started."""

    def __init__(self, ctx: Any, slots: int, lifetime: int = 0) -> None:
        self.progress = ctx.Array("q", [-1] * slots, lock=False)
        self.finished = ctx.Array("q", [0] * slots, lock=False)
        self.disk_full = ctx.Value("q", 0, lock=False)
        self.floor = ctx.Value("q", -1, lock=False)
        self.lifetime = lifetime  # ops per generation (0: one generation, no floor)
        self.ignored_floor = -2  # in a worker: a floor it gave up waiting on
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
        lifetime = self.lifetime
        for i, op in enumerate(ops, start):
            if lifetime:
                self._keep_up(i // lifetime)
            self.progress[slot] = i
            switch = self.disk_full.value
            if switch != on:  # the backends' switches are only told of a change
                on = switch
                for s in switches:
                    s.apply(switch)
            yield op

    def _keep_up(self, generation: int) -> None:
        """Wait while ``generation`` is more than :data:`LEAD` past the floor, at most
        :data:`FLOOR_WAIT_S` for one floor. The floor is another process's to move:
        polled (5 ms), as nothing here can wait on it."""
        end = time.monotonic() + FLOOR_WAIT_S
        while 0 <= (floor := self.floor.value) < generation - LEAD:
            if floor == self.ignored_floor:
                return
            if time.monotonic() > end:
                self.ignored_floor = floor  # stuck: go on until it moves
                return
            time.sleep(0.005)
