"""The one function that connects the stages: scenario -> plan -> workers -> history ->
checker -> report. It spawns the worker processes, starts the run's clock once every one
has opened its store (the start barrier), checks the history while it grows (free mode:
:mod:`harness.runner.watch`), bounds and reaps them, makes the final quiescent read, and
always writes what it has, Ctrl-C and SIGTERM included.

The ``progress`` callback of :func:`run` gets ``(event, data)``:

- ``target`` ``{"note"}``: where the run's data is; ``opening`` ``{"open", "workers"}``
  while the workers open their store; ``started`` ``{"workers", "ops"}`` (ops: None when
  unlimited);
- ``progress``, about every 0.5 s: ``done`` and ``workers`` (first workers ended, of how
  many), ``ops`` (ops begun), ``elapsed_s`` and ``duration_s``, ``ops_per_s`` (recent),
  ``faults`` (applied so far), ``violations`` (kind -> count found so far), ``rss_mb`` (the
  coordinator's resident memory);
- ``violation`` ``{"kind", "session", "sentence", "events", "reproduce"}`` the moment the
  streaming check finds one (``events``: the indices of the events that prove it);
- ``final`` ``{}`` before the final read; ``check`` ``{"events"}`` when the rest is checked.
"""

from __future__ import annotations

import gc
import random
import shlex
import shutil
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import multiprocess

from harness.backends import Target, make_target
from harness.checker.result import CheckResult
from harness.errors import InputError, TargetError
from harness.history import iter_log
from harness.history_files import compress_logs
from harness.plan import Op, Plan, make_plan
from harness.redact import ENV_VAR, PG_ENV_VAR, url_secrets
from harness.report.html import WINDOWS, Timeline
from harness.result import RunResult
from harness.runner.control import Controller, controller_for
from harness.runner.history_writer import HistoryWriter
from harness.runner.launch import Handle, Launcher, LocalLauncher, stop_all
from harness.runner.nemesis import Board, Nemesis, Slots, SteppedNemesis, check_faults
from harness.runner.stop import (
    CutShort,
    Interrupted,
    check_stop,
    cuttable,
    holding_stop_signals,
    late_signals,
    stop_signals_as_interrupt,
    winding_down,
)
from harness.runner.streaming import RunStream
from harness.runner.summaries import RunSummaries
from harness.runner.supervise import Supervisor
from harness.runner.watch import Watch
from harness.runner.worker import WorkerSpec
from harness.scenario import UNLIMITED, Scenario, session_generation
from harness.stores.registry import StoreInfo, resolve

__all__ = ["GRACE_S", "READ_S", "run"]

GRACE_S = 10.0  # past the scenario's duration, stragglers (say, stuck on a lock) are killed
READ_S = 60.0  # the final read, once its store is open; past it the reader is killed


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
                      destructive: bool = False, pg_url: str = "") -> str:
    """The ``harness run`` command line that reruns this scenario with this seed. A server
    URL with a password is never written: the line reads it from its environment variable."""
    args = ["harness", "run", sc.source or "SCENARIO", "--seed", str(seed), "--store", sc.store,
            "--workers", str(sc.workers), "--ops", str(UNLIMITED if sc.ops is None else sc.ops),
            "--sessions", str(sc.sessions),
            "--duration", f"{sc.duration:g}"]
    if redis_url and not url_secrets(redis_url):
        args += ["--redis-url", redis_url]
    if pg_url and not url_secrets(pg_url):
        args += ["--pg-url", pg_url]
    if destructive:
        args.append("--allow-destructive-faults")
    if sc.control.get("enabled"):  # the same seed gives the same interleaving
        args += ["--controlled", "--strategy", str(sc.control.get("strategy", "pct"))]
    line = shlex.join(args)
    if redis_url and url_secrets(redis_url):  # never written down: the shell supplies it
        line += f' --redis-url "${{{ENV_VAR}:?the Redis URL with its password}}"'
    if pg_url and url_secrets(pg_url):
        line += f' --pg-url "${{{PG_ENV_VAR}:?the PostgreSQL URL with its password}}"'
    return line


