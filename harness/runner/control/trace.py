"""The trace of a controlled run: every grant, in order, saved as ``trace.json``.

``grants[k]`` is the worker slot granted the k-th step; ``ops[k]`` the index of the op
that worker was running (-1 before its first op) and ``points[k]`` the label of the point
it stood at (``start``, an SQL verb, a Redis command). ``busy`` lists the grants that
retried a statement after ``SQLITE_BUSY``; ``blocked`` the grants after which the worker
did not reach its next point within ``block_ms`` (the only timing-dependent steps);
``divergences`` what a replay could not follow.

``faults`` lists the run's fault schedule at scheduling decisions (``id``, ``kind``,
``at_step``, ``worker``, ``for_steps``) and where each landed: ``step`` (the decision it
was applied before; None if the run ended first), the target's ``process``, the ``op``
it was in and the ``point`` it stood at, or ``skipped`` and why. A replay from the trace
applies the same schedule (:meth:`Trace.fault_plan`).
"""

from __future__ import annotations

import itertools
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

import orjson

from harness.errors import HistoryError

__all__ = ["TRACE_FILE", "Trace", "read_trace"]

TRACE_FILE = "trace.json"


@dataclass(slots=True)
class Trace:
    strategy: str
    seed: int
    workers: int
    grants: list[int] = field(default_factory=list)
    ops: list[int] = field(default_factory=list)
    points: list[str] = field(default_factory=list)
    busy: list[int] = field(default_factory=list)
    blocked: list[int] = field(default_factory=list)
    divergences: list[str] = field(default_factory=list)
    faults: list[dict[str, Any]] = field(default_factory=list)
    replayed: bool = False
    deadline_hit: bool = False
    seconds: float = 0.0

    @property
    def decisions(self) -> int:
        return len(self.grants)

    @property
    def switches(self) -> int:
        """Context switches: grants to a different worker than the one before."""
        return sum(1 for a, b in itertools.pairwise(self.grants) if a != b)

    def summary(self) -> dict[str, Any]:
        rate = self.decisions / self.seconds if self.seconds > 0 else 0.0
        return {"strategy": self.strategy, "decisions": self.decisions,
                "switches": self.switches, "busy_retries": len(self.busy),
                "blocked": len(self.blocked), "divergences": len(self.divergences),
                "faults": sum(1 for f in self.faults
                              if f.get("step") is not None and "skipped" not in f),
                "replayed": self.replayed, "deadline_hit": self.deadline_hit,
                "seconds": round(self.seconds, 3), "decisions_per_s": round(rate)}

    def fault_plan(self) -> list[dict[str, Any]]:
        """The fault schedule as ``[control] faults`` tables, in id order (a replay or a
        shrunk repro applies exactly these)."""
        from harness.plan import STEPPED_KEYS

        return [{k: f[k] for k in STEPPED_KEYS if k in f}
                for f in sorted(self.faults, key=lambda f: int(f["id"]))]

    def write(self, run_dir: Path, summary: dict[str, Any] | None = None) -> None:
        """Write ``trace.json``, with ``summary`` (default: :meth:`summary`)."""
        d = asdict(self)
        d["summary"] = summary if summary is not None else self.summary()
        (run_dir / TRACE_FILE).write_bytes(orjson.dumps(d))


def read_trace(run_dir: Path) -> Trace:
    """The trace of a controlled run directory; HistoryError if there is none."""
    p = Path(run_dir) / TRACE_FILE
    try:
        d = orjson.loads(p.read_bytes())
    except FileNotFoundError:
        raise HistoryError(f"{run_dir}: no {TRACE_FILE} (not a controlled run)") from None
    except (OSError, orjson.JSONDecodeError) as err:
        raise HistoryError(f"{p}: unreadable trace ({err})") from None
    problem = _trace_problem(d)
    if problem is not None:
        raise HistoryError(f"{p}: not a trace: {problem}")
    d.pop("summary", None)
    return Trace(**d)


def _trace_problem(d: Any) -> str | None:
    """Why parsed ``trace.json`` content cannot be a :class:`Trace`, or None."""
    if not isinstance(d, dict):
        return f"a JSON {type(d).__name__}, not an object"
    known = {f.name for f in fields(Trace)} | {"summary"}
    if not {"strategy", "seed", "workers"} <= set(d) or not set(d) <= known:
        return f"keys {sorted(d)[:12]}, expected {sorted(known)}"
    kinds = {"grants": int, "ops": int, "busy": int, "blocked": int, "points": str,
             "divergences": str, "faults": dict}
    for key, kind in kinds.items():
        v = d.get(key, [])
        if not isinstance(v, list) or not all(type(x) is kind for x in v):
            return f"{key} must be a list of {kind.__name__}"
    if not all(type(f.get("id")) is int for f in d.get("faults", [])):
        return "every fault needs an integer id"
    return None
