"""The trace of a controlled run: every grant, in order, saved as ``trace.json``.

``grants[k]`` is the worker slot granted the k-th step; ``ops[k]`` the index of the op
that worker was running (-1 before its first op) and ``points[k]`` the label of the point
it stood at (``start``, an SQL verb, a Redis command). ``busy`` lists the grants that
retried a statement after ``SQLITE_BUSY``; ``blocked`` the grants after which the worker
did not reach its next point within ``block_ms`` (the only timing-dependent steps);
``divergences`` what a replay could not follow.
"""

from __future__ import annotations

import itertools
from dataclasses import asdict, dataclass, field
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
                "replayed": self.replayed, "deadline_hit": self.deadline_hit,
                "seconds": round(self.seconds, 3), "decisions_per_s": round(rate)}

    def write(self, run_dir: Path) -> None:
        d = asdict(self)
        d["summary"] = self.summary()
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
    d.pop("summary", None)
    return Trace(**d)