def run(scenario: Scenario, *, reports: Path = Path("reports"), redis_url: str = "",
        progress: Progress | None = None, allow_destructive_faults: bool = False,
        pg_url: str = "") -> RunResult:
    """Run one scenario end to end and write ``reports/<run-id>/``. Raises InputError (and
    subclasses) for bad input or setup; everything after setup ends in a RunResult, a
    checker that raises included (its verdict is then unknown, with the error).
    ``allow_destructive_faults`` lets a restart fault hit an external Redis. ``redis_url``
    and ``pg_url`` (a user's server, for a run of that backend) win over the scenario's."""
    info = resolve(scenario.store)
    backend = scenario.backend or info.backend
    if backend is None:
        raise InputError(f"store {scenario.store!r} does not say its backend: set "
                         "backend = \"sqlite\", \"redis\" or \"postgres\" in the scenario")
    seed = scenario.seed if scenario.seed is not None else random.SystemRandom().randrange(10**9)
    plan = make_plan(scenario, seed, info.capabilities)
    url = {"redis": redis_url or scenario.redis.url,
           "postgres": pg_url or scenario.postgres.url}.get(backend, "")
    check_faults(plan.faults, backend, external=bool(url),
                 allow_destructive=allow_destructive_faults)
    run_id, run_dir = _make_run_dir(reports, scenario.name, seed)
    try:
        return _in_run_dir(scenario, info, backend, seed, plan, url, run_id, run_dir,
                           redis_url, progress, allow_destructive_faults, pg_url)
    except InputError:  # a setup error (the target, or no worker could open the store)
        shutil.rmtree(run_dir, ignore_errors=True)  # no half-written run directory is left
        raise


def _in_run_dir(scenario: Scenario, info: StoreInfo, backend: str, seed: int, plan: Plan,
                url: str, run_id: str, run_dir: Path, redis_url: str,
                progress: Progress | None, allow_destructive_faults: bool,
                pg_url: str = "") -> RunResult:
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
    clock = _Clock()
    reproduce = reproduce_command(scenario, seed, redis_url, allow_destructive_faults, pg_url)
    sums = RunSummaries(plan.faults, info.capabilities)
    timeline = Timeline(scenario.duration / WINDOWS)  # report.html's, folded as the run goes
    stream = RunStream(run_dir / "history", [sums, timeline], say, reproduce,
                       spill=run_dir / ".checker")
    watch = Watch(setup.launcher, stream, plan, _reader_starter(setup),
                  "list_snapshots" in info.capabilities, scenario.duration)
    with stop_signals_as_interrupt():
        with Supervisor() as supervisor, target, _controller(scenario, plan, run_dir) as ctl:
            say("target", {"note": target.note or target.url})
            try:
                reached = _run_workers(setup, ctl, clock, say, watch, allow_destructive_faults)
                check_stop()
                say("final", {})
                _final_read(setup, reached, clock, watch)
            except (KeyboardInterrupt, Interrupted):
                interrupted = True
            winding_down()  # the workers have stopped: from here a signal raises nothing
        stream.drain()
        _refuse_unopenable(sums, scenario)
        compress_logs(run_dir / "history")  # every writer has ended: the logs are the one copy
        say("check", {"events": sums.events})
        result = _check(stream)
        # from the workers' stop to the verdict: the final read, the rest of the merge, the
        # sessions still live judged (what a nightly run waits for at its end)
        verdict_s = round((time.monotonic_ns() - (clock.end_ns or 0)) / 1e9, 3) \
            if clock.end_ns else None
        workers, short = sums.account([h for h in setup.launcher.started if h.slot >= 0],
                                      [plan.length(w) for w in range(plan.workers)],
                                      scenario.min_ops, interrupted, clock.finished)
        res = RunResult(run_id, run_dir, scenario, seed, info, result, interrupted,
                        reproduce, target.note or target.url,
                        _stats(sums, supervisor, setup, clock, ctl, time.monotonic() - started)
                        | {"verdict_s": verdict_s},
                        tuple(workers), tuple(short + sums.fault_problems()))
        from harness.report import write_reports

        write_reports(res, timeline)
    return res


