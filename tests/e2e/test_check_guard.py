"""A checker that raises gives an unknown verdict with the error in the report, never a
missing report: a real run, and ``harness check``, with the checker made to raise."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
from click.testing import CliRunner

import harness.checker
from harness.checker import CheckResult
from harness.checker.stream import StreamChecker
from harness.cli import cli
from harness.runner.coordinator import run
from harness.scenario import load_scenario

SCENARIOS = Path(__file__).resolve().parents[2] / "scenarios"


def _raise(*_: object, **__: object) -> CheckResult:
    raise RuntimeError("a bug in the checker")


def test_a_run_whose_checker_raises_reports_unknown_with_the_error(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(StreamChecker, "finish", _raise)
    sc = load_scenario(SCENARIOS / "smoke.toml").with_overrides(seed=3, ops=30)
    res = run(sc, reports=tmp_path)
    assert res.result.valid is None
    assert res.result.error == "RuntimeError: a bug in the checker"
    assert (res.verdict, res.exit_code) == ("unknown", 3)  # unknown is never a pass
    report = orjson.loads((res.run_dir / "report.json").read_bytes())
    assert report["check"]["valid"] == "unknown"
    assert report["check"]["error"] == "RuntimeError: a bug in the checker"
    assert "_raise" in report["check"]["stats"]["traceback"]
    assert report["exit_code"] == 3 and report["stats"]["ops"] > 0


def test_harness_check_whose_checker_raises_says_unknown_and_exits_3(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    sc = load_scenario(SCENARIOS / "smoke.toml").with_overrides(seed=4, ops=30)
    run_dir = run(sc, reports=tmp_path).run_dir
    # a run directory is checked through the streaming path, a history file by check()
    monkeypatch.setattr(StreamChecker, "finish", _raise)
    monkeypatch.setattr(harness.checker, "check", _raise)
    out = CliRunner().invoke(cli, ["check", str(run_dir)])
    assert out.exit_code == 3, out.output
    assert "UNKNOWN: the checker raised RuntimeError: a bug in the checker" in out.output
    recheck = orjson.loads((run_dir / "recheck.json").read_bytes())
    assert recheck["valid"] == "unknown" and recheck["error"].startswith("RuntimeError")
