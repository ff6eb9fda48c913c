"""Bad input of every kind, as a user types it: exit 2 and one line on stderr, never a
traceback; output that cannot be written, and Ctrl-C before a verdict, with their own codes."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import orjson
import psutil
import pytest

REPO = Path(__file__).resolve().parents[2]
SMOKE = str(REPO / "scenarios" / "smoke.toml")

#: Stores that fail while their module is imported (the spec is ``badstores.<name>:make``).
BAD_STORES = {
    "raises": "raise RuntimeError('no config file')\n",
    "syntax": "def make(url:\n",
    "exits": "import sys\nsys.exit(7)\n",
    "caps": "class make:\n    capabilities = 5\n    def append(self, s, r, c): pass\n",
    # imports fine, fails as each worker opens it (after the target started)
    "opens": ("class make:\n    backend = 'sqlite'\n"
              "    def __init__(self, url, namespace=''): raise RuntimeError('no table')\n"
              "    def append(self, s, r, c): pass\n    def history(self, s): return []\n"),
}


def harness(*args: str, cwd: Path, stdout: Any = subprocess.PIPE) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), str(cwd)])}
    return subprocess.run([sys.executable, "-m", "harness", *args], cwd=cwd, text=True,
                          stdout=stdout, stderr=subprocess.PIPE, timeout=300, env=env)


def one_line_exit_2(r: subprocess.CompletedProcess[str], reason: str) -> None:
    """Exit 2, one line saying why (besides the "target:" line a run that started prints)."""
    assert r.returncode == 2, (r.stdout or "") + r.stderr
    assert "Traceback" not in r.stderr
    lines = [ln for ln in r.stderr.splitlines() if not ln.startswith("target: ")]
    assert len(lines) == 1 and reason in lines[0], r.stderr


@pytest.mark.parametrize("args, reason", [
    (["--workers", "1000000000"], "workers must be at most 1024"),
    (["--sessions", "1000000000"], "sessions must be at most 10000"),
    (["--ops", "1000000000000"], "ops must be at most"),
    (["--duration", "1e12"], "is not in the range 0<x<=604800"),
    (["--duration", "inf"], "inf is not in the range 0<x<=604800"),
    (["--duration", "nan"], "not a finite number of seconds"),
    (["--seed", str(2**64)], "is not in the range 0<=x<=18446744073709551615"),
    (["--redis-url", "not-a-url", "--store", "redis"], "not a Redis URL"),
    (["--redis-url", "redis://127.0.0.1:99999/0", "--store", "redis"], "Port out of range"),
    (["--redis-url", "http://127.0.0.1:6379/0", "--store", "redis"], "not a Redis URL"),
    (["--store", ".relative:X"], "relative module name"),
    (["--store", "badstores.raises:make"], "RuntimeError: no config file"),
    (["--store", "badstores.syntax:make"], "SyntaxError"),
    (["--store", "badstores.exits:make"], "called sys.exit(7)"),
    (["--store", "badstores.caps:make"], "capabilities must be a set"),
    (["--store", "badstores.opens:make"], "could not be opened: RuntimeError: no table"),
    (["--workerz", "3"], "No such option"),
])
def test_run_refuses_with_one_line(args: list[str], reason: str, tmp_path: Path) -> None:
    (tmp_path / "badstores").mkdir()
    for name, code in BAD_STORES.items():
        (tmp_path / "badstores" / f"{name}.py").write_text(code, encoding="utf-8")
    r = harness("run", SMOKE, "--reports", str(tmp_path / "r"), *args, cwd=tmp_path)
    one_line_exit_2(r, reason)
    assert not (tmp_path / "r").exists() or not any((tmp_path / "r").iterdir())


@pytest.mark.parametrize("toml, reason", [
    ('name = "a\\u0000b"', "name must not contain '/' or a NUL"),
    ('name = "../up"', "name must not contain '/'"),
    ('name = ".."', "name must be a usable directory name"),
    (f'name = "{"x" * 300}"', "name must be at most 100 bytes"),
    ("[redis]\nurl = 5", "redis.url must be a string"),
    ("[payload]\nmax_bytes = 10000000000", "payload.max_bytes must be at most"),
    ("duration = inf", "duration must be a positive number"),
    ("seed = 18446744073709551616", "seed must be an integer from 0 to 2**64 - 1"),
])
def test_scenario_files_past_the_bounds_are_refused(toml: str, reason: str,
                                                    tmp_path: Path) -> None:
    (tmp_path / "s.toml").write_text(toml + "\n", encoding="utf-8")
    r = harness("run", "s.toml", "--reports", str(tmp_path / "r"), cwd=tmp_path)
    one_line_exit_2(r, reason)


EVENT = '{"index":0,"time":1,"process":0,"pid":1,"type":"invoke","f":"read","session":"s0"}'


@pytest.mark.parametrize("content, reason", [
    ("", "no events"),
    ("\n \n", "no events"),
    ("[1, 2]\n" + EVENT + "\n", "not an object"),
    (EVENT.replace('"invoke"', '"zzz"') + "\n" + EVENT + "\n", "unknown type 'zzz'"),
    (EVENT.replace('"read"', '"frob"') + "\n" + EVENT + "\n", "unknown f 'frob'"),
])
def test_check_refuses_what_is_not_a_history(content: str, reason: str, tmp_path: Path) -> None:
    (tmp_path / "h.jsonl").write_text(content, encoding="utf-8")
    one_line_exit_2(harness("check", "h.jsonl", cwd=tmp_path), reason)


def test_check_refuses_dev_null_and_a_directory_without_logs(tmp_path: Path) -> None:
    one_line_exit_2(harness("check", "/dev/null", cwd=tmp_path), "no events")
    (tmp_path / "empty").mkdir()
    one_line_exit_2(harness("check", "empty", cwd=tmp_path), "no history.jsonl and no")


@pytest.fixture(scope="module")
def controlled_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small controlled run that finds its lost turn (for replay and shrink)."""
    tmp = tmp_path_factory.mktemp("ctl")
    r = harness("run", str(REPO / "scenarios" / "sqlite-max-turn-race.toml"), "--controlled",
                "--seed", "1", "--workers", "2", "--ops", "20", "-q", "--reports", str(tmp),
                cwd=tmp)
    assert r.returncode in (0, 1), r.stderr
    (run_dir,) = tmp.iterdir()
    return run_dir


