"""The ``pause`` fault: a worker slot stops for a while, then goes on.

Free mode: SIGSTOP the worker (``psutil.suspend``), SIGCONT it ``duration`` s later
(default 1.0): longer than lock leases and cache TTLs, as a GC pause or a swapped-out VM
would be. A pause of a process already paused is skipped.

Controlled mode: the slot is granted nothing for ``for_steps`` decisions (default 20) while
the others go on. If nothing else can go on, the pause ends early (``cut``).

Example: ``[[faults]] kind = "pause", at = 1.5, worker = 2, duration = 0.6``.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass

from harness.faults.base import Fault, Key, Stepped, Timed, duration

__all__ = ["KIND", "Pause"]


@dataclass(frozen=True, slots=True)
class Pause:
    name: str = "pause"
    backends: tuple[str, ...] = ("sqlite", "redis", "postgres")
    destructive: bool = False
    aimed: bool = True
    keys: tuple[Key, ...] = (duration(1.0),)
    for_steps: int | None = 20

    def at_time(self, fault: Fault, nemesis: Timed) -> None:
        import psutil

        paused: set[int] = nemesis.memo("pause", set)  # pids
        found = nemesis.aim(fault)
        slot = fault["worker"]
        if found is None or found[1].pid in paused:
            if found is not None:
                nemesis.log(fault, skipped="already paused", slot=slot)
            return
        number, p = found
        try:
            proc = psutil.Process(p.pid)
            proc.suspend()
        except psutil.NoSuchProcess:  # it ended between the look and the stop
            nemesis.log(fault, skipped="the worker slot has finished", slot=slot)
            return
        paused.add(p.pid)
        where = {"slot": slot, "process": number, "pid": p.pid}
        nemesis.log(fault, phase="start", duration=fault["duration"], **where)

        def resume(cut: bool) -> None:
            with contextlib.suppress(psutil.NoSuchProcess):  # killed while paused
                proc.resume()
            paused.discard(p.pid)
            nemesis.log(fault, phase="end", cut=cut, **where)

        nemesis.later(fault["duration"], resume)

    def at_step(self, fault: Fault, nemesis: Stepped) -> None:
        slot = fault["worker"]
        found = nemesis.aim(fault)
        if found is None:
            return
        if slot in nemesis.holds:
            nemesis.log(fault, skipped="already paused", slot=slot)
            return
        where = {"slot": slot, "process": found[0]}
        ended = False

        def resume(cut: bool) -> None:
            nonlocal ended
            if not ended:
                ended = True
                nemesis.holds.pop(slot, None)
                nemesis.log(fault, phase="end", cut=cut, **where)

        nemesis.holds[slot] = resume
        nemesis.log(fault, phase="start", for_steps=fault["for_steps"], **where)
        nemesis.later(fault["for_steps"], resume)


KIND = Pause()
