"""The ``harness`` command: run, check, stores.

Exit codes (docs/design.md): 0 ran and no violation; 1 violations found; 2 bad input or setup,
with a one-line reason and no traceback.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from harness.errors import HarnessError, InputError

__all__ = ["main"]

err_console = Console(stderr=True, highlight=False, soft_wrap=True)


def _fail(msg: str, code: int = 2) -> None:
    click.echo(f"harness: error: {msg}", err=True)
    sys.exit(code)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="harness")
def cli() -> None:
    """Multi-process chaos and concurrency stress harness for the memory stores of LLM
    agents. Exit codes: 0 no violation, 1 violations found, 2 bad input or setup."""


@cli.command()
@click.argument("scenario", metavar="SCENARIO")
@click.option("--seed", type=click.IntRange(min=0), help="Seed of the plan (default: the "
              "scenario's, else a random one, printed so the run can be reproduced).")
@click.option("--workers", type=click.IntRange(min=1), help="Worker processes.")
@click.option("--ops", type=click.IntRange(min=0), help="Operations per worker.")
@click.option("--sessions", type=click.IntRange(min=1), help="Sessions shared by the workers.")
@click.option("--duration", type=click.FloatRange(min=0, min_open=True),
              help="Seconds before remaining work is stopped.")
@click.option("--store", "store", metavar="SPEC",
              help="Built-in store name (see `harness stores`) or package.module:factory.")
@click.option("--redis-url", metavar="URL", default="",
              help="Use this external Redis (keys under a run namespace, never flushed) "
                   "instead of starting a redis-server.")
@click.option("--allow-destructive-faults", is_flag=True, help="Let faults that destroy "
              "server state (restart) run against the external --redis-url; refused without.")
@click.option("--reports", type=click.Path(file_okay=False, path_type=Path),
              default=Path("reports"), show_default=True, help="Where run directories go.")
@click.option("-q", "--quiet", is_flag=True, help="No progress bar.")
@click.option("--controlled", is_flag=True, help="Controlled mode: one worker steps at a "
              "time, at every SQL statement or Redis command, in an order drawn from the seed.")
@click.option("--strategy", type=click.Choice(["pct", "random", "rr"]),
              help="Controlled mode's stepping strategy (default pct); implies --controlled.")
@click.option("--schedules", type=click.IntRange(min=1), help="Controlled mode: try seeds "
              "N, N+1, ... until one finds a violation, at most this many; implies --controlled.")
def run(scenario: str, seed: int | None, workers: int | None, ops: int | None,
        sessions: int | None, duration: float | None, store: str | None, redis_url: str,
        reports: Path, quiet: bool, controlled: bool, strategy: str | None,
        schedules: int | None, allow_destructive_faults: bool = False) -> None:
    """Run SCENARIO (a TOML file): real worker processes against a real store, then check
    the history. Writes reports/<run-id>/ and prints the command that reproduces it."""
    from harness.report import print_run
    from harness.runner.coordinator import run as run_scenario
    from harness.scenario import load_scenario

    try:
        sc = load_scenario(scenario).with_overrides(
            seed=seed, workers=workers, ops=ops, sessions=sessions, duration=duration,
            store=store)
        sc = _with_control(sc, controlled, strategy, schedules)
        with _progress(quiet) as say:
            if sc.control.get("enabled"):
                res = _search(sc, reports, redis_url, say, allow_destructive_faults)
            else:
                res = run_scenario(sc, reports=reports, redis_url=redis_url, progress=say,
                                   allow_destructive_faults=allow_destructive_faults)
    except InputError as err:
        _fail(str(err))
    except HarnessError as err:
        _fail(str(err))
    print_run(res)
    sys.exit(res.exit_code)


def _with_control(sc: Any, controlled: bool, strategy: str | None,
                  schedules: int | None) -> Any:
    """The scenario with the command line's controlled-mode options applied."""
    if not (controlled or strategy or schedules):
        return sc
    control = {**sc.control, "enabled": True}
    if strategy:
        control["strategy"] = strategy
    if schedules:
        control["schedules"] = schedules
    return sc.with_overrides(control=control)


def _search(sc: Any, reports: Path, redis_url: str, say: Any, destructive: bool = False) -> Any:
    """Controlled runs over seeds N, N+1, ... until a violation (``[control] schedules``)."""
    import random

    from harness.replay import search
    from harness.scenario import control_spec

    spec = control_spec(sc)
    if sc.seed is None:
        sc = sc.with_overrides(seed=random.SystemRandom().randrange(10**9))

    def attempt(i: int, res: Any) -> None:
        if spec.schedules > 1:
            c = res.stats.get("control", {})
            verdict = ", ".join(f"{k} x{n}" for k, n in res.result.counts().items())
            err_console.print(f"schedule {i + 1}/{spec.schedules}: seed {res.seed}, "
                              f"{spec.strategy}, {c.get('decisions', 0)} steps: "
                              f"{verdict or 'no violation'}")

    return search(sc, schedules=spec.schedules, reports=reports, redis_url=redis_url,
                  progress=say, on_attempt=attempt, allow_destructive_faults=destructive)


class _progress:
    """A progress bar on stderr fed by the coordinator's progress events."""

    def __init__(self, quiet: bool) -> None:
        self.quiet = quiet or not err_console.is_terminal
        self.bar = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                            TimeElapsedColumn(), console=err_console, transient=True)
        self.task: Any = None

    def __enter__(self) -> Callable[[str, dict[str, Any]], None]:
        if not self.quiet:
            self.bar.start()
        return self.say

    def say(self, event: str, data: dict[str, Any]) -> None:
        if event == "target":
            err_console.print(f"target: {data['note']}")
        elif event == "started" and not self.quiet:
            self.task = self.bar.add_task(f"{data['workers']} workers", total=data["ops"])
        elif event == "progress" and self.task is not None:
            self.bar.update(self.task, completed=data["ops"])
        elif event == "check" and not self.quiet:
            self.bar.stop()
            err_console.print(f"checking {data['events']} events…")

    def __exit__(self, *exc: object) -> None:
        self.bar.stop()


