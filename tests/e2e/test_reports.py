"""What CI reads of a run: report.json against its JSON Schema, junit.xml, and ``harness
gate``'s verdicts and exit codes."""

from __future__ import annotations

import json
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import jsonschema
import pytest

import harness.report
from harness.report.gate import GateRules, judge
from harness.runner.coordinator import run
from harness.scenario import load_scenario

SCENARIOS = Path(__file__).resolve().parents[2] / "scenarios"
SCHEMA = json.loads((Path(harness.report.__file__).parent / "report.schema.json").read_text())


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A failing run (a zoo store), a passing one with faults."""
    tmp = tmp_path_factory.mktemp("reports")
    # a pickle written on another host reads back as []: lost turns in every seed (the
    # max-turn race it replaced shows only when two appends collide: a loaded CI missed it)
    fail = run(load_scenario(SCENARIOS / "redis-pickle.toml").with_overrides(
        seed=1, ops=60), reports=tmp)
    chaos = run(load_scenario(SCENARIOS / "chaos-sqlite.toml").with_overrides(
        seed=3, ops="unlimited", duration=2.0), reports=tmp)
    assert (fail.verdict, chaos.verdict) == ("fail", "pass")
    return {"fail": fail.run_dir, "pass": chaos.run_dir}


def _report(d: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((d / "report.json").read_text())
    return data


@pytest.mark.parametrize("which", ["fail", "pass"])
def test_report_json_follows_its_schema(runs: dict[str, Path], which: str) -> None:
    jsonschema.Draft202012Validator.check_schema(SCHEMA)
    report = _report(runs[which])
    jsonschema.Draft202012Validator(SCHEMA).validate(report)
    library = "redis-py" if which == "fail" else "sqlite"  # what the run's backend talks through
    assert report["schema_version"] == 1 and report["libraries"][library]
    perf = report["perf"]  # throughput and latency, per op kind and per window
    assert {"append", "read"} <= set(perf["by_kind"]) and perf["windows"]
    assert all(k["p50_ms"] <= k["p99_ms"] for k in perf["by_kind"].values())
    broken = dict(report, verdict="maybe")
    assert list(jsonschema.Draft202012Validator(SCHEMA).iter_errors(broken))


def test_junit_has_a_case_per_invariant_and_the_evidence_of_each_failure(
        runs: dict[str, Path]) -> None:
    failed = ET.parse(runs["fail"] / "junit.xml").getroot()
    (suite,) = failed.findall("testsuite")
    cases = {c.get("name"): c for c in suite.findall("testcase")}
    assert {"run completed", "check finished", "no lost-turn", "no bad-rollback"} <= set(cases)
    assert int(suite.get("tests", 0)) == len(cases) and suite.get("failures") == "1"
    failure = cases["no lost-turn"].find("failure")
    assert failure is not None and "was acknowledged by process" in failure.get("message", "")
    assert "reproduce: harness run" in (failure.text or "") and "#" in (failure.text or "")
    passed = ET.parse(runs["pass"] / "junit.xml").getroot().find("testsuite")
    assert passed is not None and passed.get("failures") == "0"


def harness_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "harness", *args], text=True,
                          capture_output=True, timeout=120)


def test_gate_exit_codes_as_ci_reads_them(runs: dict[str, Path]) -> None:
    ok, bad = str(runs["pass"]), str(runs["fail"])
    r = harness_cli("gate", ok)
    assert r.returncode == 0 and r.stdout.startswith("PASS ") and "1 of 1 runs passed" in r.stdout
    r = harness_cli("gate", ok, bad)
    assert r.returncode == 1 and "FAIL " in r.stdout and "lost-turn x" in r.stdout
    assert "1 of 2 runs passed" in r.stdout
    assert harness_cli("gate", bad, "--allow", "lost-turn").returncode == 0
    r = harness_cli("gate", ok, "--min-ops", "10000000", "--min-coverage", "read+read=100000")
    assert r.returncode == 1 and "fewer than --min-ops" in r.stdout
    assert "read+read overlapped" in r.stdout
    assert harness_cli("gate", ok, "--require-faults").returncode == 0  # faults landed
    for args, message in [(["/no/such/run"], "no report.json there"),
                          ([ok, "--allow", "lost-turns"], "not a violation kind"),
                          ([ok, "--min-coverage", "read=3"], "is not PAIR=N")]:
        r = harness_cli("gate", *args)
        assert r.returncode == 2 and message in r.stderr, r.stderr


@pytest.mark.parametrize("change, reason", [
    ({"verdict": "interrupted"}, "interrupted"),
    ({"verdict": "unknown", "check": {"valid": "unknown", "error": "cut", "counts": {}}},
     "unknown: cut"),
    ({"verdict": "incomplete", "problems": ["worker slot 1 crashed"]},
     "incomplete: worker slot 1 crashed"),
])
def test_a_run_that_proves_nothing_fails_the_gate(runs: dict[str, Path], change: dict[str, Any],
                                                  reason: str) -> None:
    report = _report(runs["pass"]) | change
    assert judge(report, GateRules()) == [reason]


def test_a_run_without_a_rollback_overlapping_a_read_fails_a_coverage_gate(
        runs: dict[str, Path]) -> None:
    report = _report(runs["pass"])
    report["coverage"]["pairs"]["read+rollback"] = 0
    assert judge(report, GateRules()) == []
    assert judge(report, GateRules(default_coverage=True)) == [
        "read+rollback overlapped 0 times, fewer than 1"]
    assert judge(report, GateRules(require_faults=True)) == []
    report["faults"]["applied"] = 0
    assert judge(report, GateRules(require_faults=True)) == [
        "no fault was applied (--require-faults)"]


def test_trend_lists_runs_side_by_side_and_plots_them(runs: dict[str, Path],
                                                      tmp_path: Path) -> None:
    r = harness_cli("trend", str(runs["fail"].parent))
    assert r.returncode == 0, r.stderr
    assert "zoo.redis-pickle-empty" in r.stdout and "lost-turn x" in r.stdout
    assert "chaos-sqlite" in r.stdout and "2 runs;" in r.stdout
    page = (runs["fail"].parent / "trend.html").read_text()
    assert page.count("<tr>") == 3 and "polyline" in page
    empty = tmp_path / "empty"
    empty.mkdir()
    r = harness_cli("trend", str(empty))
    assert r.returncode == 2 and "no run with a report.json" in r.stderr


def test_a_pass_says_what_it_proved(runs: dict[str, Path]) -> None:
    """A chaos run's pass is a proof: report.json's check.proof says every session was
    proven linearizable, and report.html's verdict line says so; a failing run proves
    nothing of the kind."""
    proof = _report(runs["pass"])["check"]["proof"]
    assert proof["proven"] is True and proof["sessions"] == proof["sessions_proven"] > 0
    assert proof["sessions_unknown"] == [] and proof["sessions_unknown_count"] == 0
    html = (runs["pass"] / "report.html").read_text()
    assert f"no violation; proven linearizable ({proof['sessions']} sessions" in html
    assert _report(runs["fail"])["check"]["proof"]["proven"] is False
