"""The one function that connects the stages: scenario -> plan -> workers -> history ->
checker -> report. It spawns and reaps the worker processes, bounds them in time, makes
the final quiescent read, and always writes what it has, Ctrl-C and SIGTERM included.
"""

from __future__ import annotations

import random
import shlex
import signal
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext
from dataclasses import replace
from pathlib import Path
from typing import Any

import multiprocess

from harness.backends import Target, make_target
from harness.checker import check
from harness.errors import InputError, TargetError
from harness.history import Event, merge, read_log, write_history
from harness.plan import Op, Plan, make_plan
from harness.result import RunResult
from harness.runner.control import control_stats, controller_for
from harness.runner.nemesis import Board, Nemesis, Slots, SteppedNemesis, check_faults, fault_summary
from harness.runner.supervise import Supervisor
from harness.runner.worker import WorkerSpec, log_path, run_worker
from harness.scenario import Scenario
from harness.stores.registry import StoreInfo, resolve

__all__ = ["GRACE_S", "run"]

GRACE_S = 10.0  # past the scenario's duration, stragglers (say, stuck on a lock) are killed


class Interrupted(Exception):
    """SIGTERM (or SIGINT) asked the run to stop; what exists is still checked and written."""


Progress = Callable[[str, dict[str, Any]], None]


def _make_run_dir(reports: Path, name: str, seed: int) -> tuple[str, Path]:
    base = f"{time.strftime('%Y%m%d-%H%M%S')}-{name}-seed{seed}"
    try:
        reports.mkdir(parents=True, exist_ok=True)
        for n in range(1000):
            run_id = base if n == 0 else f"{base}-{n}"
            try:
                (reports / run_id).mkdir()
            except FileExistsError:
                continue
            (reports / run_id / "history").mkdir()
            return run_id, reports / run_id
    except OSError as err:
        raise TargetError(f"cannot write run directory under {reports}: {err.strerror}") from None
    raise TargetError(f"too many runs named {base} in {reports}")


_STOP: list[str] = []  # the signal that asked the run to stop, once one has
_HOLD = [False]  # while a worker is forked: remember a stop signal, raise nothing


def _check_stop() -> None:
    """Raise Interrupted if a stop signal came, even if its exception was swallowed."""
    if _STOP:
        raise Interrupted(_STOP[0])


@contextmanager
def _stop_signals_as_interrupt() -> Iterator[None]:
    """SIGTERM and SIGHUP raise Interrupted, SIGINT KeyboardInterrupt; all three are
    remembered for :func:`_check_stop`.

    Remembered because Python runs a signal handler wherever the main thread happens to be,
    and some places drop its exception and go on: a Ctrl-C that landed while a worker was
    forked raised inside ``logging``'s at-fork hook, was printed as "Exception ignored", and
    the run carried on to its end (2 runs in 15 in the Ctrl-C test; now one landing during
    a fork is only remembered, see :func:`_spawn`); a restart fault catches ``Exception``
    while it waits for the server. The coordinator's loops check.
    SIGHUP too: a closed terminal or ssh session must still leave a checked report."""
    def handler(signum: int, frame: Any) -> None:
        name = signal.Signals(signum).name
        if not _STOP:
            _STOP.append(name)
        if _HOLD[0]:
            return
        if signum == signal.SIGINT:  # as Python's own handler: Ctrl-C before the workers
            raise KeyboardInterrupt  # start still ends as click's "Aborted!"
        raise Interrupted(name)

    _STOP.clear()
    old = {sig: signal.signal(sig, handler)
           for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)}
    try:
        yield
    finally:
        for sig, h in old.items():
            signal.signal(sig, h)
        _STOP.clear()


def reproduce_command(sc: Scenario, seed: int, redis_url: str = "",
                      destructive: bool = False) -> str:
    """The ``harness run`` command line that reruns this scenario with this seed."""
    args = ["harness", "run", sc.source or "SCENARIO", "--seed", str(seed), "--store", sc.store,
            "--workers", str(sc.workers), "--ops", str(sc.ops), "--sessions", str(sc.sessions),
            "--duration", f"{sc.duration:g}"]
    if redis_url:
        args += ["--redis-url", redis_url]
    if destructive:
        args.append("--allow-destructive-faults")
    if sc.control.get("enabled"):  # the same seed gives the same interleaving
        args += ["--controlled", "--strategy", str(sc.control.get("strategy", "pct"))]
    return shlex.join(args)


