"""The controlled-mode nemesis: each fault lands before a scheduling decision and lasts a
number of decisions, so one seed (or one trace) gives the same faults at the same storage
commands.

The grant loop (:class:`harness.runner.control.Controller`) calls :meth:`SteppedNemesis.apply`
before every decision, while every worker stands at a point, is blocked, or is done; each
fault applies through its kind's ``at_step`` (what each kind does there: its module in
:mod:`harness.faults`). Every fault is a nemesis event carrying its decision (``step``)
and, for one aimed at a worker, the ``op`` and ``point`` where it found it.
:meth:`SteppedNemesis.record` is the schedule and where each fault landed, for
``trace.json``.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Sequence
from typing import Any, Protocol

from harness.faults import fault_kind
from harness.faults.base import Fault
from harness.runner.nemesis.timed import Nemesis

__all__ = ["SteppedNemesis", "Stepping"]

_LANDED = ("step", "process", "op", "point", "blocked", "skipped")


class Stepping(Protocol):
    """What the grant loop offers the stepped nemesis."""

    def at(self, slot: int) -> dict[str, Any] | None:
        """Where the slot's worker stands (``op``, ``point``, ``blocked``); None when done."""
        ...

    def replaced(self, slot: int, proc: Any | None) -> None:
        """The slot's process was killed and ``proc`` (None: no op left) continues it:
        forget the dead one's connection, wait until the new one stands at its start."""
        ...

    def unlock(self) -> None:
        """An SQLite lock was released outside any grant: lock waiters may try again."""
        ...

    def pin(self, pids: Sequence[int]) -> None:
        """Run these processes (a restarted server) on the stepping CPU."""
        ...


class SteppedNemesis(Nemesis):
    """Applies a controlled-mode fault schedule (faults with ``at_step``, ``for_steps``),
    each fault through its kind's ``at_step``, and is what a kind acts through
    (:class:`harness.faults.Stepped`). Use as a context manager around the grant loop, as
    the free-mode :class:`Nemesis`: leaving it ends every fault still on."""

    def __init__(self, *args: Any, **kw: Any) -> None:
        super().__init__(*args, **kw)
        self.schedule = sorted(self.pending, key=lambda f: int(f["id"]))
        self.step = -1
        self.view: Stepping | None = None
        self.holds: dict[int, Callable[[bool], None]] = {}  # paused slot -> its end
        self.retry: list[tuple[Fault, str]] = []  # faults to try again, why they may not land
        self.landed: dict[int, dict[str, Any]] = {}

    @staticmethod
    def _due(fault: Fault) -> tuple[float, int]:
        return fault["at_step"], fault["id"]

    def apply(self, step: int, view: Stepping) -> None:
        """Apply every fault (and fault end) due before decision ``step``."""
        self.step, self.view = step, view
        while self.ends and self.ends[0][0] <= step:
            heapq.heappop(self.ends)[2](False)
        retry, self.retry = self.retry, []
        for fault, _ in retry:
            fault_kind(fault["kind"]).at_step(fault, self)
        while self.pending and self.pending[-1]["at_step"] <= step:
            fault = self.pending.pop()
            fault_kind(fault["kind"]).at_step(fault, self)
        self.spawned.clear()  # the grant loop learns of replacements through replaced()

    def held(self, slot: int) -> bool:
        """Whether the slot is paused (not to be granted)."""
        return slot in self.holds

    def release_holds(self) -> None:
        """End every pause now: only paused workers could go on."""
        for end in list(self.holds.values()):
            end(True)

    def record(self) -> list[dict[str, Any]]:
        """The schedule, in id order, each fault with where it landed (``step`` None: the
        run ended before it came up)."""
        return [{**f, "step": None, **self.landed.get(f["id"], {})} for f in self.schedule]

    def close(self) -> None:
        for fault, skipped in self.retry:
            self.log(fault, skipped=skipped)
        self.retry = []
        super().close()

    # -- what a fault kind acts through: what differs from free mode ------------------

    def later(self, span: float, end: Callable[[bool], None]) -> None:
        heapq.heappush(self.ends, (self.step + int(span), next(self.seq), end))

    def log(self, fault: Fault, **value: Any) -> None:
        value = {"step": self.step, **value}
        slot = fault.get("worker")
        if slot is not None and self.view is not None and "skipped" not in value:
            where = self.view.at(slot)
            if where is not None:
                value.update(op=where["op"], point=where["point"])
                if where["blocked"]:
                    value["blocked"] = True
        super().log(fault, **value)
        if value.get("phase") != "end":
            self.landed.setdefault(fault["id"], {k: value[k] for k in _LANDED if k in value})

    def aim(self, fault: Fault) -> tuple[int, Any] | None:
        # The grant loop knows a worker is done before its process has exited: asking the
        # process would make "skipped" a race.
        if self.view is not None and self.view.at(fault["worker"]) is None:
            self.log(fault, skipped="the worker slot has finished", slot=fault["worker"])
            return None
        return super().aim(fault)

    # -- the grant loop's side (harness.faults.Stepped) -----------------------------

    def again(self, fault: Fault, skipped: str) -> None:
        self.retry.append((fault, skipped))

    def replaced(self, slot: int, proc: Any | None) -> None:
        if self.view is not None:
            self.view.replaced(slot, proc)

    def unlock(self) -> None:
        if self.view is not None:
            self.view.unlock()

    def pin(self, pids: list[int]) -> None:
        if self.view is not None:
            self.view.pin(pids)
