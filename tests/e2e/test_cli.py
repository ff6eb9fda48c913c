"""The ``harness`` command as a user runs it: exit codes and one-line errors."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

SCENARIOS = Path(__file__).resolve().parents[2] / "scenarios"


def harness(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "harness", *args], cwd=cwd, text=True,
                          capture_output=True, timeout=300)


def test_smoke_run_passes_and_prints_how_to_reproduce(tmp_path: Path) -> None:
    r = harness("run", str(SCENARIOS / "smoke.toml"), "--seed", "2", "--ops", "40",
                "--reports", str(tmp_path / "r"), cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "PASS" in r.stdout
    assert "reproduce: harness run " in r.stdout and "--seed 2" in r.stdout
    (run_dir,) = (tmp_path / "r").iterdir()
    assert {"report.json", "history", "scenario.toml", "plan.json"} <= {
        p.name for p in run_dir.iterdir()}
    again = harness("check", str(run_dir), cwd=tmp_path)
    assert again.returncode == 0, again.stdout + again.stderr


def test_duration_without_ops_runs_as_many_ops_as_fit(tmp_path: Path) -> None:
    """``--duration`` without ``--ops``: unlimited ops, the run lasts its duration (free
    mode); the reproduce command says so. Controlled mode keeps the scenario's ops."""
    import json

    r = harness("run", str(SCENARIOS / "smoke.toml"), "--seed", "2", "--duration", "1.5", "-q",
                "--reports", str(tmp_path / "r"), cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "--ops unlimited" in r.stdout
    (run_dir,) = (tmp_path / "r").iterdir()
    report = json.loads((run_dir / "report.json").read_text())
    assert report["ops_per_worker"] is None
    assert report["stats"]["worker_ops"] > 4 * 150  # more than smoke.toml's ops = 150
    ctl = harness("run", str(SCENARIOS / "smoke.toml"), "--seed", "2", "--duration", "30",
                  "--controlled", "-q", "--reports", str(tmp_path / "c"), cwd=tmp_path)
    assert ctl.returncode == 0, ctl.stdout + ctl.stderr
    assert "--ops 150" in ctl.stdout
    bad = harness("run", str(SCENARIOS / "smoke.toml"), "--ops", "unlimited", "--controlled",
                  cwd=tmp_path)
    assert bad.returncode == 2 and "controlled mode needs a number of ops" in bad.stderr


def test_rmw_race_exits_1_naming_lost_turns(tmp_path: Path) -> None:
    r = harness("run", str(SCENARIOS / "redis-append-race.toml"), "--store",
                "zoo.redis-rmw-append", "--seed", "4", "--reports", str(tmp_path), cwd=tmp_path)
    assert r.returncode == 1, r.stdout + r.stderr
    assert "lost-turn" in r.stdout


@pytest.mark.parametrize("args, reason", [
    (["run", "missing.toml"], "scenario file not found"),
    (["run", "{bad}", "--store", "nope"], "malformed TOML"),
    (["run", "{smoke}", "--store", "nope"], "unknown store 'nope'"),
    (["run", "{smoke}", "--store", "no_such_pkg.mod:make"], "cannot import"),
    (["run", "{smoke}", "--workers", "0"], "--workers"),
    (["run", "{smoke}", "--store", "redis", "--redis-url", "redis://127.0.0.1:1/0"],
     "cannot reach Redis"),
    (["run", "{smoke}", "--reports", "/proc/forbidden"], "cannot write run directory"),
    (["check", "nowhere"], "no such file"),
])
def test_bad_input_is_one_line_and_exit_2(args: list[str], reason: str, tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text("workers = [", encoding="utf-8")
    args = [a.format(bad=bad, smoke=SCENARIOS / "smoke.toml") for a in args]
    r = harness(*args, cwd=tmp_path)
    assert r.returncode == 2, r.stdout + r.stderr
    assert reason in r.stderr
    assert "Traceback" not in r.stderr
    assert len([ln for ln in r.stderr.splitlines() if ln.strip()]) <= 3


def test_stores_lists_every_builtin(tmp_path: Path) -> None:
    r = harness("stores", cwd=tmp_path)
    assert r.returncode == 0
    from harness.stores import BUILTINS
    from harness.stores.thirdparty import ADAPTERS

    lines = r.stdout.strip().splitlines()
    assert len(lines) == len(BUILTINS) + len(ADAPTERS)
    assert any(ln.startswith("langgraph.sqlite ") and "harness[langgraph]" in ln for ln in lines)


def test_ctrl_c_stops_workers_and_still_writes_the_report(tmp_path: Path) -> None:
    import os
    import signal
    import time

    proc = subprocess.Popen(
        [sys.executable, "-m", "harness", "run", str(SCENARIOS / "smoke.toml"), "--ops", "30000",
         "--duration", "120", "--reports", str(tmp_path)], cwd=tmp_path, text=True,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 60
    while not any(p.stat().st_size > 10_000 for p in tmp_path.glob("*/history/*.jsonl")):
        assert time.monotonic() < deadline and proc.poll() is None, "the run never started"
        time.sleep(0.05)  # awaiting the workers' first events: a file has no event to wait on
    os.kill(proc.pid, signal.SIGINT)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 3, out + err  # interrupted: never a pass
    assert "interrupted" in out
    (run_dir,) = tmp_path.iterdir()
    report = __import__("json").loads((run_dir / "report.json").read_text())
    assert report["interrupted"] is True and report["stats"]["ops"] > 20
    assert report["verdict"] == "interrupted" and report["exit_code"] == 3


def test_a_stop_signal_whose_exception_was_swallowed_still_stops_the_run() -> None:
    """A stop signal whose exception something drops (a restart fault's ``except
    Exception``, a ``__del__``, an at-fork hook: a Ctrl-C lost that way once let a run go
    on to its end, 2 runs in 15) still stops the run at the coordinator's next check."""
    import os
    import signal

    from harness.runner.stop import Interrupted, check_stop, stop_signals_as_interrupt

    before = signal.getsignal(signal.SIGINT)  # (ignored where a shell started it in the background)
    with stop_signals_as_interrupt():
        check_stop()  # nothing asked yet
        try:
            os.kill(os.getpid(), signal.SIGINT)
            signal.pthread_sigmask(signal.SIG_BLOCK, [])  # a system call: the handler runs
        except KeyboardInterrupt:
            pass  # swallowed, as an at-fork hook or a __del__ would
        with pytest.raises(Interrupted, match="SIGINT"):
            check_stop()
    check_stop()  # forgotten once the run is over
    assert signal.getsignal(signal.SIGINT) is before  # the handler it found is back


def test_a_stop_signal_during_a_fork_waits_until_the_worker_is_listed() -> None:
    """While a worker is started, a Ctrl-C is only remembered (raised inside the fork's
    hooks it would be printed and dropped; raised after the fork, before the caller lists
    the new process, it would leave that process unreaped); the next check raises it."""
    import os
    import signal
    from pathlib import Path
    from types import SimpleNamespace

    from harness.runner.launch import LocalLauncher
    from harness.runner.stop import Interrupted, check_stop, stop_signals_as_interrupt

    def start() -> None:  # stands for the fork: the signal lands in the middle of it
        os.kill(os.getpid(), signal.SIGINT)
        signal.pthread_sigmask(signal.SIG_BLOCK, [])  # a system call: the handler runs

    started = SimpleNamespace(start=start)
    import multiprocess

    real = multiprocess.get_context("fork")  # its pipe and barrier; the fork stands in
    ctx = SimpleNamespace(Process=lambda **_: started, Pipe=real.Pipe, Event=real.Event,
                          Value=real.Value)
    launcher = LocalLauncher(Path("unused"), ctx)
    with stop_signals_as_interrupt():
        spec = SimpleNamespace(process=0, log_path="0.jsonl", slot=0)
        handles = [launcher.start(spec)]  # type: ignore[arg-type]  # raises nothing
        assert handles[0].process is started
        with pytest.raises(Interrupted, match="SIGINT"):
            check_stop()
