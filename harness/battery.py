"""The battery: ``harness run --store SPEC`` with no scenario. Phases that each aim at one
class of bug, each run in rounds until its coverage goals are met or its share of the
time is up, steering the op mix toward the pairs it has not covered yet.

The phases, for the store's backend and capabilities (:func:`phases`):

- ``cold-start``: eight workers open a fresh store at the same instant, three times (set-up
  code that races: ``setup-race``);
- ``append-race``: writers racing on one session (lost or duplicated turns);
- ``rollback-storm``: snapshots and rollbacks among reads and appends of one session, in
  controlled mode with the ``window`` strategy, which runs ops inside multi-command ones
  (non-atomic rollback or snapshot);
- ``many-sessions``: twelve sessions retired every 100 ops (turns in the wrong session);
- ``payloads``: long and odd contents (what does not round-trip);
- ``fault-<kind>``: one per fault kind the backend allows (destructive ones only on a
  server the harness started), a fault every second.

A round is one ordinary run (:func:`harness.runner.coordinator.run`), its run directory
under the battery's, with seed ``seed + n`` for the battery's n-th round. After a round,
each goal not met yet doubles the weights of the two op kinds of its pair. The battery
stops at the first round that fails (its reproduce command reruns it alone) or when
interrupted. Its verdict: ``fail`` if a round failed; else ``interrupted``, else
``incomplete`` if a round was not a pass or a phase got no round (``--duration`` too short
for every phase to run one); else ``pass``. A phase gets its share of the time left when it
starts, so a phase that ran over (a round started runs to its end) shortens the next ones. The battery's ``report.json``
holds every phase's goals, what each reached, its rounds, the merged coverage, and the
first violation with the time it took to find.
"""

from __future__ import annotations

import random
import shlex
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from harness.backends.postgres import PG_BLOCK_MS
from harness.coverage import KINDS, pair_name, sentence
from harness.errors import InputError
from harness.faults import CATALOG
from harness.result import EXIT_CODES, RunResult
from harness.scenario import PayloadSpec, Scenario, validate
from harness.stores.registry import StoreInfo, resolve

__all__ = ["BATTERY_S", "Battery", "Phase", "phases", "run_battery"]

#: The battery's default length, in seconds (``--duration`` bounds the whole battery).
BATTERY_S = 120.0
#: A free-mode round's length: short, so steering happens several times per phase.
ROUND_S = 4.0
#: A round shorter than this is not started (the phase's time is up).
MIN_ROUND_S = 1.0
_MAX_WEIGHT = 64

Progress = Callable[[str, dict[str, Any]], None]


@dataclass(frozen=True, slots=True)
class Phase:
    """One phase: its scenario (its rounds vary the seed and the weights), the bug class
    it aims at, its goals (``"append+read"``: interleaving overlaps;
    ``"window:rollback inside snapshot"``: controlled command windows; ``"fault:kill"``:
    faults applied with an op in flight), and its share of the battery's time."""

    name: str
    bug: str
    scenario: Scenario
    goals: tuple[tuple[str, int], ...]
    share: float


@dataclass(slots=True)
class _Tally:
    """What one phase reached so far (a record, filled round by round)."""

    reached: dict[str, int] = field(default_factory=dict)
    rounds: list[dict[str, Any]] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class Battery:
    """The battery's outcome: its verdict, and the report it wrote to ``run_dir``."""

    run_dir: Path
    verdict: str
    report: dict[str, Any]
    first: RunResult | None  # the first failing round, if any

    @property
    def exit_code(self) -> int:
        return EXIT_CODES[self.verdict]




