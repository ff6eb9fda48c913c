"""A verdict means what it says: a run whose workers did not all run to their end, that was
interrupted, or whose check did not finish never passes, and its report is always written.
Real worker processes, real SQLite files, real signals (tests/e2e/ending_stores.py)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import orjson
import pytest

from harness.errors import ScenarioError, TargetError
from harness.runner.coordinator import run
from harness.runner.streaming import RunStream
from harness.scenario import Scenario, from_dict, load_scenario

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
SCENARIOS = ROOT / "scenarios"


@pytest.fixture(autouse=True)
def importable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(HERE))  # fork start: the workers inherit sys.path


def _report(res: Any) -> dict[str, Any]:
    data: dict[str, Any] = orjson.loads((res.run_dir / "report.json").read_bytes())
    return data


def test_a_constructor_that_calls_sys_exit_is_a_setup_error(tmp_path: Path) -> None:
    with pytest.raises(TargetError, match="could not be opened: SystemExit"):
        run(Scenario(store="ending_stores:ExitingStore", seed=1, workers=2, ops=20),
            reports=tmp_path)


def test_an_append_that_raises_keyboard_interrupt_is_incomplete(tmp_path: Path) -> None:
    res = run(Scenario(store="ending_stores:InterruptingStore", seed=1, workers=2, ops=20),
              reports=tmp_path)
    assert res.result.valid is True  # nothing wrong in what ran: the run itself fell short
    assert (res.verdict, res.exit_code) == ("incomplete", 3)
    report = _report(res)
    assert report["verdict"] == "incomplete" and report["exit_code"] == 3
    assert [w["why"] for w in report["workers"]] == ["crashed", "crashed"]
    assert all(w["error"] == "KeyboardInterrupt: " and w["exit_code"] == 1
               for w in report["workers"])
    assert any("crashed: KeyboardInterrupt" in p for p in report["problems"])


def test_an_append_that_calls_os_exit_is_incomplete(tmp_path: Path) -> None:
    from ending_stores import VANISH_AFTER

    res = run(Scenario(store="ending_stores:VanishingStore", seed=1, workers=3, ops=40),
              reports=tmp_path)
    assert (res.verdict, res.exit_code) == ("incomplete", 3)
    for w in _report(res)["workers"]:
        assert w["why"] == "crashed" and w["exit_code"] == 0, w
        assert w["error"].startswith("ended without saying why (exit code 0)")
        assert w["ops"] < 40  # it ended after its VANISH_AFTER-th append, mid-stream
    assert VANISH_AFTER < 40


def test_a_constructor_that_hangs_ends_the_run_at_open_timeout(tmp_path: Path) -> None:
    sc = Scenario(store="ending_stores:HangingStore", seed=1, workers=2, ops=20,
                  duration=3, open_timeout=2)
    began = time.monotonic()
    with pytest.raises(TargetError, match="did not open its store within open_timeout = 2 s"):
        run(sc, reports=tmp_path)
    assert time.monotonic() - began < 30  # not the 133 s of a run that waited on it


def test_fewer_ops_than_min_ops_is_incomplete(tmp_path: Path) -> None:
    sc = Scenario(store="sqlite", seed=1, workers=2, ops=5, min_ops=5)
    assert run(sc, reports=tmp_path).verdict == "pass"
    res = run(sc.with_overrides(ops=4), reports=tmp_path)  # every slot plans 4: enough
    assert res.verdict == "pass"
    res = run(Scenario(store="ending_stores:VanishingStore", seed=1, workers=1, ops=40,
                       min_ops=30, weights={"append": 1}), reports=tmp_path)
    assert any("fewer than min_ops = 30" in p for p in res.problems), res.problems


def test_an_unknown_op_in_control_streams_is_refused_at_validation() -> None:
    with pytest.raises(ScenarioError, match=r"control\.streams: unknown op 'delete'"):
        from_dict({"workers": 1, "control": {"enabled": True, "streams": [
            [{"f": "delete", "session": "s0"}]]}})


def test_an_unknown_op_in_control_streams_exits_2(tmp_path: Path) -> None:
    sc = tmp_path / "s.toml"
    sc.write_text('workers = 1\n[control]\nenabled = true\n'
                  'streams = [[{f = "delete", session = "s0"}]]\n')
    r = subprocess.run([sys.executable, "-m", "harness", "run", str(sc), "--reports",
                        str(tmp_path / "r")], cwd=ROOT, capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 2, r.stderr
    assert "unknown op 'delete'" in r.stderr and len(r.stderr.splitlines()) == 1


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP])
def test_a_run_interrupted_while_the_workers_run_exits_3(
        sig: signal.Signals, tmp_path: Path) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "harness", "run", str(SCENARIOS / "smoke.toml"), "--ops",
         "30000", "--duration", "120", "--reports", str(tmp_path), "-q"], cwd=tmp_path,
        text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 60
        while not any(p.stat().st_size > 10_000 for p in tmp_path.glob("*/history/*.jsonl")):
            assert time.monotonic() < deadline and proc.poll() is None, "never started"
            time.sleep(0.05)  # awaiting the workers' first events: a file has no event
        os.kill(proc.pid, sig)
        out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 3, out + err
    assert "INTERRUPTED" in out
    (report,) = tmp_path.glob("*/report.json")
    data = orjson.loads(report.read_bytes())
    assert data["verdict"] == "interrupted" and data["interrupted"] is True
    assert data["stats"]["worker_ops"] > 20
    assert {w["why"] for w in data["workers"]} == {"stopped"}


def _signal_self(sig: signal.Signals, times: int) -> Any:
    def progress(event: str, _data: dict[str, Any]) -> None:
        if event == "check":  # the workers are done, the check about to run
            for _ in range(times):
                os.kill(os.getpid(), sig)
    return progress


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_after_the_workers_lets_the_check_finish_and_writes_the_report(
        sig: signal.Signals, tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    sc = load_scenario(SCENARIOS / "smoke.toml").with_overrides(seed=2, ops=40)
    res = run(sc, reports=tmp_path, progress=_signal_self(sig, 1))
    assert res.verdict == "pass" and res.result.valid is True
    data = _report(res)
    assert data["verdict"] == "pass" and data["stats"]["late_signals"] == [sig.name]
    assert f"{sig.name}: the workers have stopped" in capfd.readouterr().err


def test_a_second_signal_during_the_check_cuts_it_short_and_the_verdict_is_unknown(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capfd: pytest.CaptureFixture[str]) -> None:
    real = RunStream.finish

    def check_signalled(*args: Any, **kw: Any) -> Any:
        os.kill(os.getpid(), signal.SIGINT)  # the first: the check goes on
        assert "letting the check finish" in capfd.readouterr().err
        os.kill(os.getpid(), signal.SIGINT)  # the second: cut here
        return real(*args, **kw)

    monkeypatch.setattr(RunStream, "finish", check_signalled)
    sc = load_scenario(SCENARIOS / "smoke.toml").with_overrides(seed=3, ops=40)
    res = run(sc, reports=tmp_path)
    assert (res.verdict, res.exit_code) == ("unknown", 3)
    data = _report(res)
    assert data["verdict"] == "unknown" and data["check"]["valid"] == "unknown"
    assert data["check"]["error"] == "the check was cut short by a second SIGINT"
    assert "cutting the check short" in capfd.readouterr().err


def test_a_signal_during_the_check_lets_it_finish(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capfd: pytest.CaptureFixture[str]) -> None:
    real = RunStream.finish

    def check_signalled(*args: Any, **kw: Any) -> Any:
        os.kill(os.getpid(), signal.SIGTERM)
        return real(*args, **kw)

    monkeypatch.setattr(RunStream, "finish", check_signalled)
    sc = load_scenario(SCENARIOS / "smoke.toml").with_overrides(seed=4, ops=40)
    res = run(sc, reports=tmp_path)
    assert res.verdict == "pass" and res.result.valid is True
    assert "SIGTERM: letting the check finish" in capfd.readouterr().err
    assert _report(res)["check"]["valid"] is True

