"""The ``harness`` command: run, check, replay, shrink, stores, clean.

Exit codes (docs/design.md): 0 ran and no violation; 1 violations found; 2 bad input or setup,
with a one-line reason on stderr and no traceback; 3 the run proves nothing (incomplete: a
worker crashed or could not open its store, fewer ops than ``min_ops``, a fault failed;
interrupted by a stop signal; or the verdict is unknown: the check did not finish);
130 interrupted by Ctrl-C (SIGINT) before a verdict existed (while the plan was built,
say), so nothing is judged.

Output: the verdict is the exit code, and the reports on disk are complete before anything
is printed. A reader that closes the pipe early (``harness run ... | head -1``) does not
change the exit code; stdout that cannot be written for another reason (``> /dev/full``,
an I/O error) is exit 2 with one line on stderr, since the output asked for was lost.
"""

from __future__ import annotations

import contextlib
import errno
import math
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, NoReturn, TypeVar

import click
from rich.console import Console

from harness import limits
from harness.errors import HarnessError
from harness.scenario_control import STRATEGIES

__all__ = ["main"]

err_console = Console(stderr=True, highlight=False, soft_wrap=True)

#: The exit code of a run interrupted by Ctrl-C before it had a verdict (128 + SIGINT).
EXIT_INTERRUPTED = 130
#: The exit code of a verdict that proves nothing (harness.result.EXIT_CODES).
EXIT_UNKNOWN = 3


def _say(msg: str) -> None:
    """One line on stderr; a stderr that cannot be written is left alone (the exit code
    still tells)."""
    from harness.redact import scrub

    with contextlib.suppress(OSError):  # a password a driver quoted is never shown
        click.echo("harness: " + " ".join(scrub(msg).split()), err=True)


def _fail(msg: str, code: int = 2) -> NoReturn:
    _say(f"error: {msg}")
    sys.exit(code)


def _silence_stdout() -> None:
    """Point stdout at /dev/null, so the interpreter's own flush at exit finds nothing to
    complain about (it would print "Exception ignored" and exit 120)."""
    try:
        fd = sys.stdout.fileno()
    except (AttributeError, OSError, ValueError):  # not a real file (click's test runner)
        return
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, fd)
    os.close(null)


def _output_failed(err: OSError, code: int) -> int:
    """The exit code once writing stdout raised ``err``: the verdict's own ``code`` when
    the reader went away (EPIPE), else 2 with one line."""
    _silence_stdout()
    if isinstance(err, BrokenPipeError) or err.errno == errno.EPIPE:
        return code
    _say(f"error: cannot write the output to stdout: {err.strerror or err}")
    return 2


def _finish(show: Callable[[], None], code: int) -> NoReturn:
    """Print the result (``show``) and exit ``code``, keeping the output rules of the module
    docstring."""
    try:
        show()
        sys.stdout.flush()
    except OSError as err:
        code = _output_failed(err, code)
    sys.exit(code)


class _Stdout(Console):
    """The console of the summaries. Rich's own answer to a closed pipe is SystemExit(1),
    which reads as "violations found"; this one raises BrokenPipeError for :func:`_finish`."""

    def on_broken_pipe(self) -> None:
        raise BrokenPipeError(errno.EPIPE, "Broken pipe")


def _stdout() -> Console:
    return _Stdout(highlight=False, soft_wrap=True)


class _Seconds(click.FloatRange):
    """A finite number of seconds in a range (click's FloatRange lets ``nan`` through)."""

    name = "seconds"

    def convert(self, value: Any, param: click.Parameter | None,
                ctx: click.Context | None) -> Any:
        rv = super().convert(value, param, ctx)
        if not math.isfinite(rv):
            self.fail(f"{value!r} is not a finite number of seconds", param, ctx)
        return rv


class _Ops(click.IntRange):
    """Ops per worker: a non-negative integer or ``unlimited``."""

    name = "ops"

    def convert(self, value: Any, param: click.Parameter | None,
                ctx: click.Context | None) -> Any:
        if value == "unlimited":
            return value
        return super().convert(value, param, ctx)