def phases(info: StoreInfo, backend: str, external: bool = False) -> list[Phase]:
    """The battery's phases for a store (see the module docstring)."""
    caps = info.capabilities

    def w(**weights: int) -> dict[str, int]:
        return {k: v for k, v in weights.items() if k in caps}

    base = Scenario(store=info.spec, backend=backend, workers=4, ops=None, sessions=1,
                    payload=PayloadSpec(max_bytes=0, long_rate=0.0))
    # each round is a fresh target: a fresh store for eight processes to open at once
    out = [Phase("cold-start", "set-up code that races when processes open a fresh store "
                 "at once", replace(base, name="battery-cold-start", workers=8, ops=30,
                                    cold_start=True, weights=w(append=6, read=3, list_snapshots=1)),
                 ((COLD_GOAL, 3),), 0.05)]
    out += [Phase("append-race", "writers racing on one session lose or duplicate turns",
                 replace(base, name="battery-append-race",
                         weights=w(append=6, read=3, list_snapshots=1)),
                 _goals(caps, ("append", "append", 100), ("append", "read", 50)), 0.15)]
    if {"snapshot", "rollback"} <= caps:
        # short sessions: a session of a thousand ops, a quarter of them rollbacks, costs
        # the exact check tens of seconds (2026-11-24, redis: 45 s and undecided at 250
        # ops per worker, 2.7 s at 50), which the phases after it lost
        storm = replace(base, name="battery-rollback-storm", ops=400, session_lifetime=50,
                        weights=w(append=5, read=3, snapshot=2, rollback=3, list_snapshots=1),
                        control={"enabled": True, "strategy": "window",
                                 **({"block_ms": PG_BLOCK_MS} if backend == "postgres" else {})})
        out.append(Phase("rollback-storm", "a rollback or snapshot that is not atomic against "
                         "the reads and appends of its session", storm,
                         (*_goals(caps, ("rollback", "read", 20), ("rollback", "append", 20),
                                  ("snapshot", "rollback", 5)),
                          ("window:append inside rollback", 5),
                          ("window:rollback inside snapshot", 5)), 0.25))
    out.append(Phase("many-sessions", "turns that land in, or leak into, another session",
                     replace(base, name="battery-many-sessions", sessions=12,
                             session_lifetime=100,
                             weights=w(append=6, read=3, snapshot=1, rollback=1,
                                       list_snapshots=1)),
                     _goals(caps, ("append", "read", 50)), 0.15))
    out.append(Phase("payloads", "contents that do not round-trip: long, unicode, quotes, "
                     "newlines, empty",
                     replace(base, name="battery-payloads", sessions=2,
                             payload=PayloadSpec(max_bytes=200_000, long_rate=0.3),
                             weights=w(append=5, read=3, snapshot=1, rollback=1)),
                     _goals(caps, ("append", "read", 10)), 0.1))
    kinds = [k for k in sorted(CATALOG) if backend in CATALOG[k].backends
             and not (external and CATALOG[k].destructive)]
    for k in kinds:
        out.append(Phase(f"fault-{k}", f"what a {k} fault does to writes in flight",
                         replace(base, name=f"battery-fault-{k}", sessions=2,
                                 weights=w(append=6, read=3, snapshot=1, rollback=1,
                                           list_snapshots=1),
                                 faults=({"kind": k, "every": 1.0},)),
                         ((f"fault:{k}", 3),), 0.35 / len(kinds)))
    return [replace(p, scenario=validate(p.scenario)) for p in out]


def _goals(caps: frozenset[str], *pairs: tuple[str, str, int]) -> tuple[tuple[str, int], ...]:
    return tuple((pair_name(a, b), n) for a, b, n in pairs if a in caps and b in caps)


