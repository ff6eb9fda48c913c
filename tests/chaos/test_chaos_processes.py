"""No process the harness starts outlives a run: not when the nemesis kills workers and
the server, and not when the coordinator itself gets SIGINT (to it, or to its whole
process group, as Ctrl-C in a terminal does), SIGTERM or even SIGKILL. And the supervisor
samples every process and flags steady growth."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import orjson
import psutil
import pytest
from chaoslib import CHAOS, alive

from harness.checker import check
from harness.history import read_history
from harness.result import RunResult

Pid = tuple[int, float]


def _descendants(pid: int) -> set[Pid]:
    out: set[Pid] = set()
    try:
        kids = psutil.Process(pid).children(recursive=True)
    except psutil.Error:
        return out
    for k in kids:
        with contextlib.suppress(psutil.Error):
            out.add((k.pid, k.create_time()))
    return out


def _watch(proc: subprocess.Popen[bytes], done: Callable[[set[Pid]], bool],
           timeout: float = 60) -> set[Pid]:
    """Every descendant of ``proc`` seen until ``done(seen)`` (or ``proc`` exits)."""
    seen: set[Pid] = set()
    end = time.monotonic() + timeout
    while not done(seen) and proc.poll() is None:
        assert time.monotonic() < end, "the run never got there"
        seen |= _descendants(proc.pid)
        time.sleep(0.02)  # polling: nothing notifies us of a grandchild's birth
    return seen


def _start(tmp_path: Path, backend: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "harness", "run", str(CHAOS[backend]), "--seed", "3",
         "--duration", "30", "--reports", str(tmp_path / "r"), "-q"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)


def _faulted(tmp_path: Path, n: int) -> Callable[[set[Pid]], bool]:
    """True once the nemesis has logged ``n`` faults (workers replaced, helpers started)."""
    def done(_seen: set[Pid]) -> bool:
        # faults applied: their start lines (a lasting fault's end is a line too)
        logs = list((tmp_path / "r").glob("*/history/nemesis.jsonl"))
        lines = logs[0].read_bytes().split(b"\n")[:-1] if logs else []
        return sum(b'"phase":"end"' not in line for line in lines) >= n
    return done


@pytest.mark.parametrize("backend, sig, group", [
    ("sqlite", signal.SIGINT, False),
    ("redis", signal.SIGINT, True),
    ("sqlite", signal.SIGTERM, False),
    ("redis", signal.SIGTERM, False),
])
def test_interrupted_run_leaves_no_process_and_still_reports(
        backend: str, sig: signal.Signals, group: bool, tmp_path: Path) -> None:
    proc = _start(tmp_path, backend)
    try:
        seen = _watch(proc, _faulted(tmp_path, 3))
        assert proc.poll() is None, proc.communicate()
        (os.killpg if group else os.kill)(proc.pid, sig)
        seen |= _watch(proc, lambda _s: False)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    assert len(seen) >= 5, seen  # workers, replacements, the server or the lock holders
    assert [p for p in seen if alive(*p)] == []
    (report,) = (tmp_path / "r").glob("*/report.json")
    data = orjson.loads(report.read_bytes())
    assert data["interrupted"] is True, err
    assert data["resources"]["leftover"] == []
    assert data["faults"]["applied"] >= 3
    # the signal landed while the history was being merged and checked: every event was
    # still fed, and the verdict is the batch checker's (a torn merge read as phantoms)
    events = read_history(report.parent)
    assert data["stats"]["events"] == len(events)
    assert data["check"]["counts"] == check(events).counts() == {}


def test_killed_coordinator_takes_its_processes_with_it(tmp_path: Path) -> None:
    proc = _start(tmp_path, "redis")
    try:
        seen = _watch(proc, _faulted(tmp_path, 2))
        os.kill(proc.pid, signal.SIGKILL)  # no finally runs: PR_SET_PDEATHSIG must do it
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    end = time.monotonic() + 10
    while [p for p in seen if alive(*p)] and time.monotonic() < end:
        time.sleep(0.02)  # the kernel delivers the parent-death signals asynchronously
    assert [p for p in seen if alive(*p)] == []


def test_supervisor_samples_every_process_and_flags_steady_growth(
        chaos: Callable[..., RunResult]) -> None:
    # The leaky store's appends take 2 ms, so both workers live the run's 4 s (about 19
    # samples each at 0.2 s) however fast the machine; 8 are the least a leak needs
    # forkserver: a worker forked from the test process would start at its RSS (hundreds of
    # MB late in a full run), which the leak must then grow by a fifth
    res = chaos("sqlite", "leaky_store:LeakyStore", (), workers=2, ops=20000, duration=4.0,
                start_method="forkserver")
    resources = res.stats["resources"]
    workers = [p for p in resources["processes"] if p["role"] == "worker"]
    assert len(workers) == 2 and all(p["samples"] >= 8 for p in workers)
    assert all(set(p["series"]) == {"t", "cpu", "rss", "fds", "files", "conns"}
               for p in resources["processes"])
    leaks = {(x["pid"], x["metric"]) for x in resources["leaks"]}
    for w in workers:
        assert {(w["pid"], "rss"), (w["pid"], "fds")} <= leaks, resources["leaks"]
    assert resources["leftover"] == []


def test_a_server_started_before_the_run_keeps_the_children_it_forks_during_it() -> None:
    """A process that existed before the run (a test suite's PostgreSQL, which forks a
    backend for each connection a worker opens) is not the run's, nor is what it forks
    while the run goes on: not sampled, not killed as a leftover. A process the run
    starts itself still is."""
    from harness.runner.supervise import Supervisor

    server = subprocess.Popen(  # forks a child when told to, as a server does per connection
        [sys.executable, "-c", "import subprocess, sys; sys.stdin.readline(); "
         "c = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)']); "
         "print(c.pid, flush=True); sys.stdin.readline()"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert server.stdin is not None and server.stdout is not None
    ours = None
    try:
        with Supervisor(interval=0.05) as sup:
            server.stdin.write("fork\n")
            server.stdin.flush()
            forked = int(server.stdout.readline())
            ours = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
            sup.sample()
        left = {x["pid"] for x in sup.leftovers()}
        assert left == {ours.pid}
        ours.wait(timeout=10)  # (killed and reaped by the supervisor)
        assert not psutil.pid_exists(ours.pid)
        assert psutil.Process(forked).status() != psutil.STATUS_ZOMBIE  # left alone
        assert forked not in {pid for pid, _ in sup.tracks}
        assert ours.pid in {pid for pid, _ in sup.tracks}
    finally:
        with contextlib.suppress(psutil.Error):
            for p in psutil.Process(server.pid).children(recursive=True):
                p.kill()
        server.kill()
        server.wait()
        if ours is not None and ours.poll() is None:
            ours.kill()
            ours.wait()