def run(scenario: Scenario, *, reports: Path = Path("reports"), redis_url: str = "",
        progress: Progress | None = None, allow_destructive_faults: bool = False) -> RunResult:
    """Run one scenario end to end and write ``reports/<run-id>/``. Raises InputError (and
    subclasses) for bad input or setup; everything after setup ends in a RunResult.
    ``allow_destructive_faults`` lets a restart fault hit an external Redis."""
    info = resolve(scenario.store)
    backend = scenario.backend or info.backend
    if backend is None:
        raise InputError(f"store {scenario.store!r} does not say its backend: set "
                         "backend = \"sqlite\" or \"redis\" in the scenario")
    seed = scenario.seed if scenario.seed is not None else random.SystemRandom().randrange(10**9)
    plan = make_plan(scenario, seed, info.capabilities)
    url = redis_url or scenario.redis.url
    check_faults(plan.faults, backend, external=backend == "redis" and bool(url),
                 allow_destructive=allow_destructive_faults)
    run_id, run_dir = _make_run_dir(reports, scenario.name, seed)
    namespace = f"harness:{run_id}"
    (run_dir / "scenario.toml").write_text(scenario.to_toml(), encoding="utf-8")
    (run_dir / "plan.json").write_bytes(plan.to_json())
    target = make_target(backend, run_dir, namespace, url, scenario.redis.persistence)
    say = progress or (lambda _event, _data: None)
    interrupted = False
    started = time.monotonic()
    with Supervisor() as supervisor, _stop_signals_as_interrupt(), target:
        say("target", {"note": target.note or target.url})
        try:
            _run_workers(scenario, plan, info, target, namespace, run_dir, say,
                         allow_destructive_faults)
            _check_stop()
            say("final", {})
            _final_read(scenario, plan, info, target, namespace, run_dir)
        except (KeyboardInterrupt, Interrupted):
            interrupted = True
    events = merge(read_log(p) for p in sorted((run_dir / "history").glob("*.jsonl")))
    _refuse_unopenable(events, scenario)
    write_history(run_dir / "history.jsonl", events)
    say("check", {"events": len(events)})
    result = check(events)
    res = RunResult(run_id, run_dir, scenario, seed, info, result, interrupted,
                    reproduce_command(scenario, seed, redis_url, allow_destructive_faults),
                    target.note or target.url,
                    _stats(events, time.monotonic() - started) | control_stats(run_dir)
                    | _chaos_stats(events, plan, supervisor))
    from harness.report import write_reports

    write_reports(res)
    return res


def _refuse_unopenable(events: list[Event], sc: Scenario) -> None:
    opens = [e for e in events if e.f == "open"]
    if opens and not any(e.f in ("append", "read") for e in events):
        raise TargetError(f"store {sc.store!r} could not be opened: {opens[0].error}")


def _chaos_stats(events: list[Event], plan: Plan, supervisor: Supervisor) -> dict[str, Any]:
    """Where the faults landed, and what every process used (and whether any is left)."""
    out = {"resources": supervisor.report(events)}
    if plan.faults:
        out["faults"] = fault_summary(events, plan.faults)
    return out


def _stats(events: list[Event], elapsed: float) -> dict[str, Any]:
    by_type: dict[str, int] = {}
    for e in events:
        if e.type != "invoke" and e.process != "nemesis":  # faults are not completions
            by_type[e.type] = by_type.get(e.type, 0) + 1
    invokes = sum(1 for e in events if e.type == "invoke")
    # the final quiescent read is the harness's, not the workload's: counted apart
    final = sum(1 for e in events if e.type == "invoke" and e.process == "final")
    return {"events": len(events), "ops": invokes, "worker_ops": invokes - final,
            "final_ops": final, "completions": by_type, "seconds": round(elapsed, 3)}


def _spawn(ctx: Any, spec: WorkerSpec) -> Any:
    """Start a worker. A stop signal that lands meanwhile is only remembered: raised there,
    it would come out of an at-fork hook, which prints it and drops it. The caller's next
    :func:`_check_stop` raises it, once the new process is in its list to be reaped."""
    _HOLD[0] = True
    try:
        p = ctx.Process(target=run_worker, args=(spec,), name=f"harness-worker-{spec.process}")
        p.start()
    finally:
        _HOLD[0] = False
    return p


def _reap(procs: list[Any], deadline: float, say: Progress, run_dir: Path,
          nemesis: Nemesis | None = None) -> None:
    """Wait for every worker, killing what outlives ``deadline`` (monotonic seconds),
    applying the ``nemesis``'s faults when they are due (replacements are waited for too)."""
    from multiprocess.connection import wait

    live = {p.sentinel: p for p in procs}
    count = _OpCounter(run_dir)
    last = 0.0
    while live:
        _check_stop()
        wake = deadline if nemesis is None else min(deadline, nemesis.next_due())
        timeout = max(0.0, min(0.5, wake - time.monotonic()))
        for s in wait(list(live), timeout=timeout):
            live.pop(s).join()
        for p in nemesis.tick() if nemesis is not None else ():
            live[p.sentinel] = p
        if time.monotonic() >= deadline:
            _kill_all(list(live.values()))
            live.clear()
        if time.monotonic() - last > 0.5:
            last = time.monotonic()
            say("progress", {"done": len(procs) - len(live), "workers": len(procs),
                             "ops": count()})


