"""The ``kill`` fault: SIGKILL a worker slot's process, whatever it is doing.

Free mode: its op in flight stays an invoke without completion (unknown). A new process,
with a new process number, continues the slot after that op: every worker marks on the
shared board the index of the op it is about to run.

Controlled mode: the process is killed where it stands, before the storage command of its
point, so the op in flight ends unknown. The replacement continues the slot after that op;
the grant loop waits for it to stand at its start point before it decides again, so the
replacement's start is no race. A paused slot that is killed is paused no more.

Example: ``[[faults]] kind = "kill", every = 0.5`` (``worker`` drawn from the seed), or
``[control] faults = [{kind = "kill", worker = 1, at_step = 17}]``.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from harness.faults.base import Fault, Key, Stepped, Timed

__all__ = ["KIND", "Kill"]


@dataclass(frozen=True, slots=True)
class Kill:
    name: str = "kill"
    backends: tuple[str, ...] = ("sqlite", "redis", "postgres")
    destructive: bool = False
    aimed: bool = True
    keys: tuple[Key, ...] = ()
    for_steps: int | None = None

    def at_time(self, fault: Fault, nemesis: Timed) -> None:
        _kill(fault, nemesis)

    def at_step(self, fault: Fault, nemesis: Stepped) -> None:
        slot = fault["worker"]
        if nemesis.aim(fault) is None:
            return
        new = _kill(fault, nemesis)
        if slot in nemesis.holds:  # a paused process that is killed is paused no more
            nemesis.holds[slot](True)
        nemesis.replaced(slot, new)


def _kill(fault: Fault, nemesis: Timed) -> Any | None:
    """Kill the slot's process and start its replacement; return the replacement (None:
    the slot had finished, or has no op left)."""
    found = nemesis.aim(fault)
    if found is None:
        return None
    number, p = found
    t = time.monotonic_ns()
    p.kill()  # SIGKILL ends a paused process too
    p.wait()
    new = nemesis.replace(fault["worker"])
    nemesis.log(fault, at=t, slot=fault["worker"], process=number, pid=p.pid,
                replaced_by=new[0] if new else None,
                replacement_pid=new[1].pid if new else None)
    return new[1] if new else None


KIND = Kill()
