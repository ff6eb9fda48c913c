"""Controlled mode: scheduling points at storage-command granularity, stepping strategies,
and the grant loop that runs one worker at a time so one seed gives one interleaving.

- :mod:`harness.runner.control.hooks`: inside a worker, the points (``sqlite3``, redis-py);
- :mod:`harness.runner.control.strategies`: random walk, PCT, round robin;
- :mod:`harness.runner.control.driver`: the coordinator's grant loop (which also applies the
  faults of a controlled run, each before a scheduling decision: harness.runner.nemesis.stepped);
- :mod:`harness.runner.control.trace`: the recorded grants (``trace.json``), which replay follows.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from harness.runner.control.driver import Controller
from harness.runner.control.hooks import Attach
from harness.runner.control.trace import TRACE_FILE, Trace, read_trace
from harness.scenario import control_spec

if TYPE_CHECKING:
    from harness.plan import Plan
    from harness.scenario import Scenario

__all__ = [
    "TRACE_FILE",
    "Attach",
    "Controller",
    "Trace",
    "controller_for",
    "read_trace",
]


def controller_for(sc: Scenario, plan: Plan, run_dir: Path | None = None) -> Controller | None:
    """The controller of a controlled run (None in free mode, the default), its socket in
    ``run_dir`` when given (see :func:`harness.runner.control.driver.socket_dir`)."""
    spec = control_spec(sc)
    if not spec.enabled:
        return None
    from harness.plan import step_estimate

    streams = [[(o.f, o.session) for o in s] for s in plan.materialize()]  # finite here

    def ops(slot: int, n: int) -> tuple[str, str] | None:
        s = streams[slot] if 0 <= slot < len(streams) else []
        return s[n] if 0 <= n < len(s) else None

    return Controller(spec, plan.seed, plan.workers, steps_estimate=step_estimate(plan),
                      run_dir=run_dir, ops=ops)