def _redis_url(ctx: click.Context, param: click.Parameter, value: str) -> str:
    """``--redis-url``, refused here if redis-py would refuse it (before anything starts)."""
    from harness.redact import remember
    from harness.scenario import redis_url_problem

    remember(value)  # from now on its password is scrubbed from what this process says
    problem = redis_url_problem(value) if value else None
    if problem:
        raise click.BadParameter(problem, ctx, param)
    return value


def _pg_url(ctx: click.Context, param: click.Parameter, value: str) -> str:
    """``--pg-url``: remembered as a secret at once, refused unless it is a PostgreSQL URL."""
    from harness.redact import redact_url, remember

    remember(value)
    if value and not value.startswith(("postgresql://", "postgres://")):
        raise click.BadParameter(f"must start with postgresql:// (got {redact_url(value)!r})",
                                 ctx, param)
    return value


F = TypeVar("F", bound=Callable[..., Any])


def _pg_option(help_text: str = "As for `run`.") -> Callable[[F], F]:
    return click.option("--pg-url", metavar="URL", default="", callback=_pg_url,
                        envvar="HARNESS_PG_URL", help=help_text)


class _Harness(click.Group):
    """The command group; its :meth:`main` keeps the exit codes of the module docstring
    whatever is raised: click's usage errors become one line and exit 2 (click prints
    three and its FileError exits 1), Ctrl-C exits 130, an unexpected exception one line
    and exit 2 rather than a traceback and exit 1 (which reads as "violations found")."""

    def main(self, args: Any = None, prog_name: str | None = None,
             complete_var: str | None = None, standalone_mode: bool = True,
             **extra: Any) -> Any:
        try:
            rv = super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
            code = rv if isinstance(rv, int) else 0
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 2)
        except click.exceptions.NoArgsIsHelpError as exc:  # no command: usage, on stdout
            click.echo(exc.ctx.get_help())
            code = 2
        except click.ClickException as exc:
            hint = (f" (see `{exc.ctx.command_path} -h`)"
                    if isinstance(exc, click.UsageError) and exc.ctx else "")
            _say(f"error: {exc.format_message()}{hint}")
            code = 2
        except (click.Abort, KeyboardInterrupt):
            _say("interrupted (SIGINT) before a verdict: nothing was judged")
            code = EXIT_INTERRUPTED
        except OSError as err:
            code = _output_failed(err, 2) if _is_stdout_error(err) else _internal(err)
        except Exception as err:  # the last resort; the fuzz test asserts it never fires
            code = _internal(err)
        try:
            sys.stdout.flush()
        except OSError as err:
            code = _output_failed(err, code)
        if standalone_mode:
            sys.exit(code)
        return code


def _is_stdout_error(err: OSError) -> bool:
    return err.errno in (errno.EPIPE, errno.ENOSPC, errno.EIO) and err.filename is None


def _internal(err: BaseException) -> int:
    _say(f"internal error: {type(err).__name__}: {err} (a bug in harness: please report it "
         "with the command that caused it)")
    return 2


@click.group(cls=_Harness, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="harness")
def cli() -> None:
    """Multi-process chaos and concurrency stress harness for the memory stores of LLM
    agents.

    \b
    Exit codes: 0 no violation, 1 violations found, 2 bad input or setup (one line on
    stderr), 3 the run proves nothing (incomplete: a worker crashed or could not open,
    fewer ops than min_ops, a fault failed; interrupted by SIGINT, SIGTERM or SIGHUP; or
    unknown: the check did not finish), 130 interrupted by Ctrl-C before a verdict.
    A reader closing the pipe early (| head) leaves the exit code as it was; stdout
    that cannot be written (/dev/full) is exit 2."""


@cli.command()
@click.argument("scenario", metavar="[SCENARIO]", required=False)
@click.option("--seed", type=click.IntRange(min=0, max=limits.MAX_SEED), help="Seed of the plan (default: the "
              "scenario's, else a random one, printed so the run can be reproduced).")
