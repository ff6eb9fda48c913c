"""Replay a controlled run from its trace (or its seed), search seeds for a failing
schedule, and measure how faithfully a run replays.

A controlled run directory holds ``scenario.toml``, ``plan.json`` (the seed), ``trace.json``
(the grants, and the faults at their decisions) and ``history/``. :func:`replay`
runs the same scenario with the same seed and, with ``source="trace"``, makes the
coordinator follow the recorded grants (and apply the recorded faults) instead of drawing
them; :func:`compare_runs` then says whether the two histories are the same up to times
and pids, and whether the violations are, as FoundationDB checks that a simulation run
twice gives the same result.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from harness.errors import HistoryError, InputError
from harness.history import Event, read_history
from harness.runner.control.trace import read_trace
from harness.scenario import Scenario, load_scenario

if TYPE_CHECKING:
    from harness.result import RunResult
    from harness.runner.coordinator import Progress

__all__ = ["Fidelity", "compare_runs", "load_run", "replay", "run_repro", "search"]


def load_run(run_dir: Path) -> tuple[Scenario, int]:
    """The scenario a run directory ran and its seed."""
    run_dir = Path(run_dir)
    sc = load_scenario(run_dir / "scenario.toml")
    try:
        seed = int(orjson.loads((run_dir / "plan.json").read_bytes())["seed"])
    except (OSError, orjson.JSONDecodeError, KeyError, ValueError) as err:
        raise InputError(f"{run_dir}: not a run directory (plan.json: {err})") from None
    return sc, seed


def replay_scenario(run_dir: Path, source: str = "trace") -> Scenario:
    """The scenario that replays ``run_dir``: same seed and, from ``trace``, its grants
    and its faults (before the same decisions)."""
    sc, seed = load_run(run_dir)
    control = dict(sc.control)
    if not control.get("enabled"):
        raise InputError(f"{run_dir}: a free-mode run has no interleaving to replay; "
                         "rerun it with `harness run --controlled`")
    if source == "trace":
        try:
            trace = read_trace(Path(run_dir))
        except HistoryError as err:
            raise InputError(str(err)) from None
        control["trace"] = trace.grants
        control["blocked"] = trace.blocked
        if trace.faults:  # the same faults before the same decisions
            control["faults"] = trace.fault_plan()
    elif source != "seed":
        raise InputError(f"replay source must be 'trace' or 'seed', got {source!r}")
    return sc.with_overrides(seed=seed, control=control)


def replay(run_dir: Path, *, source: str = "trace", reports: Path = Path("reports"),
           redis_url: str = "", progress: Progress | None = None, pg_url: str = "") -> RunResult:
    """Run ``run_dir`` again, from its trace or from its seed."""
    from harness.runner.coordinator import run

    return run(replay_scenario(run_dir, source), reports=reports, redis_url=redis_url,
               progress=progress, pg_url=pg_url)


#: What a fault event says that no replay can repeat: pids, and how long a restart took;
#: and how long a worker took to open its store (its ``open`` event).
_UNREPEATABLE = frozenset({"pid", "pids", "replacement_pid", "seconds"})


def _key(e: Event) -> tuple[Any, ...]:
    value = e.value
    if (e.process == "nemesis" or e.f == "open") and isinstance(value, dict):
        value = {k: v for k, v in value.items() if k not in _UNREPEATABLE}
    return (e.process, e.type, e.f, e.session, orjson.dumps(value), e.error)


@dataclass(frozen=True, slots=True)
class Fidelity:
    """How a second run of the same seed compares with the first."""

    events: tuple[int, int]
    same_events: int  # the length of the common prefix, up to times and pids
    first_difference: str
    grants: tuple[int, int]
    same_grants: int
    violations: tuple[dict[str, int], dict[str, int]]

    @property
    def same_history(self) -> bool:
        return self.events[0] == self.events[1] == self.same_events

    @property
    def same_trace(self) -> bool:
        return self.grants[0] == self.grants[1] == self.same_grants

    @property
    def same_violations(self) -> bool:
        return self.violations[0] == self.violations[1]

    @property
    def faithful(self) -> bool:
        return self.same_history and self.same_violations

    def line(self) -> str:
        n = max(self.events)
        pct = 100.0 * self.same_events / n if n else 100.0
        hist = ("history identical" if self.same_history else
                f"history {pct:.1f}% ({self.same_events}/{n} events) then {self.first_difference}")
        m = max(self.grants)
        trace = ("trace identical" if self.same_trace else
                 f"trace {self.same_grants}/{m} grants")
        viol = (f"violations identical {self.violations[0] or '{}'}" if self.same_violations
                else f"violations differ: {self.violations[0]} vs {self.violations[1]}")
        return f"{hist} ({n} events); {trace} ({m} grants); {viol}"

    def to_dict(self) -> dict[str, Any]:
        return {"faithful": self.faithful, "same_history": self.same_history,
                "same_trace": self.same_trace, "same_violations": self.same_violations,
                "events": list(self.events), "same_events": self.same_events,
                "first_difference": self.first_difference, "grants": list(self.grants),
                "same_grants": self.same_grants, "violations": list(self.violations)}


def _counts(run_dir: Path) -> dict[str, int]:
    try:
        d = orjson.loads((run_dir / "report.json").read_bytes())
        return dict(d["check"]["counts"])
    except (OSError, orjson.JSONDecodeError, KeyError):
        return {}


def _prefix(a: list[Any], b: list[Any]) -> int:
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


def compare_runs(a: Path, b: Path) -> Fidelity:
    """Compare two runs of one seed: histories up to times and pids, traces, violations."""
    ea, eb = read_history(a), read_history(b)
    ka, kb = [_key(e) for e in ea], [_key(e) for e in eb]
    same = _prefix(ka, kb)
    diff = ""
    if same < max(len(ka), len(kb)):
        x = ea[same].to_dict() if same < len(ea) else "end"
        y = eb[same].to_dict() if same < len(eb) else "end"
        diff = f"event {same}: {_short(x)} vs {_short(y)}"
    ga = read_trace(a).grants if (a / "trace.json").is_file() else []
    gb = read_trace(b).grants if (b / "trace.json").is_file() else []
    return Fidelity((len(ka), len(kb)), same, diff, (len(ga), len(gb)), _prefix(ga, gb),
                    (_counts(a), _counts(b)))


def _short(d: Any) -> str:
    if not isinstance(d, dict):
        return str(d)
    return f"{d['process']} {d['type']} {d['f']} {d['session']} {orjson.dumps(d['value'])[:60]!r}"


def search(sc: Scenario, *, schedules: int, reports: Path = Path("reports"),
           redis_url: str = "", progress: Progress | None = None,
           on_attempt: Callable[[int, RunResult], None] | None = None,
           allow_destructive_faults: bool = False, pg_url: str = "") -> RunResult:
    """Controlled runs under seeds N, N+1, ... (N = the scenario's seed) until one finds a
    violation or ``schedules`` ran; the last run's result. Each attempt is a whole run
    with its own seed, so the failing one reruns alone with ``--seed`` and one schedule."""
    from harness.runner.coordinator import run

    assert sc.seed is not None
    res: RunResult | None = None
    for i in range(schedules):
        res = run(sc.with_overrides(seed=sc.seed + i), reports=reports, redis_url=redis_url,
                  progress=progress, allow_destructive_faults=allow_destructive_faults,
                  pg_url=pg_url)
        if on_attempt is not None:
            on_attempt(i, res)
        if res.result.valid is not True or res.interrupted:
            break
    assert res is not None
    return res


def run_repro(repro: Path, reports: Path, store: str | None = None) -> RunResult:
    """Run a ``repro.toml`` written by ``harness shrink``, on its store or on ``store``."""
    from harness.runner.coordinator import run

    return run(load_scenario(repro).with_overrides(store=store), reports=reports)