def _stats(sums: RunSummaries, supervisor: Supervisor, setup: _Setup, clock: _Clock,
           ctl: Controller | None, elapsed: float) -> dict[str, Any]:
    """The run's stats and report sections, from what was folded while it went on."""
    late = late_signals()
    faults = sums.faults()
    span = (clock.go_ns, clock.end_ns) if clock.go_ns and clock.end_ns else None
    return (sums.stats(elapsed)
            | ({"control": ctl.summary()} if ctl is not None else {})
            | {"resources": sums.resources(supervisor)}
            | ({"faults": faults} if faults is not None else {})
            | {"opening": sums.opening(setup.plan.workers, span,
                                      setup.scenario.open_timeout, clock.failed)}
            | {"coverage": sums.coverage()}
            | ({"late_signals": late} if late else {}))


def _check(stream: RunStream) -> CheckResult:
    """The checker's result; unknown if it raised or a second stop signal cut it short."""
    try:
        with cuttable():
            return stream.finish()
    except CutShort as cut:
        return CheckResult(None, error=f"the check was cut short by a second {cut.args[0]}")


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
                          cold_start=self.scenario.cold_start, **more)


@dataclass(slots=True)
class _Clock:
    """What the run's clock saw, filled in as the run goes (a record, so not frozen): when it
    started (the go, monotonic ns) and the workers' wait ended, and the workers that could
    not open their store (``{"process", "error"}``)."""

    go_ns: int | None = None
    end_ns: int | None = None
    finished: Any = ()  # the board's finished[slot] (harness.runner.nemesis.Board)
    failed: list[dict[str, Any]] = field(default_factory=list)



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





def _reap(launcher: Launcher, handles: list[Handle], deadline: float, say: Progress,
          board: Board | None = None, nemesis: Nemesis | None = None,
          watch: Watch | None = None) -> None:
    """Wait for every worker, killing what outlives ``deadline`` (monotonic seconds),
    applying the ``nemesis``'s faults when they are due (replacements are waited for too)
    and, with a ``watch``, checking the history as it grows and starting the readers of
    retired sessions (waited for too). Progress counts the ops the workers have begun, as
    they mark them on the ``board``."""
    live = list(handles)

    def due() -> float:  # the deadline, or the nemesis's next fault (or end) if sooner
        return deadline if nemesis is None else min(deadline, nemesis.next_due())

    while live:
        check_stop()
        wake = due()
        if watch is not None:  # merging takes time: keep to its period all the same
            wake = min(wake, watch.next_due())
        timeout = max(0.0, min(0.5, wake - time.monotonic()))
        ended = launcher.wait_any(live, timeout)
        for h in ended:
            live.remove(h)
            h.wait()
        live += nemesis.tick() if nemesis is not None else ()
        if time.monotonic() >= deadline:
            stop_all(live)
            ended += live
            live.clear()
        if watch is not None:
            watch.ended(ended)
        if board is not None and watch is not None and watch.due():
            # a stop signal is only remembered here (the loop's check_stop raises it):
            # raised mid-merge it would leave lines read but not fed, and they would be lost
            # (the merge stops where a fault or the deadline is due, and goes on after it)
            with holding_stop_signals():
                live += watch.poll(board, {h.slot for h in live if h.slot >= 0}, due())
            if watch.progress_due():
                say("progress", watch.progress(sum(h.exitcode is not None for h in handles),
                                               len(handles), sum(i + 1 for i in board.progress)))