@click.option("--workers", type=click.IntRange(min=1), help="Worker processes.")
@click.option("--ops", type=_Ops(min=0), help="Operations per worker, or 'unlimited' (as "
              "many as fit in the duration; what --duration without --ops means in free mode).")
@click.option("--sessions", type=click.IntRange(min=1), help="Sessions shared by the workers.")
@click.option("--duration", type=_Seconds(min=0, min_open=True, max=limits.MAX_DURATION_S),
              help="Seconds before remaining work is stopped.")
@click.option("--store", "store", metavar="SPEC",
              help="Built-in store name (see `harness stores`) or package.module:factory.")
@click.option("--redis-url", metavar="URL", default="", callback=_redis_url,
              envvar="HARNESS_REDIS_URL",
              help="Use this external Redis (keys under a run namespace, never flushed) "
                   "instead of starting a redis-server; default $HARNESS_REDIS_URL, the "
                   "way to keep a password off the command line.")
@_pg_option("Use this external PostgreSQL (the run's tables in a schema of its own, "
            "dropped at the end) instead of starting a server; default $HARNESS_PG_URL.")
@click.option("--allow-destructive-faults", is_flag=True, help="Let faults that destroy "
              "server state (restart) run against an external --redis-url or --pg-url; "
              "refused without.")
@click.option("--reports", type=click.Path(file_okay=False, path_type=Path),
              default=Path("reports"), show_default=True, help="Where run directories go.")
@click.option("-q", "--quiet", is_flag=True, help="No progress bar.")
@click.option("--controlled", is_flag=True, help="Controlled mode: one worker steps at a "
              "time, at every SQL statement or Redis command, in an order drawn from the seed.")
@click.option("--strategy", type=click.Choice(list(STRATEGIES)),
              help="Controlled mode's stepping strategy (default pct); implies --controlled.")
@click.option("--schedules", type=click.IntRange(min=1), help="Controlled mode: try seeds "
              "N, N+1, ... until one finds a violation, at most this many; implies --controlled.")
def run(scenario: str, seed: int | None, workers: int | None, ops: int | str | None,
        sessions: int | None, duration: float | None, store: str | None, redis_url: str,
        reports: Path, quiet: bool, controlled: bool, strategy: str | None,
        schedules: int | None, allow_destructive_faults: bool = False, pg_url: str = "") -> None:
    """Run SCENARIO (a TOML file): real worker processes against a real store, then check
    the history. Writes reports/<run-id>/ and prints the command that reproduces it.

    With no SCENARIO, --store SPEC runs the built-in battery for the store: phases that
    each aim at one class of bug, in rounds until their coverage goals are met or their
    share of --duration (default 120 s) is up; it stops at the first failing round.

    \b
    Exit: 0 pass, 1 violations found (even in a run cut short), 2 bad input or setup,
    3 incomplete, interrupted or unknown (the run proves nothing)."""
    from harness.report import print_run
    from harness.runner.coordinator import run as run_scenario
    from harness.scenario import load_scenario

    if scenario is None:
        scenario_only = {"--workers": workers, "--ops": ops, "--sessions": sessions,
                         "--strategy": strategy, "--schedules": schedules}
        given = [k for k, v in scenario_only.items() if v is not None] + (
            ["--controlled"] if controlled else [])
        if store is None:
            _fail("give a SCENARIO file, or --store SPEC alone to run the built-in battery")
        if given:
            _fail(f"{', '.join(given)} apply to a SCENARIO run; the battery sets its own")
        _battery(store, seed, duration, reports, redis_url, quiet, allow_destructive_faults,
                 pg_url)
    try:
        sc = load_scenario(scenario).with_overrides(
            seed=seed, workers=workers, ops=ops, sessions=sessions, duration=duration,
            store=store)
        sc = _with_control(sc, controlled, strategy, schedules)
        if ops is None and duration is not None and not sc.control.get("enabled"):
            sc = sc.with_overrides(ops="unlimited")  # a run bounded by its duration
        from harness.report.live import LiveView

        with LiveView(err_console, quiet) as view:
            say = view.say
            if sc.control.get("enabled"):
                res = _search(sc, reports, redis_url, say, allow_destructive_faults, pg_url)
            else:
                res = run_scenario(sc, reports=reports, redis_url=redis_url, progress=say,
                                   allow_destructive_faults=allow_destructive_faults,
                                   pg_url=pg_url)
    except HarnessError as err:
        _fail(str(err))
    _finish(lambda: print_run(res, _stdout()), res.exit_code)


