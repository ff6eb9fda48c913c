"""How every worker process of a run ended, and what makes a run incomplete: one record
per process (slot, pid, exit code or signal, ops completed, why it ended, time to open)
and the sentences of what fell short (a crash, a store that did not open, a slot below
the scenario's ``min_ops``, a fault that failed to apply). Pure over what the launcher
recorded and what the history says."""

from __future__ import annotations

import signal
from collections import Counter
from collections.abc import Sequence
from typing import Any, Protocol

from harness.history import Event
from harness.stores.base import OPS

__all__ = ["Ended", "WorkerLog", "account", "broken_by", "fault_problems"]


class Ended(Protocol):
    """What the launcher knows of a worker process once it has ended."""

    @property
    def pid(self) -> int: ...
    @property
    def exitcode(self) -> int | None: ...
    @property
    def slot(self) -> int: ...
    @property
    def number(self) -> int | str: ...
    @property
    def killed(self) -> bool: ...


def _exit(code: int | None) -> dict[str, Any]:
    if code is None:
        return {"exit_code": None}
    if code < 0:
        try:
            return {"signal": signal.Signals(-code).name}
        except ValueError:
            return {"signal": str(-code)}
    return {"exit_code": code}


class WorkerLog:
    """What a run's history says of each worker process, folded one event at a time
    (:meth:`feed`): ops completed, its time to open, an open failure and a crash (with
    their error lines), and the pids faults killed. A few entries per process."""

    def __init__(self, events: Sequence[Event] = ()) -> None:
        self.done: Counter[int | str] = Counter()
        self.open_s: dict[int | str, float] = {}
        self.open_failed: dict[int | str, str] = {}
        self.crash: dict[int | str, str] = {}
        self.fault_pids: set[int] = set()
        for e in events:
            self.feed(e)

    def feed(self, e: Event) -> None:
        if e.process == "nemesis":
            if e.f == "kill" and isinstance(e.value, dict) and "pid" in e.value:
                self.fault_pids.add(e.value["pid"])
            return
        if e.f in OPS and e.type != "invoke":
            self.done[e.process] += 1
        elif e.f == "open" and e.type == "ok" and isinstance(e.value, dict):
            self.open_s[e.process] = float(e.value.get("seconds", 0.0))
        elif e.f == "open" and e.type == "info":
            self.open_failed[e.process] = e.error or "it could not open its store"
        elif e.f == "crash":
            self.crash[e.process] = e.error or ""


def _why(h: Ended, log: WorkerLog, ran_to_end: bool) -> tuple[str, str | None]:
    """(why the process ended, its error line): open failed, killed by fault, stopped (by
    the harness: the deadline, a stop signal), crashed, done (its ops or its deadline: the
    worker marked it on the board as it returned)."""
    p = h.number
    if p in log.open_failed:
        return "open failed", log.open_failed[p]
    if h.pid in log.fault_pids:
        return "killed by fault", None
    if h.killed:
        return "stopped", None
    if p in log.crash:
        return "crashed", log.crash[p]
    code = h.exitcode
    if code is not None and code < 0:
        return "crashed", f"ended by {_exit(code)['signal']}, not sent by the harness"
    if code != 0:
        return "crashed", f"ended with exit code {code}"
    if ran_to_end:
        return "done", None
    return "crashed", "ended without saying why (exit code 0)"


def account(handles: Sequence[Ended], events: Sequence[Event] | WorkerLog,
            planned: Sequence[int | None],
            min_ops: int, interrupted: bool,
            finished: Sequence[int]) -> tuple[list[dict[str, Any]], list[str]]:
    """(one record per worker process, the problems that make the run incomplete).

    ``planned`` is each slot's op count (None: unlimited); ``finished[slot]`` the process
    number + 1 of the slot's process that ran to its end (0: none); a process that ended by
    itself otherwise crashed, whatever its exit code. Unless the run was interrupted, each
    slot must complete ``min(min_ops, planned)`` ops."""
    log = events if isinstance(events, WorkerLog) else WorkerLog(events)
    per_slot: Counter[int] = Counter()
    for h in handles:
        per_slot[h.slot] += log.done.get(h.number, 0)
    records: list[dict[str, Any]] = []
    problems: list[str] = []
    for h in handles:
        ran_to_end = (0 <= h.slot < len(finished) and isinstance(h.number, int)
                      and finished[h.slot] == h.number + 1)
        why, error = _why(h, log, ran_to_end)
        open_s = log.open_s.get(h.number)
        records.append({"slot": h.slot, "process": h.number, "pid": h.pid, **_exit(h.exitcode),
                        "ops": log.done.get(h.number, 0), "why": why,
                        **({"error": error} if error else {}),
                        "open_s": None if open_s is None else round(open_s, 3)})
        if why in ("crashed", "open failed"):
            problems.append(f"worker slot {h.slot} (process {h.number}, pid {h.pid}) {why}: "
                            f"{error}")
    if not interrupted:
        for slot, want in enumerate(planned):
            need = min_ops if want is None else min(min_ops, want)
            if per_slot[slot] < need:
                problems.append(f"worker slot {slot} completed {per_slot[slot]} ops, fewer "
                                f"than min_ops = {need}")
    return records, problems


#: Faults whose failure leaves the run's target broken, so that what ran after it proves
#: nothing. A disconnect that could not kill a client (its own link refused) left the
#: target as it was: the run is still sound, and the fault's record says so.
_BREAKING = frozenset({"restart"})


def fault_problems(events: Sequence[Event]) -> list[str]:
    """A fault that failed and left the target broken (a restart whose server never came
    back)."""
    return [p for p in map(broken_by, events) if p is not None]


def broken_by(e: Event) -> str | None:
    """The problem ``e`` says, if it is a fault that failed and left the target broken."""
    if (e.process == "nemesis" and e.f in _BREAKING and isinstance(e.value, dict)
            and e.value.get("error")):
        return f"fault {e.value.get('id')} ({e.f}) failed: {e.value['error']}"
    return None