@pytest.mark.parametrize("trace, reason", [
    ("{not json", "unreadable trace"),
    ("[1, 2, 3]", "not a trace: a JSON list"),
    ('{"strategy": "pct", "seed": 1, "workers": 2, "grants": "abc"}', "grants must be a list"),
    ('{"strategy": "pct", "seed": 1, "workers": 2, "faults": [1]}', "faults must be a list"),
])
def test_replay_refuses_a_malformed_trace(controlled_run: Path, trace: str, reason: str,
                                          tmp_path: Path) -> None:
    import shutil

    run_dir = tmp_path / "run"
    shutil.copytree(controlled_run, run_dir)
    (run_dir / "trace.json").write_text(trace, encoding="utf-8")
    r = harness("replay", str(run_dir), "--reports", str(tmp_path / "r"), cwd=tmp_path)
    one_line_exit_2(r, reason)


def test_shrink_refuses_a_run_without_report_and_an_unwritable_out(controlled_run: Path,
                                                                   tmp_path: Path) -> None:
    import shutil

    run_dir = tmp_path / "run"
    shutil.copytree(controlled_run, run_dir)
    (tmp_path / "file").write_text("", encoding="utf-8")
    # a path under a regular file cannot be made, even by root (chmod would not stop root)
    one_line_exit_2(harness("shrink", str(run_dir), "--out", str(tmp_path / "file" / "x"),
                            cwd=tmp_path), "cannot write to")
    (run_dir / "report.json").unlink()
    one_line_exit_2(harness("shrink", str(run_dir), cwd=tmp_path), "no report.json")


TINY = ["run", SMOKE, "--seed", "3", "--workers", "2", "--ops", "10", "-q"]


def test_a_reader_closing_the_pipe_leaves_the_verdict(tmp_path: Path) -> None:
    """``harness run ... | head -1``: the reader has gone before the summary is printed."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        r = harness(*TINY, "--reports", str(tmp_path / "r"), cwd=tmp_path, stdout=write_end)
    finally:
        os.close(write_end)
    assert r.returncode == 0, r.stderr
    assert [ln for ln in r.stderr.splitlines() if ln.strip()] == [
        ln for ln in r.stderr.splitlines() if ln.startswith("target: ")], r.stderr


def test_stdout_on_a_full_device_is_exit_2_with_one_line(tmp_path: Path) -> None:
    with open("/dev/full", "w") as full:
        r = harness(*TINY, "--reports", str(tmp_path / "r"), cwd=tmp_path, stdout=full)
    one_line_exit_2(r, "cannot write the output to stdout: No space left on device")
    with open("/dev/full", "w") as full:
        r = harness("stores", cwd=tmp_path, stdout=full)
    one_line_exit_2(r, "No space left on device")


def test_a_million_planned_ops_per_worker_start_at_once_and_ctrl_c_still_reports(
        tmp_path: Path) -> None:
    """There is no plan to build (workers draw their ops as they run them): with a
    million ops per worker the workers log their first ops while the coordinator is still
    small, and a SIGINT then stops the run with its report written, not exit 130."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "harness", "run", SMOKE, "--workers", "4", "--ops", "1000000",
         "-q", "--reports", str(tmp_path / "r")], cwd=tmp_path, text=True, env=env,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    me, deadline = psutil.Process(proc.pid), time.monotonic() + 60
    while not any(p.stat().st_size > 0 for p in tmp_path.glob("r/*/history/0.jsonl")):
        assert time.monotonic() < deadline and proc.poll() is None, "no worker ever started"
        time.sleep(0.05)  # awaiting a file's growth: there is no event to wait on
    assert me.memory_info().rss < 150 * 2**20  # no plan held
    os.kill(proc.pid, signal.SIGINT)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 3, out + err  # interrupted: never a pass
    (report,) = tmp_path.glob("r/*/report.json")
    assert orjson.loads(report.read_bytes())["interrupted"] is True


def test_an_unknown_backend_is_refused_before_anything_starts(tmp_path: Path) -> None:
    """``backend = "mongodb"`` used to pass validation and fail once a redis-server had
    started; now the scenario is refused as it is read: no run directory, no target."""
    (tmp_path / "s.toml").write_text('store = "redis"\nbackend = "mongodb"\n', encoding="utf-8")
    r = harness("run", "s.toml", "--reports", str(tmp_path / "r"), cwd=tmp_path)
    one_line_exit_2(r, "backend must be 'sqlite' or 'redis' or 'postgres', got 'mongodb'")
    assert not (tmp_path / "r").exists()
    assert "target: " not in r.stderr  # no target was made


def test_a_target_that_cannot_be_reached_leaves_no_run_directory(tmp_path: Path) -> None:
    r = harness(*TINY, "--store", "redis", "--redis-url", "redis://127.0.0.1:1/0",
                "--reports", str(tmp_path / "r"), cwd=tmp_path)
    one_line_exit_2(r, "cannot reach Redis at redis://127.0.0.1:1/0")
    assert not (tmp_path / "r").exists() or not any((tmp_path / "r").iterdir())