def _battery(store: str, seed: int | None, duration: float | None, reports: Path,
             redis_url: str, quiet: bool, destructive: bool, pg_url: str = "") -> NoReturn:
    """``harness run --store SPEC``: the battery (:mod:`harness.battery`)."""
    from harness.battery import BATTERY_S, run_battery
    from harness.report.battery_console import print_battery

    try:
        from harness.report.live import LiveView

        with LiveView(err_console, quiet) as view:
            say = view.say
            b = run_battery(store, duration=duration or BATTERY_S, seed=seed, reports=reports,
                            redis_url=redis_url, progress=say,
                            allow_destructive_faults=destructive, pg_url=pg_url)
    except HarnessError as err:
        _fail(str(err))
    _finish(lambda: print_battery(b, _stdout()), b.exit_code)


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


def _search(sc: Any, reports: Path, redis_url: str, say: Any, destructive: bool = False,
            pg_url: str = "") -> Any:
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
                  progress=say, on_attempt=attempt, allow_destructive_faults=destructive,
                  pg_url=pg_url)


@cli.command("check")
@click.argument("path", metavar="RUN_DIR_OR_HISTORY")
@click.option("--exact", is_flag=True,
              help="Decide every session with no limit but --budget (with the smt extra, "
                   "a solver takes what the searches leave): a session left "
                   "undecided makes the verdict unknown (exit 3). Without it, each session "
                   "gets a fixed number of search steps and an undecided one keeps the "
                   "fast rules' pass, named as not proven.")
@click.option("--budget", type=_Seconds(min=0, min_open=True, max=limits.MAX_DURATION_S),
              default=30.0, show_default=True,
              help="Seconds for the exact decisions of all sessions.")
def check_cmd(path: str, exact: bool, budget: float) -> None:
    """Re-run the checker over a stored history (a newer checker on an old run). Exit 0
    no violation, 1 violations, 2 not a history, 3 unknown (the check did not finish)."""
    from harness.checker import check
    from harness.checker.safe import check_safe
    from harness.coverage import Sweep
    from harness.history import read_history
    from harness.report import check_dict, print_check, write_json
    from harness.report.coverage_lines import coverage_lines
    from harness.runner.streaming import check_stored

    p = Path(path)
    sweep = Sweep()
    try:
        if not exact and (p / "history").is_dir() and not (p / "history.jsonl").is_file():
            # a run directory: streamed as the run itself was checked, sessions retired
            # behind their quiescent readers (memory: the live sessions)
            result, n = check_stored(p / "history", [sweep])
            if n == 0:
                _fail(f"{p}: not a history: no events in it")
        else:
            events = read_history(path)
            for e in events:
                sweep.feed(e)
            result = check_safe(check, events, exact=exact, budget_s=budget)
    except HarnessError as err:
        _fail(str(err))
    coverage = sweep.result(_run_kinds(p)).to_dict()
    if p.is_dir():
        try:
            write_json(p / "recheck.json", check_dict(result) | {"coverage": coverage})
        except OSError as err:
            _fail(f"cannot write {p / 'recheck.json'}: {err.strerror or err}")

    def show() -> None:
        con = _stdout()
        print_check(result, con)
        for line in coverage_lines(coverage):
            con.print(line)

    _finish(show, 0 if result.valid is True else 1 if result.valid is False else EXIT_UNKNOWN)


