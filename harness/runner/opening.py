"""How long the workers took to open their store, read from a merged history: the
``opening`` section of a run's stats (a pure function).

A worker logs ``ok open`` (value ``{"seconds": s}``) once its store is open; the run's clock
starts when every first worker has (the start barrier), so their opening is not run time.
A killed slot's replacement opens while the run goes on: its opening is time the slot ran
no op, and a fault aimed at it then lands on a worker that has nothing in flight.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from harness.history import Event, is_reader

__all__ = ["Opening", "opening_summary"]


class Opening:
    """The ``opening`` stats folded one event at a time (:meth:`feed`); :meth:`summary`
    gives what :func:`opening_summary` gives on the whole history. State: a few entries
    per process and one per fault aimed at a process."""

    def __init__(self) -> None:
        self.opened: dict[Any, tuple[int, float]] = {}  # process -> (when open, seconds)
        self.born: dict[Any, int] = {}  # replacement -> when started (its predecessor's kill)
        self.killed: dict[Any, int] = {}
        self.aimed: list[tuple[int, Any]] = []  # (when, process) of each fault aimed at one
        self.final: float | None = None

    def feed(self, e: Event) -> None:
        v = e.value if isinstance(e.value, dict) else {}
        if e.process == "nemesis":
            if "process" in v and "skipped" not in v and v.get("phase") != "end":
                self.aimed.append((e.time, v["process"]))
            if e.f == "kill" and "process" in v:
                self.killed.setdefault(v["process"], e.time)
                if v.get("replaced_by") is not None:
                    self.born[v["replaced_by"]] = e.time
        elif e.f == "open" and e.type == "ok" and isinstance(v.get("seconds"), int | float):
            if e.process == "final":
                self.final = round(float(v["seconds"]), 3)
            elif not is_reader(e.process):  # a retired generation's reader: no worker
                self.opened.setdefault(e.process, (e.time, float(v["seconds"])))

    def summary(self, workers: int, clock: tuple[int, int] | None, timeout: float,
                failed: Sequence[dict[str, Any]] = ()) -> dict[str, Any]:
        """See :func:`opening_summary`."""
        opened, born, killed = self.opened, self.born, self.killed
        spans: dict[Any, tuple[int, int]] = {}  # process -> [from, to) it was opening
        for p, (t, s) in opened.items():
            spans[p] = (t - int(s * 1e9), t)
        for p, t in born.items():
            if p not in spans:  # never opened: from its start to its kill (or the end)
                spans[p] = (t, killed.get(p, clock[1] if clock else t))
        run_ns = 0
        if clock is not None:
            for p in born:
                a, b = spans[p]
                run_ns += max(0, min(b, clock[1]) - max(a, clock[0]))
        slot_ns = workers * (clock[1] - clock[0]) if clock is not None else 0
        on_opening = sum(1 for t, p in self.aimed
                         if p in spans and spans[p][0] <= t < spans[p][1])
        return {"timeout_s": timeout,
                "workers": {str(p): round(s, 3) for p, (_, s) in opened.items()
                            if p not in born},
                "replacements": {str(p): (round(opened[p][1], 3) if p in opened else None)
                                 for p in born},
                "final_read": self.final,
                "failed": list(failed),
                "run_seconds": round(run_ns / 1e9, 3),
                "run_share": round(run_ns / slot_ns, 4) if slot_ns > 0 else 0.0,
                "faults_on_opening": on_opening}


def opening_summary(events: Sequence[Event], workers: int, clock: tuple[int, int] | None,
                    timeout: float, failed: Sequence[dict[str, Any]] = ()) -> dict[str, Any]:
    """The ``opening`` stats: ``timeout_s``; ``workers`` (each first worker's seconds to
    open), ``replacements`` (each replacement's: None if it never opened) and
    ``final_read`` (the final reader's); ``failed``, the workers that did not
    open in time (``[{"process", "error"}]``); ``run_seconds``, the slot-seconds the
    replacements spent opening within the run's ``clock`` (monotonic ns from the go to the
    end) and ``run_share``, their share of the slots' time; ``faults_on_opening``, the
    faults aimed at a process still opening."""
    fold = Opening()
    for e in events:
        fold.feed(e)
    return fold.summary(workers, clock, timeout, failed)
