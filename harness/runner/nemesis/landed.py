"""Where the faults landed, read from a merged history: which op each fault caught in
flight, and how the ops ended while it lasted."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any

from harness.history import Event, is_reader

__all__ = ["RECORDS_MAX", "WRITES", "Landing", "fault_summary"]

WRITES = frozenset({"append", "snapshot", "rollback"})
#: Faults written one by one in the report (the rest are in the per-kind counts).
RECORDS_MAX = 500


class Landing:
    """Where the faults landed, folded one event at a time (:meth:`feed`, merged order);
    :meth:`summary` gives what :func:`fault_summary` gives on the whole history.

    State: each worker process's op in flight, and per fault applied the ops it caught
    and, while it lasts, a count of the worker ops that failed or ended unknown. (At the
    very same nanosecond as a fault's start, an op's completion counts as before it, as
    the merge puts workers' events first.)"""

    def __init__(self, faults: Sequence[dict[str, Any]]) -> None:
        self.faults = tuple(faults)
        self.t0: int | None = None
        self.open: dict[Any, tuple[str, int]] = {}  # worker process -> (f, invoke index)
        self.waiting: dict[Any, list[dict[str, Any]]] = {}  # process -> caught, outcome due
        self.rank: dict[Any, int] = {}  # the order pair_ops first closes an op of each
        self.started: dict[int, tuple[int, dict[str, Any]]] = {}
        self.caught: dict[int, list[dict[str, Any]]] = {}
        self.windows: dict[int, tuple[set[Any] | None, list[int]]] = {}
        self.errors: dict[int, int] = {}

    def feed(self, e: Event) -> None:
        if self.t0 is None:
            self.t0 = e.time
        p = e.process
        if p == "nemesis":
            self._fault(e)
            return
        if is_reader(p):
            return
        try:
            pending = p in self.open
        except TypeError:  # an unhashable process: pair_ops skips it
            return
        if e.type == "invoke":
            if pending:
                self._close(p, None)  # never completed: pair_ops closes it here
            self.open[p] = (e.f, e.index)
        elif pending:
            self._close(p, e.type)
            if e.type in ("fail", "info"):
                for targets, n in self.windows.values():
                    if targets is None or p in targets:
                        n[0] += 1

    def _close(self, p: Any, outcome: str | None) -> None:
        del self.open[p]
        self.rank.setdefault(p, len(self.rank))
        for c in self.waiting.pop(p, ()):
            c["outcome"] = outcome

    def _fault(self, e: Event) -> None:
        v = e.value
        if not isinstance(v, dict) or "id" not in v:
            return
        fid = v["id"]
        if v.get("phase") == "end":
            window = self.windows.pop(fid, None)
            if window is not None:
                self.errors[fid] = window[1][0]
            return
        if fid in self.started:
            return
        self.started[fid] = (e.time, v)
        if "skipped" in v:
            return
        target = v.get("process")
        procs = list(self.open) if target is None else [target] if target in self.open else []
        caught = []
        for q in procs:
            c = {"process": q, "f": self.open[q][0], "outcome": None}
            caught.append(c)
            self.waiting.setdefault(q, []).append(c)
        self.caught[fid] = caught
        self.windows[fid] = (None if target is None else {target}, [0])
        if e.f == "kill" and "process" in v and v["process"] in self.open:
            # its op never completes, and is no longer in flight once the process is dead
            del self.open[v["process"]]
            self.waiting.pop(v["process"], None)

    def summary(self) -> dict[str, Any]:
        """See :func:`fault_summary`."""
        ranks = dict(self.rank)
        for p, _ in sorted(self.open.items(), key=lambda kv: kv[1][1]):
            ranks.setdefault(p, len(ranks))  # open at the end: pair_ops closes them last
        kinds: dict[str, dict[str, Any]] = {}
        records: list[dict[str, Any]] = []
        for f in self.faults:
            k = kinds.setdefault(f["kind"], {"scheduled": 0, "applied": 0, "skipped": 0,
                                             "in_flight": 0, "in_flight_writes": 0,
                                             "ops": Counter(), "outcomes": Counter(),
                                             "errors_during": 0})
            k["scheduled"] += 1
            found = self.started.get(f["id"])
            if found is None:
                continue
            t, v = found
            if "skipped" in v:
                k["skipped"] += 1
                continue
            k["applied"] += 1
            caught = sorted((dict(c) for c in self.caught.get(f["id"], ())),
                            key=lambda c: ranks.get(c["process"], len(ranks)))
            k["in_flight"] += bool(caught)
            k["in_flight_writes"] += any(c["f"] in WRITES for c in caught)
            k["ops"].update(c["f"] for c in caught)
            k["outcomes"].update(str(c["outcome"]) for c in caught)
            errors = self.errors.get(f["id"], 0)
            k["errors_during"] += errors
            if len(records) < RECORDS_MAX:
                records.append({"id": f["id"], "kind": f["kind"],
                                "at": round((t - (self.t0 or 0)) / 1e9, 4),
                                **{x: v[x] for x in ("slot", "process", "step", "op", "point")
                                   if x in v},
                                "in_flight": caught, "errors_during": errors})
        for k in kinds.values():
            k["ops"], k["outcomes"] = dict(k["ops"]), dict(k["outcomes"])
        applied = sum(k["applied"] for k in kinds.values())
        skipped = sum(k["skipped"] for k in kinds.values())
        return {"scheduled": len(self.faults), "applied": applied, "skipped": skipped,
                "not_reached": len(self.faults) - applied - skipped, "kinds": kinds,
                "faults": records}


def fault_summary(events: Iterable[Event], faults: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Where the faults landed, from the history alone (a pure function).

    For each fault applied: the ops its target had in flight at that instant (the slot's
    process for kill, pause and disconnect; every worker for the others) and how each
    ended (``None``: never, as after a kill); for faults with a duration, the worker
    ops that failed or ended unknown while it lasted. Per kind: how many were scheduled,
    applied and skipped, how many caught an op in flight, a write in flight, and how
    those ops ended; the first :data:`RECORDS_MAX` faults one by one. A schedule whose
    faults never catch an op in flight proves little."""
    fold = Landing(faults)
    for e in events:
        fold.feed(e)
    return fold.summary()