def _run_kinds(path: Path) -> list[str] | None:
    """The op kinds the run's store could do, as its report.json recorded them (None: no
    such record, e.g. a bare history or a run from before coverage: the history's kinds)."""
    import orjson

    try:
        kinds = orjson.loads((path / "report.json").read_bytes())["coverage"]["kinds"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return kinds if isinstance(kinds, list) and all(isinstance(k, str) for k in kinds) else None


class _Pair(click.ParamType):  # type: ignore[type-arg]  # generic in newer click only
    """``PAIR=N`` (``append+read=10``), or ``default``."""

    name = "PAIR=N"

    def convert(self, value: Any, param: Any, ctx: Any) -> tuple[str, int]:
        if value == "default":
            return ("default", 0)
        pair, eq, n = str(value).partition("=")
        kinds = pair.split("+")
        from harness.coverage import KINDS

        if not eq or len(kinds) != 2 or not set(kinds) <= set(KINDS) or not n.isdigit():
            self.fail(f"{value!r} is not PAIR=N (e.g. read+rollback=5) or 'default'",
                      param, ctx)
        from harness.coverage import pair_name

        return (pair_name(kinds[0], kinds[1]), int(n))


@cli.command("gate")
@click.argument("reports", nargs=-1, required=True, metavar="REPORT_OR_RUN_DIR...",
                type=click.Path(path_type=Path))
@click.option("--max-violations", type=click.IntRange(min=0), default=0, show_default=True,
              help="Violations (of kinds not allowed) a run may have.")
@click.option("--allow", "allow", multiple=True, metavar="KIND",
              help="A violation kind that does not fail the gate (repeatable).")
@click.option("--min-ops", type=click.IntRange(min=0), default=0, show_default=True,
              help="Worker ops a run must have completed.")
@click.option("--require-faults", is_flag=True, help="A run with no fault applied fails.")
@click.option("--min-coverage", "coverage", multiple=True, type=_Pair(),
              help="PAIR=N: op kinds that must have overlapped at least N times on a "
                   "session (e.g. read+rollback=5); 'default' for the usual set. Repeatable.")
def gate_cmd(reports: tuple[Path, ...], max_violations: int, allow: tuple[str, ...],
             min_ops: int, require_faults: bool, coverage: tuple[tuple[str, int], ...]) -> None:
    """Judge run reports for a release: one line per run, then a summary. Exit 0 if every
    run passes; 1 if one fails (violations, interrupted, unknown, incomplete, fewer ops,
    no fault, too little coverage); 2 for bad input."""
    from harness.checker import KINDS
    from harness.report.gate import GateRules, judge, load_report

    unknown = sorted(set(allow) - set(KINDS))
    if unknown:
        _fail(f"--allow {unknown[0]}: not a violation kind ({', '.join(KINDS)})")
    rules = GateRules(max_violations, frozenset(allow), min_ops, require_faults,
                      tuple(c for c in coverage if c[0] != "default"),
                      any(c[0] == "default" for c in coverage))
    try:
        loaded = [(p, load_report(p)) for p in reports]
    except HarnessError as err:
        _fail(str(err))
    lines, failed = [], 0
    for path, report in loaded:
        why = judge(report, rules)
        failed += bool(why)
        name = report.get("run_id") or path.name
        lines.append(f"{'FAIL' if why else 'PASS'} {name}: "
                     + ("; ".join(why) if why else _passed(report)))
    lines.append(f"gate: {len(loaded) - failed} of {len(loaded)} runs passed")

    def show() -> None:
        out = _stdout()
        for line in lines:
            out.print(line, markup=False)

    _finish(show, 1 if failed else 0)


def _passed(report: dict[str, Any]) -> str:
    """A passing run's line: its verdict, and the violations the rules allowed."""
    counts = report.get("check", {}).get("counts") or (
        report.get("first_violation") or {}).get("violations") or {}
    allowed = ", ".join(f"{k} x{n}" for k, n in sorted(counts.items()) if n)
    return f"verdict {report.get('verdict')}" + (f", allowed: {allowed}" if allowed else "")


@cli.command("trend")
@click.argument("reports_dir", metavar="REPORTS_DIR",
                type=click.Path(file_okay=False, path_type=Path))
@click.option("--html", "html_out", type=click.Path(dir_okay=False, path_type=Path),
              help="Where to write the page (default REPORTS_DIR/trend.html).")
def trend_cmd(reports_dir: Path, html_out: Path | None) -> None:
    """Runs side by side across nights: a table of every run under REPORTS_DIR (date,
    scenario, store, seed, duration, ops, ops/s, faults, violations, verdict) and
    trend.html with plots over time. Reads report.json files only."""
    from harness.report.trend import rows, trend_html

    if not reports_dir.is_dir():
        _fail(f"{reports_dir}: no such directory")
    data = rows(reports_dir)
    if not data:
        _fail(f"{reports_dir}: no run with a report.json in it")
    out = html_out or reports_dir / "trend.html"
    try:
        out.write_text(trend_html(data), encoding="utf-8")
    except OSError as err:
        _fail(f"cannot write {out}: {err.strerror or err}")
    head = ("date", "scenario", "store", "seed", "s", "ops", "ops/s", "faults", "violations",
            "verdict")
    lines = [[str(r["date"])[:19], r["scenario"], r["store"], str(r["seed"]), str(r["seconds"]),
              str(r["ops"]), str(r["ops_s"]), str(r["faults"]),
              ", ".join(f"{k} x{n}" for k, n in r["violations"].items()) or "-", r["verdict"]]
             for r in data]
    widths = [max(len(x) for x in col) for col in zip(head, *lines, strict=True)]

    def show() -> None:
        out_ = _stdout()
        for row in (head, *lines):
            out_.print("  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip(),
                       markup=False)
        out_.print(f"{len(data)} runs; plots: {out}", markup=False)

    _finish(show, 0)


@cli.command("stores")
def stores_cmd() -> None:
    """List the built-in stores and the third-party adapters, one line each."""
    from harness.stores import BUILTINS
    from harness.stores.thirdparty import ADAPTERS

    width = max(len(s) for s in [*BUILTINS, *ADAPTERS])

    def show() -> None:
        for name, info in BUILTINS.items():
            caught = f"  [caught as {info.expected}]" if info.expected else ""
            click.echo(f"{name:<{width}}  {info.backend:<8}  {info.description}{caught}")
        for name, adapter in ADAPTERS.items():
            backend = name.rsplit(".", 1)[1] if name.endswith((".redis", ".postgres")) else "sqlite"
            click.echo(f"{name:<{width}}  {backend:<8}  {adapter.title}  "
                       f"[pip install 'harness[{adapter.extra}]']")

    _finish(show, 0)


@cli.command("contract")
@click.argument("spec", metavar="SPEC")
@click.option("--layer", "layers", multiple=True,
              type=click.Choice(["sequential", "edge", "concurrency"]),
              help="Run only this layer's cases (repeatable); default: every layer. The "
              "concurrency layer's harness runs take most of the time.")
def contract_cmd(spec: str, layers: tuple[str, ...]) -> None:
    """Run the contract suite against a store: a state machine against the model, edge
    cases (several writer processes wherever a clause can have them), and short runs across
    real processes, free, controlled and under faults; a table by layer and case. Exit 0
    every case passed (or does not apply), 1 some failed, 2 an unknown store."""
    from harness.contract import contract_summary, contract_table, run_contract

    say = _stderr_progress()
    try:
        outcomes = run_contract(spec, on_case=lambda o: say(f"{o.layer} / {o.name}: {o.status}"),
                                layers=layers)
    except HarnessError as err:
        _fail(str(err))

    def show() -> None:
        _stdout().print(contract_table(outcomes))
        _stdout().print(contract_summary(spec, outcomes))

    _finish(show, 1 if any(not o.ok for o in outcomes) else 0)


def _stderr_progress() -> Callable[[str], None]:
    """One line per finished case on stderr (a contract run takes a minute)."""
    def say(line: str) -> None:
        click.echo(line, err=True)
    return say


_RUN_DIR = click.Path(file_okay=False, exists=True, path_type=Path)


@cli.command("replay")
@click.argument("run_dir", type=_RUN_DIR)
@click.option("--from", "source", type=click.Choice(["trace", "seed"]), default="trace",
              show_default=True, help="Follow the recorded grants, or draw them again from "
              "the seed.")
@click.option("--runs", type=click.IntRange(min=1), default=1, show_default=True,
              help="Replay this many times, comparing each with the original.")
@click.option("--redis-url", metavar="URL", default="", callback=_redis_url,
              envvar="HARNESS_REDIS_URL", help="As for `run`.")
@_pg_option()
@click.option("--reports", type=click.Path(file_okay=False, path_type=Path),
              default=Path("reports"), show_default=True, help="Where run directories go.")
def replay_cmd(run_dir: Path, source: str, runs: int, redis_url: str, reports: Path,
               pg_url: str = "") -> None:
    """Run a controlled run again from its trace (or seed) and say how faithfully it
    replays: the same history up to times, the same violations. Exit code as for `run`."""
    from harness.replay import compare_runs, replay
    from harness.report import print_run, write_json

    faithful = 0
    lost: list[OSError] = []  # how stdout failed while the replays went on, if it did

    def echo(msg: str) -> None:
        if not lost:
            try:
                click.echo(msg)
                sys.stdout.flush()
            except OSError as err:
                lost.append(err)

    try:
        for i in range(runs):
            res = replay(run_dir, source=source, reports=reports, redis_url=redis_url,
                         pg_url=pg_url)
            fid = compare_runs(run_dir, res.run_dir)
            write_json(res.run_dir / "fidelity.json",
                       {"original": str(run_dir), "source": source, **fid.to_dict()})
            faithful += fid.faithful
            echo(f"replay {i + 1}/{runs} from the {source}: {res.run_dir}")
            echo(f"  {'faithful' if fid.faithful else 'NOT FAITHFUL'}: {fid.line()}")
    except HarnessError as err:
        _fail(str(err))
    if lost:
        sys.exit(_output_failed(lost[0], res.exit_code))

    def show() -> None:
        click.echo(f"fidelity: {faithful}/{runs} replays gave the same history and violations")
        print_run(res, _stdout())

    _finish(show, res.exit_code)


@cli.command("shrink")
@click.argument("run_dir", type=_RUN_DIR)
@click.option("--kind", help="The violation kind to keep (default: the one the store is "
              "known for, else the run's most frequent).")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path),
              help="Where repro.toml and the test go (default: RUN_DIR).")
