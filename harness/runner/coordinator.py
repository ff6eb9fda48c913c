"""The one function that connects the stages: scenario -> plan -> workers -> history ->
checker -> report. It spawns and reaps the worker processes, bounds them in time, makes
the final quiescent read, and always writes what it has, Ctrl-C and SIGTERM included.
"""

from __future__ import annotations

import random
import shlex
import shutil
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import multiprocess

from harness.backends import Target, make_target
from harness.checker import check
from harness.checker.safe import check_safe
from harness.coverage import interleavings
from harness.errors import InputError, TargetError
from harness.history import Event, iter_log, merge
from harness.history_files import compress_logs, log_files
from harness.plan import Op, Plan, make_plan
from harness.redact import ENV_VAR, url_secrets
from harness.result import RunResult
from harness.runner.control import Controller, controller_for
from harness.runner.launch import Handle, Launcher, LocalLauncher, stop_all
from harness.runner.nemesis import Board, Nemesis, Slots, SteppedNemesis, check_faults, fault_summary
from harness.runner.stop import Interrupted, check_stop, stop_signals_as_interrupt
from harness.runner.supervise import Supervisor
from harness.runner.worker import WorkerSpec
from harness.scenario import UNLIMITED, Scenario
from harness.stores.registry import StoreInfo, resolve

__all__ = ["GRACE_S", "run"]

GRACE_S = 10.0  # past the scenario's duration, stragglers (say, stuck on a lock) are killed


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


def reproduce_command(sc: Scenario, seed: int, redis_url: str = "",
                      destructive: bool = False) -> str:
    """The ``harness run`` command line that reruns this scenario with this seed."""
    args = ["harness", "run", sc.source or "SCENARIO", "--seed", str(seed), "--store", sc.store,
            "--workers", str(sc.workers), "--ops", str(UNLIMITED if sc.ops is None else sc.ops),
            "--sessions", str(sc.sessions),
            "--duration", f"{sc.duration:g}"]
    if redis_url and not url_secrets(redis_url):
        args += ["--redis-url", redis_url]
    if destructive:
        args.append("--allow-destructive-faults")
    if sc.control.get("enabled"):  # the same seed gives the same interleaving
        args += ["--controlled", "--strategy", str(sc.control.get("strategy", "pct"))]
    if redis_url and url_secrets(redis_url):  # never written down: the shell supplies it
        return (shlex.join(args) + f' --redis-url "${{{ENV_VAR}:?the Redis URL with its '
                'password}"')
    return shlex.join(args)


