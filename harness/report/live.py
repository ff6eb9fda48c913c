"""What a run shows while it goes on, on stderr, from the coordinator's progress events.

On a terminal: one live line (rich), redrawn twice a second: elapsed and remaining time,
ops and ops/s, faults applied, violations so far by kind, the coordinator's memory. Not on
a terminal (a CI log): a plain line when the workers start, then every :data:`PLAIN_S`
seconds. A violation is printed the moment the streaming check finds it, with its sentence
and the command that reproduces the run; at most :data:`SHOW_MAX` are printed in full (the
rest are counted on the live line and listed in the report), and ``quiet`` prints the
target and violations only.

The events (:func:`harness.runner.coordinator.run` documents their keys): ``target``,
``opening``, ``started``, ``progress``, ``violation``, ``final``, ``check``, ``phase`` (the
battery's rounds).
"""

from __future__ import annotations

import time
from typing import Any

from rich.console import Console
from rich.live import Live
from rich.markup import escape
from rich.text import Text

__all__ = ["PLAIN_S", "SHOW_MAX", "LiveView"]

PLAIN_S = 30.0
SHOW_MAX = 20


class LiveView:
    """A progress event sink (``view.say``) for one command; use as a context manager."""

    def __init__(self, console: Console, quiet: bool = False) -> None:
        self.console = console
        self.quiet = quiet
        self.terminal = console.is_terminal and not quiet
        self.live: Live | None = None
        self.last_plain = 0.0
        self.shown = 0
        self.latest: dict[str, Any] = {}

    def __enter__(self) -> LiveView:
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop()

    def _stop(self) -> None:
        if self.live is not None:
            self.live.stop()
            self.live = None

    def say(self, event: str, data: dict[str, Any]) -> None:
        if event == "violation":
            self._violation(data)
            return
        if event == "target":  # even when quiet: where the run's data is
            self.console.print(f"target: {escape(str(data['note']))}")
        elif self.quiet:
            return
        elif event == "phase":
            self._stop()
            self.console.print(f"phase {data['phase']}, round {data['round']}")
        elif event == "started":
            self.latest = {}
            if self.terminal:
                self.live = Live(Text("starting…"), console=self.console, transient=True,
                                 auto_refresh=False)
                self.live.start()
            else:
                self.console.print(f"{data['workers']} workers started")
                self.last_plain = time.monotonic()
        elif event == "progress":
            self.latest = data
            if self.live is not None:
                self.live.update(Text(line(data)), refresh=True)
            elif time.monotonic() - self.last_plain >= PLAIN_S:
                self.last_plain = time.monotonic()
                self.console.print(line(data))
        elif event == "check":
            self._stop()
            if not self.terminal and self.latest:
                self.console.print(line(self.latest))
            self.console.print(f"checking the rest ({data['events']} events in all)…")

    def _violation(self, data: dict[str, Any]) -> None:
        self.shown += 1
        if self.shown > SHOW_MAX:
            return
        where = f" (session {data['session']})" if data.get("session") else ""
        self.console.print(f"[bold red]violation[/] {escape(str(data['kind']))}{escape(where)}: "
                           f"{escape(str(data['sentence']))}")
        if self.shown == 1 and data.get("reproduce"):
            self.console.print(f"  reproduce: {data['reproduce']}", markup=False)
        if self.shown == SHOW_MAX:
            self.console.print("(more violations are counted, not printed; all are in the "
                               "report)")


def line(d: dict[str, Any]) -> str:
    """One line of a ``progress`` event: what is there of elapsed/remaining time, ops and
    ops/s, faults, violations by kind and memory."""
    parts = []
    if "elapsed_s" in d:
        left = max(0.0, float(d.get("duration_s", 0)) - float(d["elapsed_s"]))
        parts.append(f"{d['elapsed_s']:.0f}s elapsed, {left:.0f}s left")
    parts.append(f"{d.get('ops', 0)} ops" + (f" ({d['ops_per_s']}/s)" if "ops_per_s" in d
                                             else ""))
    if "faults" in d:
        parts.append(f"{d['faults']} faults")
    found = d.get("violations") or {}
    parts.append(", ".join(f"{k} x{n}" for k, n in sorted(found.items())) if found
                 else "no violation so far")
    if d.get("rss_mb"):
        parts.append(f"coordinator {d['rss_mb']:.0f} MiB")
    return " · ".join(parts)