@click.option("--max-runs", type=click.IntRange(min=1), default=300, show_default=True,
              help="At most this many candidate runs.")
@click.option("--budget", type=_Seconds(min=1, max=limits.MAX_DURATION_S), default=300.0,
              show_default=True,
              help="Seconds of shrinking at most.")
@click.option("--redis-url", metavar="URL", default="", callback=_redis_url,
              envvar="HARNESS_REDIS_URL", help="As for `run`.")
@_pg_option()
def shrink_cmd(run_dir: Path, kind: str | None, out: Path | None, max_runs: int,
               budget: float, redis_url: str, pg_url: str = "") -> None:
    """Minimize a failing run (faults, workers, ops, sessions, scheduling steps) while it
    still fails with the same violation kind; write repro.toml and test_repro_<kind>.py."""
    from harness.shrink import shrink

    try:
        r = shrink(run_dir, kind=kind, out=out, max_runs=max_runs, budget_s=budget,
                   redis_url=redis_url, say=lambda m: err_console.print(m), pg_url=pg_url)
    except HarnessError as err:
        _fail(str(err))
    o, c = r.original, r.case

    def show() -> None:
        click.echo(f"{r.kind}: {len(o.streams)} workers, {o.ops} ops, {o.sessions} sessions, "
                   f"{len(o.trace)} steps -> {len(c.streams)} workers, {c.ops} ops, "
                   f"{c.sessions} sessions, {len(c.trace)} steps"
                   + (f", {len(o.faults)} -> {len(c.faults)} faults" if o.faults else "")
                   + f" ({r.runs} runs, {r.seconds:.1f} s)")
        click.echo(f"wrote {r.repro}\nwrote {r.test}")
        if r.reference is not None:
            click.echo(f"on the reference store {r.reference!r} it "
                       f"{'passes' if r.reference_passes else 'STILL FAILS'}")

    _finish(show, 0)


