"""Where controlled mode's socket lives: in the run directory, so a coordinator killed with
SIGKILL leaves nothing in the system temp dir; in a short temp directory when the run
directory's path is too long for AF_UNIX, which the next run removes once its process is
gone."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from harness.runner.control.driver import SUN_PATH_MAX, socket_dir

REPO = Path(__file__).resolve().parents[2]


def _dead_pid() -> int:
    proc = subprocess.Popen(["true"])
    proc.wait()
    return proc.pid


def test_a_controlled_run_killed_with_sigkill_leaves_nothing_in_the_temp_dir(
        tmp_path: Path, request: pytest.FixtureRequest) -> None:
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    # a short reports path, whatever pytest's tmp_path is (xdist makes it longer): the
    # socket then fits in the run directory, the case this test is about
    reports = Path(tempfile.mkdtemp(prefix="hx-r-"))
    request.addfinalizer(lambda: shutil.rmtree(reports, ignore_errors=True))
    assert len(os.fsencode(reports / ("x" * 60) / ".control" / "ctl")) <= SUN_PATH_MAX
    env = {**os.environ, "PYTHONPATH": str(REPO), "TMPDIR": str(tmp)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "harness", "run", str(REPO / "scenarios" / "smoke.toml"),
         "--controlled", "--seed", "1", "--workers", "2", "--ops", "100000", "--duration", "120",
         "-q", "--reports", str(reports)], env=env, cwd=tmp_path,
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 120
        # the socket exists once the controller listens: the run is stepping its workers
        while not list(reports.glob("*/.control/ctl")):
            assert proc.poll() is None and time.monotonic() < deadline, "no control socket"
            time.sleep(0.05)  # awaiting a file another process makes: no event to wait on
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
    assert [p.name for p in tmp.iterdir() if p.name.startswith("hxc-")] == []


def test_a_run_dir_too_long_for_af_unix_falls_back_to_a_swept_temp_dir(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp))
    short = tmp_path / "run"
    short.mkdir()
    assert socket_dir(short) == (str(short.resolve() / ".control"), False)
    deep = tmp_path / ("d" * 60) / ("e" * 60)
    deep.mkdir(parents=True)
    assert len(os.fsencode(deep / ".control" / "ctl")) > SUN_PATH_MAX
    stale = tmp / f"hxc-{_dead_pid()}-abc"  # left by a run killed with SIGKILL
    live = tmp / f"hxc-{os.getpid()}-def"  # a run still going
    stale.mkdir()
    live.mkdir()
    where, temporary = socket_dir(deep)
    assert temporary and Path(where).parent == tmp and Path(where).name.startswith(
        f"hxc-{os.getpid()}-")
    assert not stale.exists() and live.exists()
    assert not (deep / ".control").exists()