def _run_workers(setup: _Setup, ctl: Controller | None, clock: _Clock, say: Progress,
                 watch: Watch, allow_destructive: bool = False) -> list[int]:
    """Start the workers and see them through: the start barrier (free mode), then the
    grant loop in controlled mode, else the wait loop (with the nemesis if the plan has
    faults). The run's clock (the duration, the fault schedule) starts once every worker
    has opened its store; a controlled run's starts at the spawn, since the controller
    grants the opening too. Every worker marks the op it is about to run on a shared board;
    a controlled run's trace is written whatever happens. Returns the index of the last op
    each slot began (-1: none)."""
    sc, plan, launcher = setup.scenario, setup.plan, setup.launcher
    if ctl is not None:
        clock.go_ns = time.monotonic_ns()
        launcher.go(clock.go_ns + int(sc.duration * 1e9))
    board = Board(launcher.ctx, plan.workers,
                  plan.draw.session_lifetime if plan.explicit is None and ctl is None else 0)
    clock.finished = board.finished  # which process of each slot ran to its end
    control = ctl.attach if ctl is not None else None
    specs = [setup.spec(w, w, (), 0, board=board, control=control, plan=plan)
             for w in range(plan.workers)]
    handles: list[Handle] = []
    nemesis = None
    # What this process holds before the run (a test suite's heap, when run() is called in
    # it) is frozen for the run: the collections of this process and of the forked workers
    # skip it. Beside three million objects each full collection took 0.4 s, and a fault
    # due then began or ended that much late. (A heap the caller froze is left as it is.)
    frozen = gc.get_freeze_count() == 0
    if frozen:
        gc.freeze()
    if plan.faults:  # free mode: faults at times; controlled mode: at scheduling decisions
        nemesis = _nemesis(setup, specs, handles, board, allow_destructive,
                           stepped=ctl is not None)
    try:
        for spec in specs:
            handles.append(launcher.start(spec))
            check_stop()
        if ctl is None:
            clock.failed = _barrier(setup, handles, say)
            clock.go_ns = time.monotonic_ns()
            launcher.go(clock.go_ns + int(sc.duration * 1e9))
        say("started", {"workers": len(handles), "ops": plan.total_ops})
        assert clock.go_ns is not None
        deadline = clock.go_ns / 1e9 + sc.duration + GRACE_S
        if ctl is not None:
            stepped = nemesis if isinstance(nemesis, SteppedNemesis) else None
            pin = getattr(setup.target, "pids", [])  # a managed redis-server
            with stepped or nullcontext():
                ctl.drive(handles, deadline, pin=pin, nemesis=stepped, check=check_stop)
        else:
            watch.nemesis_open, watch.nemesis = nemesis is not None, nemesis
            try:
                with nemesis or nullcontext():
                    _reap(launcher, handles, deadline, say, board, nemesis, watch)
            finally:
                watch.nemesis_open = watch.helpers_live = False
    finally:
        clock.end_ns = time.monotonic_ns()
        stop_all([*handles, *watch.started])  # a stop signal may come while readers run
        if frozen:
            gc.unfreeze()
        if ctl is not None:
            ctl.write(setup.run_dir)
    return list(board.progress)


def _await_open(launcher: Launcher, handles: list[Handle], timeout: float,
                say: Progress = lambda *_: None) -> None:
    """Wait at most ``timeout`` s until every handle has opened its store or ended,
    answering a stop signal within half a second."""
    end = time.monotonic() + timeout
    opening = list(handles)
    while opening and (left := end - time.monotonic()) > 0:
        launcher.wait_open(opening, min(0.5, left))
        check_stop()
        opening = [h for h in opening if h.opened is None and h.alive]
        say("opening", {"open": sum(h.opened is not None for h in handles),
                        "workers": len(handles)})


def _not_opened(handles: list[Handle], timeout: float) -> list[dict[str, Any]]:
    """The handles that did not open their store: each with why, its ``open`` event's
    error. One still opening is killed and its ``open`` event logged for it; one that
    ended without a word gets one that says how it ended."""
    out = []
    for h in handles:
        if h.opened is not None:
            continue
        if h.alive:
            h.kill()
            h.wait()
            error = f"did not open its store within open_timeout = {timeout:g} s"
        else:
            h.wait()
            error = next((e.error or "" for e in iter_log(h.log_path)
                          if e.f == "open" and e.type == "info"), "")
            if error:
                out.append({"process": _process_of(h), "error": error})
                continue
            error = f"ended (exit code {h.exitcode}) before its store opened"
        with HistoryWriter(h.log_path, _process_of(h)) as log:
            log.log("info", "open", None, None, error)
        out.append({"process": _process_of(h), "error": error})
    return out


