"""Supervision: psutil samples of every process a run starts (CPU, RSS, open files and
descriptors, inet connections), a flag on steady growth (a leak), and the proof that no
process the run started outlives it.

A :class:`Supervisor` wraps the whole run. A daemon thread samples the coordinator and
each of its descendants every ``interval`` s: workers and their replacements, the final
reader, the nemesis's helpers, the managed ``redis-server`` (a new pid after a restart).
Processes that already existed when it started (a test's own server), and those they
start while the run goes on (that server's backend for a worker's connection), are not the
run's and are left alone. After the run, :meth:`Supervisor.report` lists what is still alive
(``leftover``: a harness bug, so it is also killed) and summarises each process, keeping a
thinned series of at most :data:`SERIES_MAX` points per process for plots.

Example::

    with Supervisor() as sup:
        ...  # start the target, run the workers, stop the target
    resources = sup.report(events)   # events: the merged history, to name the processes
"""

from __future__ import annotations

import contextlib
import itertools
import statistics
import threading
import time
from collections.abc import Sequence
from typing import Any

import psutil

from harness.history import Event, is_reader

__all__ = ["LEAK_MIN", "LEAK_ROLES", "SAMPLE_S", "SERIES_MAX", "ProcessNames", "Supervisor",
           "steady_growth"]

SAMPLE_S = 0.2
SERIES_MAX = 120
ENDED_MAX = 16  # samples kept of a process once it is gone
#: Processes written in full in report.json (the coordinator and servers always); the
#: rest (a long run that kills a worker every second makes thousands) are counted by role
#: in ``processes_more``. Leaks are looked for in every one.
PROCESSES_MAX = 100
METRICS = ("cpu", "rss", "fds", "files", "conns")
#: The least growth (first to last quarter of a process's life) flagged as a leak.
LEAK_MIN: dict[str, float] = {"rss": 8 << 20, "fds": 8, "files": 8, "conns": 8}
#: Whose growth is a leak: the harness's processes and the store code in the workers. A
#: server's memory grows with the data it holds; its series is reported, never flagged.
LEAK_ROLES = frozenset({"coordinator", "worker", "final-read", "nemesis"})
#: The coordinator holds the sessions it is checking, which grow from nothing at the start
#: of every run until the first generations retire: its growth is flagged only over a
#: life this long (seconds). Its flatness over long runs is what tests/chaos/test_soak.py
#: and bench/nightly.py measure.
COORDINATOR_LEAK_S = 60.0
_HELPERS = ("forkserver", "resource_tracker", "semaphore_tracker")  # exit with the coordinator