@cli.command("check")
@click.argument("path", metavar="RUN_DIR_OR_HISTORY")
@click.option("--exact", is_flag=True, help="Also search for a linearization per session.")
@click.option("--budget", type=float, default=30.0, show_default=True,
              help="Seconds for the exact search; past it the verdict is unknown.")
def check_cmd(path: str, exact: bool, budget: float) -> None:
    """Re-run the checker over a stored history (a newer checker on an old run)."""
    from harness.checker import check
    from harness.checker.safe import check_safe
    from harness.history import read_history
    from harness.report import check_dict, print_check, write_json

    try:
        events = read_history(path)
    except HarnessError as err:
        _fail(str(err))
    result = check_safe(check, events, exact=exact, budget_s=budget)
    print_check(result)
    p = Path(path)
    if p.is_dir():
        write_json(p / "recheck.json", check_dict(result))
    sys.exit(0 if result.valid is True else 1)


@cli.command("stores")
def stores_cmd() -> None:
    """List the built-in stores, one line each."""
    from harness.stores import BUILTINS

    width = max(len(s) for s in BUILTINS)
    for name, info in BUILTINS.items():
        caught = f"  [caught as {info.expected}]" if info.expected else ""
        click.echo(f"{name:<{width}}  {info.backend:<6}  {info.description}{caught}")


_RUN_DIR = click.Path(file_okay=False, exists=True, path_type=Path)


@cli.command("replay")
@click.argument("run_dir", type=_RUN_DIR)
@click.option("--from", "source", type=click.Choice(["trace", "seed"]), default="trace",
              show_default=True, help="Follow the recorded grants, or draw them again from "
              "the seed.")
@click.option("--runs", type=click.IntRange(min=1), default=1, show_default=True,
              help="Replay this many times, comparing each with the original.")
@click.option("--redis-url", metavar="URL", default="", help="As for `run`.")
@click.option("--reports", type=click.Path(file_okay=False, path_type=Path),
              default=Path("reports"), show_default=True, help="Where run directories go.")
def replay_cmd(run_dir: Path, source: str, runs: int, redis_url: str, reports: Path) -> None:
    """Run a controlled run again from its trace (or seed) and say how faithfully it
    replays: the same history up to times, the same violations. Exit code as for `run`."""
    from harness.replay import compare_runs, replay
    from harness.report import print_run, write_json

    faithful = 0
    try:
        for i in range(runs):
            res = replay(run_dir, source=source, reports=reports, redis_url=redis_url)
            fid = compare_runs(run_dir, res.run_dir)
            write_json(res.run_dir / "fidelity.json",
                       {"original": str(run_dir), "source": source, **fid.to_dict()})
            faithful += fid.faithful
            click.echo(f"replay {i + 1}/{runs} from the {source}: {res.run_dir}")
            click.echo(f"  {'faithful' if fid.faithful else 'NOT FAITHFUL'}: {fid.line()}")
    except HarnessError as err:
        _fail(str(err))
    click.echo(f"fidelity: {faithful}/{runs} replays gave the same history and violations")
    print_run(res)
    sys.exit(res.exit_code)


@cli.command("shrink")
@click.argument("run_dir", type=_RUN_DIR)
@click.option("--kind", help="The violation kind to keep (default: the one the store is "
              "known for, else the run's most frequent).")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path),
              help="Where repro.toml and the test go (default: RUN_DIR).")
@click.option("--max-runs", type=click.IntRange(min=1), default=300, show_default=True,
              help="At most this many candidate runs.")
@click.option("--budget", type=click.FloatRange(min=1), default=300.0, show_default=True,
              help="Seconds of shrinking at most.")
@click.option("--redis-url", metavar="URL", default="", help="As for `run`.")
def shrink_cmd(run_dir: Path, kind: str | None, out: Path | None, max_runs: int,
               budget: float, redis_url: str) -> None:
    """Minimize a failing run (faults, workers, ops, sessions, scheduling steps) while it
    still fails with the same violation kind; write repro.toml and test_repro_<kind>.py."""
    from harness.shrink import shrink

    try:
        r = shrink(run_dir, kind=kind, out=out, max_runs=max_runs, budget_s=budget,
                   redis_url=redis_url, say=lambda m: err_console.print(m))
    except HarnessError as err:
        _fail(str(err))
    o, c = r.original, r.case
    click.echo(f"{r.kind}: {len(o.streams)} workers, {o.ops} ops, {o.sessions} sessions, "
               f"{len(o.trace)} steps -> {len(c.streams)} workers, {c.ops} ops, "
               f"{c.sessions} sessions, {len(c.trace)} steps"
               + (f", {len(o.faults)} -> {len(c.faults)} faults" if o.faults else "")
               + f" ({r.runs} runs, {r.seconds:.1f} s)")
    click.echo(f"wrote {r.repro}\nwrote {r.test}")
    if r.reference is not None:
        click.echo(f"on the reference store {r.reference!r} it "
                   f"{'passes' if r.reference_passes else 'STILL FAILS'}")


def main(argv: list[str] | None = None) -> None:
    """Console-script entry point."""
    cli.main(args=argv, prog_name="harness")
