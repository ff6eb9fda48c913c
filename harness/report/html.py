"""``report.html``: one self-contained page a person reads in a minute: the verdict and
why, the command that reproduces the run (a copy button), throughput and latency over time
with the faults shaded, every violation with the events that prove it, and a timeline in
the spirit of Jepsen's: a lane per process, each op a bar from invoke to completion
coloured by outcome, faults as bands across the lanes.

It stays small at any length: a :class:`Timeline` folds the history as the run goes into
per-window aggregates (about :data:`WINDOWS` windows over the run), and the op-level
timeline keeps only the ops around each fault and those each violation's evidence names
(at most :data:`DETAIL_MAX` bars); the page says what it aggregated. Each op drawn has an anchor
``#op-<index>`` (its invoke's index), which a violation's events link to. No network, no
CDN: the script is inline.
"""

from __future__ import annotations

import functools
import math
from collections import defaultdict, deque
from pathlib import Path
from typing import Any

import orjson
from jinja2 import Environment, PackageLoader, select_autoescape

from harness.history import OP_FS, Event, iter_history

__all__ = ["DETAIL_MAX", "WINDOWS", "Timeline", "html_report", "timeline_of", "write_html"]

WINDOWS = 200  # whole-run views: about this many windows over the run's duration
DETAIL_MAX = 20_000  # op bars drawn in the timeline, at most
RING = 2_000  # the last ops kept, for the ones just before a fault
FAULT_S = 0.05  # seconds of ops kept on each side of a fault's start
FAULTS_MAX = 500  # fault bands drawn
_BUCKETS = 4  # latency histogram buckets per power of two


def _pct(hist: dict[int, int], q: float) -> float:
    """The ``q`` quantile (ms) of a log-bucket histogram (bucket b = 2**(b/4) µs)."""
    total = sum(hist.values())
    if not total:
        return 0.0
    need, seen = q * total, 0
    for b in sorted(hist):
        seen += hist[b]
        if seen >= need:
            return round(2 ** (b / _BUCKETS) / 1000, 3)
    return 0.0


class Timeline:
    """What the page draws, folded over the merged history one event at a time (fed while
    the run goes on, as the report's other sections are): per window of ``window_s``
    seconds the ops completed, the ones that failed or ended unknown, and their mean and
    largest latency; per op kind the outcomes and a latency histogram; the faults; and the
    ops around each fault (a ring of the last :data:`RING` ops, and the ops for
    :data:`FAULT_S` after it), at most :data:`DETAIL_MAX`. Bounded whatever the run's
    length. A violation's own events are drawn from the check's evidence."""

    def __init__(self, window_s: float) -> None:
        self.width = max(window_s, 1e-3)
        self.t0: int | None = None
        self.open: dict[Any, tuple[int, int, str, str | None]] = {}
        self.win: dict[int, list[float]] = {}  # window -> [ops, bad, latency sum, max]
        self.kinds: dict[str, dict[str, int]] = {}
        self.hists: dict[str, dict[int, int]] = defaultdict(lambda: defaultdict(int))
        self.faults: dict[Any, list[Any]] = {}  # id -> [start, end, kind]
        self.killed_at: dict[str, float] = {}
        self.ring: deque[list[Any]] = deque(maxlen=RING)
        self.bars: dict[int, list[Any]] = {}  # invoke index -> bar
        self.until = -1.0  # ops completed before this (s) are kept: a fault just started
        self.dropped = 0
        self.last = 0.0

    def feed(self, e: Event) -> None:
        self.t0 = e.time if self.t0 is None else self.t0
        t = (e.time - self.t0) / 1e9
        self.last = t
        if e.process == "nemesis":
            v = e.value if isinstance(e.value, dict) else {}
            if e.f == "kill" and "process" in v:
                self.killed_at[str(v["process"])] = t
            if "id" in v and "skipped" not in v and len(self.faults) < FAULTS_MAX:
                band = self.faults.setdefault(v["id"], [t, t, e.f])
                band[1] = t
                if v.get("phase") != "end":  # the ops just before it, and those to come
                    for bar in self.ring:
                        if t - bar[3] <= FAULT_S:
                            self._keep(bar)
                    self.until = t + FAULT_S
            return
        try:
            if e.type == "invoke":
                self.open[e.process] = (e.index, e.time, e.f, e.session)
                return
            inv = self.open.pop(e.process, None)
        except TypeError:  # an unhashable process: not an op
            return
        if inv is None or inv[2] not in OP_FS:
            return
        lat = (e.time - inv[1]) / 1e6
        k = self.kinds.setdefault(inv[2], {"ok": 0, "fail": 0, "info": 0})
        k[e.type] = k.get(e.type, 0) + 1
        self.hists[inv[2]][int(_BUCKETS * math.log2(max(lat * 1000, 1.0)))] += 1
        w = self.win.setdefault(min(WINDOWS * 4, int(t / self.width)), [0, 0, 0.0, 0.0])
        w[0] += 1
        w[1] += e.type != "ok"
        w[2] += lat
        w[3] = max(w[3], lat)
        bar = [inv[0], str(e.process), round((inv[1] - self.t0) / 1e9, 6), round(t, 6),
               inv[2], e.type, inv[3]]
        self.ring.append(bar)
        if t <= self.until:
            self._keep(bar)

    def _keep(self, bar: list[Any]) -> None:
        if bar[0] in self.bars:
            return
        if len(self.bars) >= DETAIL_MAX:
            self.dropped += 1
            return
        self.bars[bar[0]] = bar

    def data(self, violations: list[dict[str, Any]]) -> dict[str, Any]:
        """The page's data, with the ops behind ``violations`` (report.json's) drawn."""
        t0 = self.t0 or 0
        bars = dict(self.bars)
        ops_of: list[list[int]] = []
        for v in violations:
            ev = v.get("events", [])
            ops = []
            for n, e in enumerate(ev):
                if e["type"] != "invoke":
                    continue
                done = next((c for c in ev[n + 1:] if c["process"] == e["process"]), None)
                end = (done["time"] - t0) / 1e9 if done else self.killed_at.get(
                    str(e["process"]), self.last)
                bars.setdefault(e["index"], [e["index"], str(e["process"]),
                                             round((e["time"] - t0) / 1e9, 6), round(end, 6),
                                             e["f"], done["type"] if done else "none",
                                             e.get("session")])
                ops.append(e["index"])
            ops_of.append(ops)
        for p, inv in self.open.items():  # never completed: drawn to its process's kill
            if inv[0] in bars:
                bars[inv[0]][3] = self.killed_at.get(str(p), self.last)
        lanes: dict[str, int] = {}
        drawn = []
        for bar in sorted(bars.values(), key=lambda b: b[2]):
            drawn.append([bar[0], lanes.setdefault(bar[1], len(lanes)), *bar[2:]])
        span = max(self.last, 1e-3)
        return {"span": span, "width": self.width, "bars": drawn,
                "lanes": sorted(lanes, key=lanes.__getitem__),
                "windows": self.perf_section()["windows"],
                "faults": [{"id": i, "from": round(a, 6), "to": round(b, 6), "kind": kind}
                           for i, (a, b, kind) in self.faults.items()],
                "ops_of": ops_of}

    def perf_section(self) -> dict[str, Any]:
        """report.json's ``perf``: per op kind its outcomes and latency percentiles
        (``by_kind``), and per window of ``window_s`` seconds the ops completed per second,
        those that failed or ended unknown, and the mean and largest latency (ms)."""
        return {"by_kind": self.perf(), "window_s": round(self.width, 6),
                "windows": [{"t": round(i * self.width, 4),
                             "ops_s": round(w[0] / self.width, 1), "bad": int(w[1]),
                             "lat_ms": round(w[2] / w[0], 3) if w[0] else 0,
                             "max_ms": round(w[3], 3)} for i, w in sorted(self.win.items())]}

    def perf(self) -> dict[str, dict[str, Any]]:
        """Per op kind: outcomes and latency percentiles (ms)."""
        return {f: {**self.kinds[f], "p50_ms": _pct(self.hists[f], 0.5),
                    "p90_ms": _pct(self.hists[f], 0.9), "p99_ms": _pct(self.hists[f], 0.99)}
                for f in sorted(self.kinds)}


