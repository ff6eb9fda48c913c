"""Where the faults landed, read from a merged history: which op each fault caught in
flight, and how the ops ended while it lasted."""

from __future__ import annotations

import bisect
from collections import Counter
from collections.abc import Sequence
from typing import Any

from harness.history import Event, pair_ops

__all__ = ["WRITES", "fault_summary"]

WRITES = frozenset({"append", "snapshot", "rollback"})


def fault_summary(events: Sequence[Event], faults: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Where the faults landed, from the history alone (a pure function).

    For each fault applied: the ops its target had in flight at that instant (the slot's
    process for kill, pause and disconnect; every worker for the others) and how each
    ended (``None``: never, as after a kill); for faults with a duration, the worker
    ops that failed or ended unknown while it lasted. Per kind: how many were scheduled,
    applied and skipped, how many caught an op in flight, a write in flight, and how
    those ops ended. A schedule whose faults never catch an op in flight proves little."""
    ops = _OpIndex(events)
    t0 = events[0].time if events else 0
    starts: dict[int, Event] = {}
    ends: dict[int, Event] = {}
    for e in events:
        if e.process == "nemesis" and isinstance(e.value, dict) and "id" in e.value:
            (ends if e.value.get("phase") == "end" else starts).setdefault(e.value["id"], e)
    kinds: dict[str, dict[str, Any]] = {}
    records = []
    for f in faults:
        k = kinds.setdefault(f["kind"], {"scheduled": 0, "applied": 0, "skipped": 0,
                                         "in_flight": 0, "in_flight_writes": 0,
                                         "ops": Counter(), "outcomes": Counter(),
                                         "errors_during": 0})
        k["scheduled"] += 1
        ev = starts.get(f["id"])
        if ev is None:
            continue
        if "skipped" in ev.value:
            k["skipped"] += 1
            continue
        k["applied"] += 1
        target = ev.value.get("process")
        caught = ops.in_flight(ev.time, None if target is None else [target])
        k["in_flight"] += bool(caught)
        k["in_flight_writes"] += any(c["f"] in WRITES for c in caught)
        k["ops"].update(c["f"] for c in caught)
        k["outcomes"].update(str(c["outcome"]) for c in caught)
        end = ends.get(f["id"])
        errors = ops.errors_between(ev.time, end.time, None if target is None else [target]) \
            if end is not None else 0
        k["errors_during"] += errors
        records.append({"id": f["id"], "kind": f["kind"], "at": round((ev.time - t0) / 1e9, 4),
                        **{x: ev.value[x] for x in ("slot", "process", "step", "op", "point")
                           if x in ev.value},
                        "in_flight": caught, "errors_during": errors})
    for k in kinds.values():
        k["ops"], k["outcomes"] = dict(k["ops"]), dict(k["outcomes"])
    applied = sum(k["applied"] for k in kinds.values())
    skipped = sum(k["skipped"] for k in kinds.values())
    return {"scheduled": len(faults), "applied": applied, "skipped": skipped,
            "not_reached": len(faults) - applied - skipped, "kinds": kinds,
            "faults": records[:500]}


class _OpIndex:
    """Worker ops by process, for "what was in flight at time t" questions."""

    def __init__(self, events: Sequence[Event]) -> None:
        self.by_proc: dict[Any, list[tuple[int, float, str, str | None]]] = {}
        self.errors: dict[Any, list[int]] = {}
        # A killed process's last op never completes, but it is no longer in flight once
        # the process is dead: it ends just after the kill (not at infinity).
        self.killed = {e.value["process"]: e.time + 1 for e in events
                       if e.process == "nemesis" and e.f == "kill"
                       and isinstance(e.value, dict) and "process" in e.value}
        for inv, done in pair_ops(events):
            if inv.process in ("nemesis", "final"):
                continue
            self._add(inv, done)
            if done is not None and done.type in ("fail", "info"):
                self.errors.setdefault(inv.process, []).append(done.time)
        self.starts = {p: [o[0] for o in v] for p, v in self.by_proc.items()}

    def _add(self, inv: Event, done: Event | None) -> None:
        end = done.time if done else self.killed.get(inv.process, float("inf"))
        self.by_proc.setdefault(inv.process, []).append(
            (inv.time, end, inv.f, done.type if done else None))

    def in_flight(self, t: int, procs: list[Any] | None) -> list[dict[str, Any]]:
        out = []
        for p in self.by_proc if procs is None else procs:
            i = bisect.bisect_right(self.starts.get(p, []), t) - 1
            if i >= 0:
                _, end, f, outcome = self.by_proc[p][i]
                if end > t:
                    out.append({"process": p, "f": f, "outcome": outcome})
        return out

    def errors_between(self, a: int, b: int, procs: list[Any] | None) -> int:
        """Ops of ``procs`` (every worker: None) that failed or ended unknown in [a, b]."""
        return sum(bisect.bisect_right(t, b) - bisect.bisect_left(t, a)
                   for p, t in self.errors.items() if procs is None or p in procs)