def run(scenario: Scenario, *, reports: Path = Path("reports"), redis_url: str = "",
        progress: Progress | None = None, allow_destructive_faults: bool = False) -> RunResult:
    """Run one scenario end to end and write ``reports/<run-id>/``. Raises InputError (and
    subclasses) for bad input or setup; everything after setup ends in a RunResult, a
    checker that raises included (its verdict is then unknown, with the error).
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
    try:
        return _in_run_dir(scenario, info, backend, seed, plan, url, run_id, run_dir,
                           redis_url, progress, allow_destructive_faults)
    except InputError:  # a setup error (the target, or no worker could open the store)
        shutil.rmtree(run_dir, ignore_errors=True)  # no half-written run directory is left
        raise


def _in_run_dir(scenario: Scenario, info: StoreInfo, backend: str, seed: int, plan: Plan,
                url: str, run_id: str, run_dir: Path, redis_url: str,
                progress: Progress | None, allow_destructive_faults: bool) -> RunResult:
    """:func:`run` once its run directory exists: a setup error (InputError) raised here
    makes :func:`run` remove it."""
    namespace = f"harness:{run_id}"
    (run_dir / "scenario.toml").write_text(scenario.to_toml(), encoding="utf-8")
    (run_dir / "plan.json").write_bytes(plan.to_json())
    target = make_target(backend, run_dir, namespace, url, scenario.redis.persistence,
                         scenario.duration)
    setup = _Setup(scenario, plan, info, target, namespace, run_dir,
                   LocalLauncher(run_dir, multiprocess.get_context(scenario.start_method)))
    say = progress or (lambda _event, _data: None)
    interrupted = False
    started = time.monotonic()
    with Supervisor() as supervisor, stop_signals_as_interrupt(), target, \
            _controller(scenario, plan, run_dir) as ctl:
        say("target", {"note": target.note or target.url})
        try:
            reached = _run_workers(setup, ctl, say, allow_destructive_faults)
            check_stop()
            say("final", {})
            _final_read(setup, reached)
        except (KeyboardInterrupt, Interrupted):
            interrupted = True
    events = merge(iter_log(p) for p in log_files(run_dir / "history"))
    _refuse_unopenable(events, scenario)
    compress_logs(run_dir / "history")  # every writer has ended: the logs are the one copy
    say("check", {"events": len(events)})
    result = check_safe(check, events)
    control = {"control": ctl.trace.summary()} if ctl is not None else {}
    res = RunResult(run_id, run_dir, scenario, seed, info, result, interrupted,
                    reproduce_command(scenario, seed, redis_url, allow_destructive_faults),
                    target.note or target.url,
                    _stats(events, time.monotonic() - started) | control
                    | _chaos_stats(events, plan, supervisor)
                    | {"coverage": interleavings(events, info.capabilities).to_dict()})
    from harness.report import write_reports

    write_reports(res)
    return res


@dataclass(frozen=True, slots=True)
class _Setup:
    """What every stage of one run works with."""

    scenario: Scenario
    plan: Plan
    store: StoreInfo
    target: Target
    namespace: str
    run_dir: Path
    launcher: LocalLauncher

    def spec(self, slot: int, process: int | str, ops: tuple[Op, ...], deadline_ns: int,
             **more: Any) -> WorkerSpec:
        """The spec of a worker of this run, logging where the launcher says."""
        return WorkerSpec(slot=slot, process=process, ops=ops, store=self.store,
                          url=self.target.url, namespace=self.namespace,
                          log_path=self.launcher.log_path(process), deadline_ns=deadline_ns,
                          **more)


@contextmanager
def _controller(sc: Scenario, plan: Plan, run_dir: Path) -> Iterator[Controller | None]:
    """The controller of a controlled run (None in free mode, the default), closed after;
    its socket lives in ``run_dir``."""
    ctl = controller_for(sc, plan, run_dir)
    try:
        yield ctl
    finally:
        if ctl is not None:
            ctl.close()


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


def _reap(launcher: Launcher, handles: list[Handle], deadline: float, say: Progress,
          board: Board | None = None, nemesis: Nemesis | None = None) -> None:
    """Wait for every worker, killing what outlives ``deadline`` (monotonic seconds),
    applying the ``nemesis``'s faults when they are due (replacements are waited for too).
    Progress counts the ops the workers have begun, as they mark them on the ``board``."""
    live = list(handles)
    last = 0.0
    while live:
        check_stop()
        wake = deadline if nemesis is None else min(deadline, nemesis.next_due())
        timeout = max(0.0, min(0.5, wake - time.monotonic()))
        for h in launcher.wait_any(live, timeout):
            live.remove(h)
            h.wait()
        live += nemesis.tick() if nemesis is not None else ()
        if time.monotonic() >= deadline:
            stop_all(live)
            live.clear()
        if board is not None and time.monotonic() - last > 0.5:
            last = time.monotonic()
            say("progress", {"done": len(handles) - len(live), "workers": len(handles),
                             "ops": sum(i + 1 for i in board.progress)})


def _run_workers(setup: _Setup, ctl: Controller | None, say: Progress,
                 allow_destructive: bool = False) -> list[int]:
    """Start the workers and see them through: the grant loop in controlled mode, else the
    wait loop (with the nemesis if the plan has faults). Every worker marks the op it is
    about to run on a shared board; a controlled run's trace is written whatever happens.
    Returns the index of the last op each slot began (-1: none)."""
    sc, plan, launcher = setup.scenario, setup.plan, setup.launcher
    deadline_ns = time.monotonic_ns() + int(sc.duration * 1e9)
    board = Board(launcher.ctx, plan.workers)
    control = ctl.attach if ctl is not None else None
    specs = [setup.spec(w, w, (), deadline_ns, board=board, control=control, plan=plan)
             for w in range(plan.workers)]
    handles: list[Handle] = []
    nemesis = None
    if plan.faults:  # free mode: faults at times; controlled mode: at scheduling decisions
        nemesis = _nemesis(setup, specs, handles, board, allow_destructive,
                           stepped=ctl is not None)
    try:
        for spec in specs:
            handles.append(launcher.start(spec))
            check_stop()
        say("started", {"workers": len(handles), "ops": plan.total_ops})
        deadline = time.monotonic() + sc.duration + GRACE_S
        if ctl is not None:
            stepped = nemesis if isinstance(nemesis, SteppedNemesis) else None
            pin = getattr(setup.target, "pids", [])  # a managed redis-server
            with stepped or nullcontext():
                ctl.drive(handles, deadline, pin=pin, nemesis=stepped, check=check_stop)
        else:
            with nemesis or nullcontext():
                _reap(launcher, handles, deadline, say, board, nemesis)
    finally:
        stop_all(handles)
        if ctl is not None:
            ctl.write(setup.run_dir)
    return list(board.progress)


def _nemesis(setup: _Setup, specs: list[WorkerSpec], handles: list[Handle], board: Board,
             allow_destructive: bool, stepped: bool = False) -> Nemesis:
    """The nemesis of a plan with faults (the controlled-mode one if ``stepped``); a killed
    slot's replacement gets a new process number and joins ``handles``."""
    launcher = setup.launcher

    def respawn(slot: int, process: int, start: int) -> Handle:
        return launcher.start(replace(specs[slot], process=process, start=start,
                                      log_path=launcher.log_path(process)))

    plan = setup.plan
    slots = Slots(handles, [plan.length(w) for w in range(plan.workers)], board, respawn)
    kind = SteppedNemesis if stepped else Nemesis
    return kind(setup.plan.faults, setup.target, setup.run_dir, slots, launcher.ctx,
                allow_destructive)


def _final_read(setup: _Setup, reached: list[int]) -> None:
    """A quiescent read of every session (and its snapshots) after all workers stopped:
    :meth:`Plan.sessions`, the workers having ``reached`` these ops."""
    ops: list[Op] = []
    for s in setup.plan.sessions(reached):
        ops.append(Op("read", s))
        if "list_snapshots" in setup.store.capabilities:
            ops.append(Op("list_snapshots", s))
    h = setup.launcher.start(setup.spec(-1, "final", tuple(ops), time.monotonic_ns() + int(120e9)))
    try:
        _reap(setup.launcher, [h], time.monotonic() + 120, lambda *_: None)
    finally:
        stop_all([h])