def html_report(report: dict[str, Any], timeline: Timeline) -> str:
    """The page of a run: its ``report`` (report.json) and what ``timeline`` folded."""
    check = report.get("check", {})
    data = timeline.data(check.get("violations", []))
    violations = [{"kind": v["kind"], "session": v.get("session"), "message": v["message"],
                   "ops": ops} for v, ops in zip(check.get("violations", []), data["ops_of"],
                                                 strict=True)]
    verdict = report.get("verdict", "unknown")
    why = (", ".join(f"{k} x{n}" for k, n in sorted(check.get("counts", {}).items()))
           or "; ".join(report.get("problems", [])) or "no violation" + _proof(check))
    return templates().get_template("report.html.j2").render(
        report=report, verdict=verdict, why=why, perf=timeline.perf(), violations=violations,
        data_json=orjson.dumps(data).decode(), bars=len(data["bars"]),
        dropped=timeline.dropped, ops=sum(int(w[0]) for w in timeline.win.values()),
        windows=len(timeline.win))


@functools.cache
def templates() -> Environment:
    """The report templates, one environment per process: a new one compiled the template
    again for every page (4.5 ms of CPU for report.html.j2, 2026-11-29);
    jinja's own cache still reloads a template whose file changed."""
    return Environment(loader=PackageLoader("harness.report", "templates"),
                       autoescape=select_autoescape(["html", "j2"]))


def timeline_of(run_dir: Path, window_s: float) -> Timeline:
    """The timeline of a stored run, read back from its logs (one stream)."""
    tl = Timeline(window_s)
    for e in iter_history(run_dir):
        tl.feed(e)
    return tl


def write_html(run_dir: Path, report: dict[str, Any], timeline: Timeline) -> None:
    (run_dir / "report.html").write_text(html_report(report, timeline), encoding="utf-8")


def _proof(check: dict[str, Any]) -> str:
    """What a pass proves (report.json's ``check.proof``), as the verdict line says it."""
    p = check.get("proof")
    if not isinstance(p, dict):
        return ""
    if p.get("proven"):
        return f"; proven linearizable ({p.get('sessions')} sessions, each proof replayed)"
    first = (p.get("sessions_unknown_detail") or [None])[0]
    where = (f" ({first['session']}: {first['ops_placed']} of {first['ops']} ops placed, events "
             f"{first['window']['from_event']}-{first['window']['to_event']} undecided)"
             if isinstance(first, dict) else "")
    return (f"; {p.get('sessions_proven')} of {p.get('sessions')} sessions proven linearizable, "
            f"{p.get('sessions_unknown_count')} not decided within the exact budget{where}")
