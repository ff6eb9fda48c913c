"""The console summary of a run or a re-check: verdict, counts, the first violations with
their evidence, where the report is, and the command that reproduces the run."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from harness.checker import CheckResult
from harness.report.coverage_lines import coverage_lines, window_lines

if TYPE_CHECKING:
    from harness.result import RunResult

__all__ = ["print_check", "print_run"]

SHOW = 5  # violations shown in full per kind


def _verdict(result: CheckResult) -> str:
    if result.valid is True:
        return "[bold green]PASS[/]: no violation" + _proof(result)
    if result.valid is None and result.error is not None:
        return f"[bold yellow]UNKNOWN[/]: the checker raised {escape(result.error)}"
    if result.valid is None:
        return ("[bold yellow]UNKNOWN[/]: the exact search ran out of budget (a larger "
                "--budget decides more, and with the smt extra a solver)")
    n = result.total()
    return f"[bold red]FAIL[/]: {n} violation{'s' if n != 1 else ''}"


def _proof(result: CheckResult) -> str:
    """What a pass proves: every session's linearizability, or only the fast rules' for
    the sessions the exact decision could not finish."""
    p = result.proof()
    if p is None:
        return ""
    n, k = p["sessions"], p["sessions_proven"]
    if p["proven"]:
        return f"; proven linearizable ({n} session{'s' * (n != 1)}, each proof replayed)"
    left = p["sessions_unknown_count"]
    detail = {d["session"]: d for d in p.get("sessions_unknown_detail", ())}
    names = ", ".join(_undecided(name, detail.get(name)) for name in p["sessions_unknown"][:3])
    return (f"; {k} of {n} sessions proven linearizable; {left} not decided within the "
            f"exact budget ({names}{' …' if left > 3 else ''}): for those, the fast rules "
            f"found nothing (`harness check RUN --exact --budget S` gives them S seconds, "
            f"and with the smt extra a solver)")


def _undecided(name: str, d: dict[str, Any] | None) -> str:
    """An undecided session and how far the searches got in it."""
    if d is None:
        return name
    w = d["window"]
    return (f"{name}: {d['ops_placed']} of {d['ops']} ops placed, events "
            f"{w['from_event']}-{w['to_event']} undecided")


def print_check(result: CheckResult, console: Console | None = None) -> None:
    con = console or Console(highlight=False, soft_wrap=True)
    con.print(_verdict(result))
    if not result.violations:
        return
    shown = result.shown()
    truncated = False
    table = Table("kind", "count", "with evidence", "sessions", show_edge=False)
    for kind, n in sorted(result.counts().items()):
        kept = shown.get(kind, 0)
        truncated = truncated or kept < n
        sessions = sorted({str(v.session) for v in result.violations if v.kind == kind})
        table.add_row(kind, str(n), str(kept) if kept < n else "all",
                      ", ".join(sessions[:6]) + (" …" if len(sessions) > 6 else ""))
    con.print(table)
    if truncated:
        con.print("[dim]counts are true totals; evidence is kept for the first ones of each "
                  "kind only (sessions: of those kept)[/]")
    printed: dict[str, int] = {}
    for v in result.violations:
        if printed.get(v.kind, 0) >= SHOW:
            continue
        printed[v.kind] = printed.get(v.kind, 0) + 1
        con.print(f"\n[bold red]{v.kind}[/] [dim](session {v.session})[/] {v.message}",
                  markup=True, highlight=False)
        for e in v.events:
            val = repr(e.value)
            val = val if len(val) < 100 else val[:97] + "..."
            err = f" error={e.error!r}" if e.error else ""
            con.print(f"    #{e.index:<6} p={e.process!s:<7} {e.type:<6} {e.f:<14} "
                      f"{e.session or '-':<5} {val}{err}", markup=False, highlight=False)


def print_run(res: RunResult, console: Console | None = None) -> None:
    con = console or Console(highlight=False, soft_wrap=True)
    sc, st = res.scenario, res.stats
    comp = st.get("completions", {})
    con.print(f"\n[bold]{sc.name}[/] store={res.store.spec} seed={res.seed} "
              f"workers={sc.workers} target: {res.target_note}")
    con.print(f"{_ops(st)} in {st.get('seconds', 0):.1f}s: "
              f"{comp.get('ok', 0)} ok, {comp.get('fail', 0)} fail, {comp.get('info', 0)} info")
    if res.interrupted:
        con.print("[bold yellow]interrupted[/]: workers stopped; checked what was recorded")
    for line in (_chaos_lines(st) + _worker_lines(res) + coverage_lines(st.get("coverage"))
                 + window_lines(st.get("control"))):
        con.print(line)
    print_check(res.result, con)
    if res.verdict in ("interrupted", "incomplete") and res.result.valid is True:
        con.print(_RUN_VERDICTS[res.verdict])
    con.print(f"\nreport: {res.run_dir / 'report.json'}")
    con.print(f"reproduce: {res.reproduce}", markup=False)


_RUN_VERDICTS = {
    "interrupted": "[bold yellow]INTERRUPTED[/]: no violation in what ran, but a stop signal "
                   "cut the run short: it proves nothing (exit 3)",
    "incomplete": "[bold yellow]INCOMPLETE[/]: no violation in what ran, but the run fell "
                  "short (above): it proves nothing (exit 3)",
}


def _worker_lines(res: RunResult) -> list[str]:
    """How the workers ended, one line, then each problem that makes the run incomplete."""
    whys: dict[str, int] = {}
    for w in res.workers:
        whys[w["why"]] = whys.get(w["why"], 0) + 1
    opens = [w["open_s"] for w in res.workers if w.get("open_s") is not None]
    out = []
    if res.workers:
        ended = ", ".join(f"{n} {why}" for why, n in sorted(whys.items()))
        slow = f"; slowest open {max(opens):.1f}s" if opens else ""
        out.append(f"workers: {len(res.workers)} processes: {ended}{slow}")
    op = res.stats.get("opening", {})
    if op.get("faults_on_opening"):
        out.append(f"opening: {op['faults_on_opening']} faults landed on a worker still "
                   f"opening; slots spent {op.get('run_share', 0):.0%} of the run opening")
    out += [f"[bold yellow]incomplete[/]: {escape(p)}" for p in res.problems[:10]]
    if len(res.problems) > 10:
        out.append(f"[bold yellow]incomplete[/]: … and {len(res.problems) - 10} more "
                   "(report.json: problems)")
    return out


def _ops(st: dict[str, Any]) -> str:
    """Worker ops and the final read's ops, apart (the final read is the harness's own)."""
    if "worker_ops" not in st:
        return f"{st.get('ops', 0)} ops"
    return f"{st['worker_ops']} worker ops (+{st.get('final_ops', 0)} of the final read)"


def _chaos_lines(st: dict[str, Any]) -> list[str]:
    """Where the faults landed, and what the supervisor saw (leaks, leftover processes)."""
    out = []
    faults = st.get("faults")
    if faults:
        kinds = ", ".join(f"{k} {v['applied']} ({v['in_flight']} mid-op)"
                          for k, v in faults["kinds"].items())
        out.append(f"faults: {faults['applied']} of {faults['scheduled']} applied: {kinds}")
    res = st.get("resources")
    if res:
        procs = res["processes"]
        rss = max((p.get("rss_max", 0) for p in procs), default=0)
        leaks = ", ".join(f"{x['role']} {x['pid']} {x['metric']}" for x in res["leaks"])
        out.append(f"processes: {len(procs)} sampled, peak RSS {rss / 2**20:.0f} MiB, "
                   + (f"[bold yellow]steady growth[/]: {leaks}" if leaks else "no steady growth"))
        if res["leftover"]:
            left = ", ".join(f"{x['pid']} {x['name']}" for x in res["leftover"])
            out.append(f"[bold red]processes left behind (killed now)[/]: {left}")
    return out
