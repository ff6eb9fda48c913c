"""The console summary of a battery (:mod:`harness.battery`): a line per phase (rounds,
ops, goals reached or not), the first violation with its reproduce command, the verdict."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rich.console import Console

from harness.report.console import print_run

if TYPE_CHECKING:
    from harness.battery import Battery

__all__ = ["print_battery"]

_VERDICT = {"pass": "[bold green]PASS[/]: every phase ran clean",
            "fail": "[bold red]FAIL[/]: a round found violations",
            "interrupted": "[bold yellow]INTERRUPTED[/]: the battery was stopped; it proves nothing",
            "incomplete": "[bold yellow]INCOMPLETE[/]: a phase did not run, or a round did "
                          "not finish as a pass; the battery proves nothing"}


def print_battery(b: Battery, console: Console | None = None) -> None:
    con = console or Console(highlight=False, soft_wrap=True)
    r = b.report
    con.print(f"\n[bold]battery[/] store={r['store']} ({r['backend']}) seed={r['seed']} "
              f"in {r['seconds']:.1f}s of {r['duration_s']:g}s")
    for p in r["phases"]:
        con.print(_phase_line(p), markup=True)
    never = r["coverage"]["never"]
    if never:
        con.print(f"[yellow]never overlapped[/]: {never[0]['sentence']}")
    if b.first is not None:
        con.print("\n[bold]the failing round[/]:")
        print_run(b.first, con)
        first = r["first_violation"]
        con.print(f"found after {first['after_s']:.1f}s of the battery")
    for problem in r["problems"]:
        con.print(f"[yellow]problem[/]: {problem}", markup=True)
    con.print("\n" + _VERDICT[b.verdict])
    con.print(f"\nreport: {b.run_dir / 'report.json'}")
    con.print(f"reproduce: {r['reproduce']}", markup=False)


def _phase_line(p: dict[str, Any]) -> str:
    if not p["ran"]:
        return f"  {p['name']}: not run (no time left, or the battery stopped before it)"
    ops = sum(rd["ops"] for rd in p["rounds"])
    goals = ", ".join(f"{g.removeprefix('window:').removeprefix('fault:')} "
                      f"{v['reached']}/{v['want']}" for g, v in p["goals"].items())
    mark = "[green]goals met[/]" if p["met"] else "[yellow]goals not met[/]"
    bad = [rd for rd in p["rounds"] if rd["verdict"] != "pass"]
    tail = f"; [red]{bad[0]['verdict']}[/] in round {len(p['rounds'])}" if bad else ""
    return (f"  {p['name']}: {len(p['rounds'])} round{'s' if len(p['rounds']) != 1 else ''}, "
            f"{ops} ops, {mark} ({goals}){tail}")