class _OpCounter:
    """Counts invokes in the growing worker logs, reading only what is new each time."""

    def __init__(self, run_dir: Path) -> None:
        self.dir = run_dir / "history"
        self.seen: dict[Path, tuple[int, int]] = {}

    def __call__(self) -> int:
        for p in self.dir.glob("*.jsonl"):
            off, n = self.seen.get(p, (0, 0))
            try:
                with open(p, "rb") as fh:
                    fh.seek(off)
                    data = fh.read()
            except OSError:
                continue
            end = data.rfind(b"\n") + 1
            self.seen[p] = (off + end, n + data.count(b'"type":"invoke"', 0, end))
        return sum(n for _, n in self.seen.values())


def _kill_all(procs: list[Any]) -> None:
    for p in procs:
        if p.is_alive():
            p.kill()
    for p in procs:
        p.join()


def _run_workers(sc: Scenario, plan: Plan, info: StoreInfo, target: Target, ns: str,
                 run_dir: Path, say: Progress, allow_destructive: bool = False) -> None:
    ctx = multiprocess.get_context(sc.start_method)
    deadline_ns = time.monotonic_ns() + int(sc.duration * 1e9)
    specs = [WorkerSpec(slot=w, process=w, ops=ops, store=info, url=target.url, namespace=ns,
                        log_path=log_path(run_dir, w), deadline_ns=deadline_ns)
             for w, ops in enumerate(plan.streams)]
    procs: list[Any] = []
    ctl = controller_for(sc, plan)  # controlled mode; None in free mode (the default)
    if ctl is not None:
        specs = [replace(s, control=ctl.attach) for s in specs]
    nemesis = None
    if plan.faults:  # free mode: faults at times; controlled mode: at scheduling decisions
        specs, nemesis = _nemesis(plan, specs, procs, ctx, target, run_dir, allow_destructive,
                                  stepped=ctl is not None)
    try:
        for spec in specs:
            procs.append(_spawn(ctx, spec))
            _check_stop()
        say("started", {"workers": len(procs), "ops": plan.total_ops})
        if ctl is not None:
            stepped = nemesis if isinstance(nemesis, SteppedNemesis) else None
            with stepped or nullcontext():
                ctl.drive(procs, time.monotonic() + sc.duration + GRACE_S,
                          pin=getattr(target, "pids", []),  # a managed redis-server
                          nemesis=stepped, check=_check_stop)
        elif nemesis is None:
            _reap(procs, time.monotonic() + sc.duration + GRACE_S, say, run_dir)
        else:
            with nemesis:
                _reap(procs, time.monotonic() + sc.duration + GRACE_S, say, run_dir, nemesis)
    finally:
        _kill_all(procs)
        if ctl is not None:
            ctl.write(run_dir)
            ctl.close()


def _nemesis(plan: Plan, specs: list[WorkerSpec], procs: list[Any], ctx: Any, target: Target,
             run_dir: Path, allow_destructive: bool,
             stepped: bool = False) -> tuple[list[WorkerSpec], Nemesis]:
    """The worker specs, now sharing a board, and the nemesis of a plan with faults (the
    controlled-mode one if ``stepped``); a killed slot's replacement gets a new process
    number."""
    board = Board(ctx, len(specs))
    specs = [replace(s, board=board) for s in specs]

    def respawn(slot: int, process: int, start: int) -> Any:
        return _spawn(ctx, replace(specs[slot], process=process, start=start,
                                   log_path=log_path(run_dir, process)))

    slots = Slots(procs, [len(s) for s in plan.streams], board, respawn)
    kind = SteppedNemesis if stepped else Nemesis
    return specs, kind(plan.faults, target, run_dir, slots, ctx, allow_destructive)


def _final_read(sc: Scenario, plan: Plan, info: StoreInfo, target: Target, ns: str,
                run_dir: Path) -> None:
    """A quiescent read of every session (and its snapshots) after all workers stopped."""
    ops: list[Op] = []
    for s in plan.sessions:
        ops.append(Op("read", s))
        if "list_snapshots" in info.capabilities:
            ops.append(Op("list_snapshots", s))
    spec = WorkerSpec(slot=-1, process="final", ops=tuple(ops), store=info, url=target.url,
                      namespace=ns, log_path=log_path(run_dir, "final"),
                      deadline_ns=time.monotonic_ns() + int(120e9))
    p = _spawn(multiprocess.get_context(sc.start_method), spec)
    try:
        _reap([p], time.monotonic() + 120, lambda *_: None, run_dir)
    finally:
        _kill_all([p])