_AGE_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def _age(ctx: click.Context, param: click.Parameter, value: str | None) -> float | None:
    """``--older-than``: a number with a unit s, m, h or d (``1d``, ``90m``, ``30s``)."""
    if value is None:
        return None
    num, unit = (value[:-1], value[-1]) if value[-1:] in _AGE_UNITS else (value, "s")
    try:
        secs = float(num) * _AGE_UNITS[unit]
    except ValueError:
        secs = math.nan
    if not (math.isfinite(secs) and secs >= 0):
        raise click.BadParameter(f"{value!r} is not an age like 1d, 12h, 30m or 90s", ctx, param)
    return secs


@cli.command("clean")
@click.option("--redis-url", metavar="URL", default="", callback=_redis_url,
              envvar="HARNESS_REDIS_URL", help="The Redis to clean (default $HARNESS_REDIS_URL).")
@_pg_option("The PostgreSQL to clean (default $HARNESS_PG_URL): the schemas runs made there.")
@click.option("--run", "runs", metavar="RUN_ID", multiple=True,
              help="Remove this run's keys (harness:RUN_ID:*, matched literally) or its "
                   "schema; repeatable.")
@click.option("--older-than", metavar="AGE", callback=_age,
              help="Remove every indexed run not seen alive for AGE (1d, 12h, 30m, 90s); on "
                   "PostgreSQL, every run's schema made more than AGE ago.")