def run_battery(store: str, *, duration: float = BATTERY_S, seed: int | None = None,
                reports: Path = Path("reports"), redis_url: str = "",
                progress: Progress | None = None,
                allow_destructive_faults: bool = False, pg_url: str = "") -> Battery:
    """Run the battery against ``store`` for at most about ``duration`` seconds (a round
    started runs to its end) and write ``<reports>/<battery-id>/report.json``. Raises
    InputError for bad input or setup, as a scenario run does."""
    from harness.runner.coordinator import run

    info = resolve(store)
    backend = info.backend
    if backend is None:
        raise InputError(f"store {store!r} does not say its backend: the battery needs one "
                         "(give a scenario with backend = \"sqlite\" or \"redis\")")
    seed = seed if seed is not None else random.SystemRandom().randrange(10**9)
    say = progress or (lambda _e, _d: None)
    ph = phases(info, backend, external=bool({"redis": redis_url, "postgres": pg_url}.get(backend)))
    run_dir = _battery_dir(reports, store, seed)
    started = time.monotonic()
    tallies = {p.name: _Tally() for p in ph}
    first: RunResult | None = None
    first_after: float | None = None
    interrupted = incomplete = False
    n = 0
    deadline = started + duration
    for k, p in enumerate(ph):
        # this phase's share of the time left: a phase that ran over shortens the next ones
        shares = sum(q.share for q in ph[k:])
        end = time.monotonic() + p.share / shares * max(0.0, deadline - time.monotonic())
        sc = p.scenario
        tally = tallies[p.name]
        while not _met(p, tally) and end - time.monotonic() >= MIN_ROUND_S:
            say("phase", {"phase": p.name, "round": len(tally.rounds) + 1})
            length = min(ROUND_S, end - time.monotonic())
            rsc = _round_file(run_dir / f"{p.name}-round{len(tally.rounds) + 1}.toml",
                              replace(sc, seed=seed + n, duration=length if sc.ops is None
                                      else max(length, 30.0)))
            n += 1
            res = run(rsc, reports=run_dir, redis_url=redis_url, progress=say,
                      allow_destructive_faults=allow_destructive_faults, pg_url=pg_url)
            _add(tally, res, rsc.cold_start)
            if res.verdict == "fail":
                first, first_after = res, time.monotonic() - started
                break
            interrupted |= res.verdict == "interrupted"
            incomplete |= res.verdict != "pass"
            if interrupted:
                break
            sc = _steer(p, sc, tally)
        if first is not None or interrupted:
            break
        incomplete |= not tally.rounds  # a phase that never ran proves nothing
    verdict = ("fail" if first is not None else "interrupted" if interrupted
               else "incomplete" if incomplete else "pass")
    report = _report(store, backend, seed, duration, verdict, ph, tallies, info, first,
                     first_after, time.monotonic() - started)
    _write(run_dir / "report.json", report)
    return Battery(run_dir, verdict, report, first)


def _battery_dir(reports: Path, store: str, seed: int) -> Path:
    safe = "".join(c if c.isalnum() or c in "-." else "-" for c in store)[:60]
    base = f"{time.strftime('%Y%m%d-%H%M%S')}-battery-{safe}-seed{seed}"
    for k in range(1000):
        d = reports / (base if k == 0 else f"{base}-{k}")
        try:
            d.mkdir(parents=True)
            return d
        except FileExistsError:
            continue
        except OSError as err:
            raise InputError(f"cannot write the battery's directory under {reports}: "
                             f"{err.strerror}") from None
    raise InputError(f"too many batteries named {base} in {reports}")


def _round_file(path: Path, sc: Scenario) -> Scenario:
    """The round's scenario, written to ``path`` and read back from it, so the round's
    reproduce command names a file that holds it."""
    from harness.scenario import load_scenario

    path.write_text(sc.to_toml(), encoding="utf-8")
    return load_scenario(path)


#: The cold-start phase's goal: rounds whose workers all opened a fresh store at once.
COLD_GOAL = "cold-start:rounds"