def _process_of(h: Handle) -> int | str:
    """The worker number of ``h``, from its log's name (``history/<process>.jsonl``)."""
    name = Path(h.log_path).stem
    return int(name) if name.isdigit() else name


def _barrier(setup: _Setup, handles: list[Handle], say: Progress) -> list[dict[str, Any]]:
    """The start barrier: wait (``open_timeout``) for every worker to open its store.
    Returns those that did not (:func:`_not_opened`); none opened: a setup error
    (TargetError, exit 2) with the store's own message."""
    timeout = setup.scenario.open_timeout
    _await_open(setup.launcher, handles, timeout, say)
    failed = _not_opened(handles, timeout)
    if handles and len(failed) == len(handles):
        raise TargetError(f"store {setup.scenario.store!r} could not be opened: "
                          f"{failed[0]['error']}")
    return failed


def _nemesis(setup: _Setup, specs: list[WorkerSpec], handles: list[Handle], board: Board,
             allow_destructive: bool, stepped: bool = False) -> Nemesis:
    """The nemesis of a plan with faults (the controlled-mode one if ``stepped``); a killed
    slot's replacement gets a new process number and joins ``handles``."""
    launcher = setup.launcher

    def respawn(slot: int, process: int, start: int) -> Handle:
        return launcher.start(replace(specs[slot], process=process, start=start,
                                      log_path=launcher.log_path(process), patient_open=True))

    plan = setup.plan
    slots = Slots(handles, [plan.length(w) for w in range(plan.workers)], board, respawn)
    kind = SteppedNemesis if stepped else Nemesis
    return kind(setup.plan.faults, setup.target, setup.run_dir, slots, launcher.ctx,
                allow_destructive)


def _reader_starter(setup: _Setup) -> Callable[[str, tuple[Op, ...]], Handle]:
    """What starts a quiescent reader named ``name`` with ``ops``: bounded as the final
    read is (``open_timeout`` to open, then :data:`READ_S`)."""
    def start(name: str, ops: tuple[Op, ...]) -> Handle:
        limit = int((setup.scenario.open_timeout + READ_S) * 1e9)
        return setup.launcher.start(setup.spec(-1, name, ops, time.monotonic_ns() + limit,
                                               patient_open=True))

    return start


def _final_read(setup: _Setup, reached: list[int], clock: _Clock, watch: Watch) -> None:
    """A quiescent read of every session not retired yet (and its snapshots) after all
    workers stopped: :meth:`Plan.sessions`, the workers having ``reached`` these ops, from
    the first generation ``watch`` gave no reader. Bounded: its store opens within
    ``open_timeout`` (else it is killed, its ``open`` event says why, and the reason joins
    ``clock.failed``), then it reads within :data:`READ_S`."""
    ops: list[Op] = []
    for s in setup.plan.sessions(reached):
        if session_generation(s) < watch.retired_below:
            continue
        ops.append(Op("read", s))
        if "list_snapshots" in setup.store.capabilities:
            ops.append(Op("list_snapshots", s))
    timeout = setup.scenario.open_timeout
    h = setup.launcher.start(setup.spec(-1, "final", tuple(ops), time.monotonic_ns()
                                        + int((timeout + READ_S) * 1e9)))
    try:
        _await_open(setup.launcher, [h], timeout)
        clock.failed += _not_opened([h], timeout)
        _reap(setup.launcher, [h], time.monotonic() + READ_S, lambda *_: None)
    finally:
        stop_all([h])


def _refuse_unopenable(sums: RunSummaries, sc: Scenario) -> None:
    """No worker opened its store (a controlled run's workers open under control, past
    the barrier): a setup error with the store's own message."""
    error = sums.unopenable()
    if error is not None:
        raise TargetError(f"store {sc.store!r} could not be opened: {error}")