def clean_cmd(redis_url: str, runs: tuple[str, ...], older_than: float | None,
              pg_url: str = "") -> None:
    """Remove what killed runs left on a server. On a Redis: the keys under
    harness:<run-id>: and the run's entry in the index harness:runs. On a PostgreSQL: the
    run's schema (only schemas whose comment says a harness run made them). Without --run
    or --older-than, list them."""
    import time

    from harness.backends import postgres, redis_keys

    servers = [(m, u, w) for m, u, w in ((redis_keys, redis_url, "keys"),
                                         (postgres, pg_url, "tables")) if u]
    if not servers:
        _fail("clean needs --redis-url URL or --pg-url URL (or $HARNESS_REDIS_URL, $HARNESS_PG_URL)")
    listing = not runs and older_than is None
    results = []
    try:
        for mod, url, what in servers:
            results.append((what, mod.list_runs(url) if listing
                            else mod.remove_runs(url, runs, older_than)))
    except HarnessError as err:
        _fail(str(err))

    def show() -> None:
        for what, got in results:
            where = "in the index" if what == "keys" else "with a schema on the PostgreSQL"
            if listing:
                now = time.time()
                for rid, seen in got:
                    click.echo(f"{rid}  {'last seen' if what == 'keys' else 'started'} "
                               f"{now - seen:.0f} s ago")
                click.echo(f"{len(got)} run(s) {where}" + (
                    "; remove them with --run RUN_ID or --older-than AGE" if got else ""))
                continue
            missing = " (not in the index)" if what == "keys" else " (it has no schema there)"
            for r in got:
                click.echo(f"removed {r.keys} {what} of {r.run_id}"
                           + ("" if r.last_seen is not None else missing))
            click.echo(f"{sum(r.keys for r in got)} {what} of {len(got)} run(s) removed")

    _finish(show, 0)


def main(argv: list[str] | None = None) -> None:
    """Console-script entry point: exits with the codes of the module docstring."""
    cli.main(args=argv, prog_name="harness")