def _add(tally: _Tally, res: RunResult, cold: bool = False) -> None:
    """Fold one round's report into its phase's tally (``cold``: a cold-start round)."""
    st = res.stats
    if cold:
        tally.reached[COLD_GOAL] = tally.reached.get(COLD_GOAL, 0) + 1
    for pair, count in (st.get("coverage") or {}).get("pairs", {}).items():
        tally.reached[pair] = tally.reached.get(pair, 0) + count
    windows = (st.get("control") or {}).get("windows") or {}
    for pair, count in windows.get("pairs", {}).items():
        key = f"window:{pair}"
        tally.reached[key] = tally.reached.get(key, 0) + count
    for kind, k in ((st.get("faults") or {}).get("kinds") or {}).items():
        key = f"fault:{kind}"
        tally.reached[key] = tally.reached.get(key, 0) + int(k.get("in_flight", 0))
    tally.rounds.append({"run_id": res.run_id, "seed": res.seed, "verdict": res.verdict,
                         "ops": st.get("worker_ops", 0), "seconds": st.get("seconds", 0),
                         "violations": res.result.counts(), "reproduce": res.reproduce})


def _met(p: Phase, tally: _Tally) -> bool:
    return all(tally.reached.get(goal, 0) >= want for goal, want in p.goals)


def _steer(p: Phase, sc: Scenario, tally: _Tally) -> Scenario:
    """The phase's next scenario: each op kind of an unmet overlap goal weighs double
    (once, however many unmet goals name it)."""
    weights = dict(sc.weights)
    unmet = {kind for goal, want in p.goals
             if tally.reached.get(goal, 0) < want and "+" in goal and ":" not in goal
             for kind in goal.split("+")}
    for kind in unmet & set(weights):
        weights[kind] = min(_MAX_WEIGHT, weights[kind] * 2)
    return replace(sc, weights=weights)


def _report(store: str, backend: str, seed: int, duration: float, verdict: str,
            ph: list[Phase], tallies: dict[str, _Tally], info: StoreInfo,
            first: RunResult | None, first_after: float | None,
            seconds: float) -> dict[str, Any]:
    merged: dict[str, int] = {}
    for t in tallies.values():
        for pair, count in t.reached.items():
            if "+" in pair and ":" not in pair:
                merged[pair] = merged.get(pair, 0) + count
    kinds = [k for k in KINDS if k in info.capabilities]
    never = [{"pair": pair_name(a, b), "sentence": sentence(a, b)}
             for i, a in enumerate(kinds) for b in kinds[i:]
             if merged.get(pair_name(a, b), 0) == 0]
    phases_out: list[dict[str, Any]] = []
    for p in ph:
        t = tallies[p.name]
        phases_out.append({
            "name": p.name, "bug": p.bug, "ran": bool(t.rounds), "met": _met(p, t),
            "goals": {g: {"want": want, "reached": t.reached.get(g, 0)} for g, want in p.goals},
            "rounds": t.rounds})
    problems = [f"phase {p['name']} round {n + 1} ended {rd['verdict']}: {rd['run_id']}"
                for p in phases_out for n, rd in enumerate(p["rounds"])
                if rd["verdict"] not in ("pass", "fail")]
    if verdict != "fail" and verdict != "interrupted":
        skipped = [p["name"] for p in phases_out if not p["ran"]]
        if skipped:
            problems.append(f"{len(skipped)} phase(s) got no round ({', '.join(skipped)}): "
                            f"--duration {duration:g} is too short for every phase to run")
    cmd = ["harness", "run", "--store", store, "--seed", str(seed), "--duration", f"{duration:g}"]
    return {
        "kind": "battery", "store": store, "backend": backend, "seed": seed,
        "duration_s": duration, "seconds": round(seconds, 3), "verdict": verdict,
        "problems": problems,
        "phases": phases_out,
        "coverage": {"pairs": merged, "never": never},
        "first_violation": None if first is None else {
            "run_id": first.run_id, "after_s": round(first_after or 0.0, 3),
            "violations": first.result.counts(), "reproduce": first.reproduce},
        "reproduce": shlex.join(cmd),
    }


def _write(path: Path, data: dict[str, Any]) -> None:
    import orjson

    path.write_bytes(orjson.dumps(data, option=orjson.OPT_INDENT_2))