def steady_growth(values: Sequence[float], min_abs: float, min_rel: float = 0.2) -> bool:
    """True when ``values`` grow through the whole series: the medians of its four
    quarters strictly increase, by ``min_abs`` and ``min_rel`` (a fraction) in all.
    A warm-up followed by a plateau is not growth; fewer than 8 samples prove nothing.

    >>> steady_growth([10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21], min_abs=8)
    True
    >>> steady_growth([10, 30, 31, 30, 31, 30, 31, 30, 31, 30, 31, 30], min_abs=8)
    False
    """
    n = len(values)
    if n < 8:
        return False
    q = [statistics.median(values[i * n // 4 : (i + 1) * n // 4]) for i in range(4)]
    return (all(a < b for a, b in itertools.pairwise(q))
            and q[3] - q[0] >= min_abs and q[3] >= q[0] * (1 + min_rel))


class _Track:
    """One process's samples, thinned by halves so a long run keeps a bounded series."""

    def __init__(self, proc: psutil.Process, first: float) -> None:
        self.proc = proc
        self.first = first
        self.stride = 1
        self.count = 0
        self.rows: list[tuple[float, ...]] = []
        self.ended = False
        try:
            self.name = proc.name()
            self.cmd = " ".join(proc.cmdline())[:300]
        except psutil.Error:
            self.name, self.cmd = "?", ""

    def retire(self) -> None:
        """Its process is gone: keep a short series (every metric's peak row kept), so a
        run that kills and replaces workers for hours holds a few rows a process."""
        if len(self.rows) > ENDED_MAX:
            keep = set(range(0, len(self.rows), max(1, len(self.rows) // ENDED_MAX)))
            keep |= {max(range(len(self.rows)), key=lambda i: self.rows[i][m])
                     for m in range(1, len(self.rows[0]))}
            self.rows = [self.rows[i] for i in sorted(keep)]
        self.ended = True

    def add(self, row: tuple[float, ...]) -> None:
        if self.count % self.stride == 0:
            self.rows.append(row)
            if len(self.rows) > 2 * SERIES_MAX:
                self.rows = self.rows[::2]
                self.stride *= 2
        self.count += 1


class ProcessNames:
    """Which process (worker number, ``nemesis``, a reader) each pid was, folded one event
    at a time: one entry per process of the run."""

    def __init__(self) -> None:
        self.names: dict[int, Any] = {}

    def feed(self, e: Event) -> None:
        self.names.setdefault(e.pid, e.process)
        v = e.value if e.process == "nemesis" and isinstance(e.value, dict) else {}
        if v.get("replacement_pid"):  # a replacement may be killed before its first op
            self.names.setdefault(v["replacement_pid"], v["replaced_by"])


class Supervisor:
    """Samples the run's processes in a thread; see the module docstring."""

    def __init__(self, interval: float = SAMPLE_S) -> None:
        self.interval = interval
        self.root = psutil.Process()
        self.before: set[int] = set()
        self.tracks: dict[tuple[int, float], _Track] = {}
        self.stop = threading.Event()
        self.thread: threading.Thread | None = None
        self.t0 = 0.0

    def __enter__(self) -> Supervisor:
        self.t0 = time.monotonic()
        self.before = {p.pid for p in self._tree()}
        self.thread = threading.Thread(target=self._loop, name="harness-supervisor",
                                       daemon=True)
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        if self.thread is not None:
            self.thread.join()
        self.sample()  # processes that lived between the last tick and the end

    def _tree(self) -> list[psutil.Process]:
        try:
            return list(self.root.children(recursive=True))
        except psutil.Error:
            return []

    def _descendants(self) -> list[psutil.Process]:
        """The root's descendants but those of the processes that existed when the run
        began: a PostgreSQL server a test suite started (a child of the process that calls
        ``run()``) forks a backend for each connection, and one a run's worker opened is
        that server's, not the run's (killed as a leftover, its server restarted in crash
        recovery, and failed to)."""
        procs = self._tree()
        if not self.before:
            return procs
        parent: dict[int, int] = {}
        for p in procs:
            with contextlib.suppress(psutil.Error):
                parent[p.pid] = p.ppid()
        out = []
        for p in procs:
            pid = parent.get(p.pid)
            while pid is not None and pid != self.root.pid and pid not in self.before:
                pid = parent.get(pid)
            if pid is None or pid == self.root.pid:
                out.append(p)  # (an ancestor gone since the listing: the run's, as before)
        return out

    def _loop(self) -> None:
        while True:
            self.sample()
            if self.stop.wait(self.interval):
                return

    def sample(self) -> None:
        """One sample of the coordinator and every descendant started since entering; the
        tracks of the processes gone since are retired (:meth:`_Track.retire`)."""
        now = time.monotonic() - self.t0
        procs = [self.root, *self._descendants()]
        alive = {p.pid for p in procs}
        for t in self.tracks.values():
            if not t.ended and t.proc.pid not in alive:
                t.retire()
        for p in procs:
            if p.pid in self.before:
                continue
            try:
                key = (p.pid, p.create_time())
                track = self.tracks.get(key)
                if track is None:
                    track = self.tracks[key] = _Track(p, now)
                    track.proc.cpu_percent(None)  # the first call only starts the clock
                proc = track.proc
                with proc.oneshot():
                    row = (round(now, 3), round(proc.cpu_percent(None), 1),
                           proc.memory_info().rss, proc.num_fds(), len(proc.open_files()),
                           len(proc.net_connections(kind="inet")))
            except psutil.Error:  # gone, a zombie, or not ours to read
                continue
            track.add(row)

    def leftovers(self) -> list[dict[str, Any]]:
        """Processes this run started that are still alive; each is killed (the run
        owns them) and listed, since one existing at all is a harness bug."""
        alive: dict[int, psutil.Process] = {}
        for t in self.tracks.values():
            if t.proc.pid != self.root.pid:
                alive[t.proc.pid] = t.proc
        for p in self._descendants():
            if p.pid not in self.before:
                alive.setdefault(p.pid, p)
        out, killed = [], []
        for pid, p in sorted(alive.items()):
            try:
                if not p.is_running() or p.status() == psutil.STATUS_ZOMBIE:
                    continue
                cmd = " ".join(p.cmdline())
                if any(h in cmd for h in _HELPERS):
                    continue
                out.append({"pid": pid, "name": p.name(), "cmdline": cmd[:300]})
                p.kill()
                killed.append(p)
            except psutil.Error:
                continue
        psutil.wait_procs(killed, timeout=5)
        return out

    def report(self, events: Sequence[Event] | ProcessNames = ()) -> dict[str, Any]:
        """The ``resources`` section of report.json (call after the run, once), each pid
        named by the history (its events, or their :class:`ProcessNames`)."""
        if not isinstance(events, ProcessNames):
            fold = ProcessNames()
            for e in events:
                fold.feed(e)
            events = fold
        names = events.names
        procs: list[dict[str, Any]] = []
        leaks = []
        more: dict[str, int] = {}
        for (pid, _), t in sorted(self.tracks.items(), key=lambda kv: kv[1].first):
            entry = self._summary(t, names.get(pid))
            leaks += [{"pid": pid, "role": entry["role"], "metric": m,
                       "from": entry["series"][m][0], "to": entry["series"][m][-1]}
                      for m in entry["leak"]]
            if len(procs) < PROCESSES_MAX or entry["role"] in ("coordinator", "redis-server"):
                procs.append(entry)
            else:
                more[entry["role"]] = more.get(entry["role"], 0) + 1
        return {"interval_s": self.interval, "processes": procs, "processes_more": more,
                "leaks": leaks, "leftover": self.leftovers()}

    def _summary(self, t: _Track, process: Any) -> dict[str, Any]:
        pid = t.proc.pid
        if pid == self.root.pid:
            role = "coordinator"
        elif process == "nemesis":
            role = "nemesis"
        elif is_reader(process):
            role = "final-read"
        elif process is not None:
            role = "worker"
        elif "redis-server" in t.name or "redis-server" in t.cmd:
            role = "redis-server"
        else:
            role = "other"
        cols = list(zip(*t.rows, strict=True)) if t.rows else [()] * (len(METRICS) + 1)
        series = {"t": list(cols[0]), **{m: list(c) for m, c in zip(METRICS, cols[1:],
                                                                     strict=True)}}
        out: dict[str, Any] = {"pid": pid, "role": role, "name": t.name, "samples": t.count}
        if process is not None and role in ("worker", "final-read"):
            out["process"] = process
        if t.rows:
            out.update(first=series["t"][0], last=series["t"][-1],
                       cpu_avg=round(statistics.fmean(series["cpu"]), 1),
                       cpu_max=max(series["cpu"]), rss_max=max(series["rss"]),
                       fds_max=max(series["fds"]), files_max=max(series["files"]),
                       conns_max=max(series["conns"]))
        judged = role in LEAK_ROLES and (role != "coordinator" or (
            t.rows and t.rows[-1][0] - t.rows[0][0] >= COORDINATOR_LEAK_S))
        out["leak"] = [m for m, lim in LEAK_MIN.items()
                       if judged and steady_growth(series[m], lim)]
        out["series"] = series
        return out

