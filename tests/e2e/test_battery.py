"""The battery (``harness run --store SPEC`` with no scenario): its phases, its steering,
and its verdicts as a user meets them."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from harness.battery import _steer, _Tally, phases
from harness.stores.registry import resolve


def harness(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "harness", *args], cwd=cwd, text=True,
                          capture_output=True, timeout=300)


def test_phases_follow_the_backend_and_the_capabilities() -> None:
    sqlite = [p.name for p in phases(resolve("sqlite"), "sqlite")]
    assert sqlite == ["cold-start", "append-race", "rollback-storm", "many-sessions", "payloads",
                      "fault-disk-full", "fault-kill", "fault-lock-hold", "fault-pause"]
    redis = [p.name for p in phases(resolve("redis"), "redis")]
    assert "fault-restart" in redis and "fault-disconnect" in redis
    # a server the harness did not start is never restarted
    assert "fault-restart" not in [p.name for p in phases(resolve("redis"), "redis",
                                                          external=True)]
    # a store that cannot roll back gets no rollback storm, and no goal names a rollback
    from dataclasses import replace

    info = replace(resolve("sqlite"), capabilities=frozenset({"append", "read"}))
    ph = phases(info, "sqlite")
    assert "rollback-storm" not in [p.name for p in ph]
    assert not any("rollback" in g for p in ph for g, _ in p.goals)
    assert all(set(p.scenario.weights) <= {"append", "read"} for p in ph)


def test_an_unmet_overlap_goal_doubles_the_weights_of_its_kinds() -> None:
    storm = next(p for p in phases(resolve("sqlite"), "sqlite") if p.name == "rollback-storm")
    tally = _Tally(reached={"read+rollback": 100, "append+rollback": 0,
                            "snapshot+rollback": 0})
    after = _steer(storm, storm.scenario, tally).weights
    before = storm.scenario.weights
    assert after["rollback"] == 2 * before["rollback"]  # two unmet goals name it: doubled once
    assert after["append"] == 2 * before["append"]
    assert after["snapshot"] == 2 * before["snapshot"]
    assert after["read"] == before["read"]  # its goal is met


def test_the_battery_stops_at_the_first_failing_round_and_says_how_to_rerun_it(
        tmp_path: Path) -> None:
    r = harness("run", "--store", "zoo.sqlite-max-turn-race", "--duration", "20", "--seed",
                "1", "-q", "--reports", str(tmp_path / "r"), cwd=tmp_path)
    assert r.returncode == 1, r.stdout + r.stderr
    (bdir,) = (tmp_path / "r").iterdir()
    report = json.loads((bdir / "report.json").read_text())
    assert report["kind"] == "battery" and report["verdict"] == "fail"
    first = report["first_violation"]
    assert "lost-turn" in first["violations"] and first["after_s"] < 20
    ran = [p for p in report["phases"] if p["ran"]]
    assert ran[-1]["rounds"][-1]["verdict"] == "fail"
    assert not report["phases"][-1]["ran"]  # it stopped there
    # the failing round's own reproduce command names the round's scenario file
    scenario_file = Path(shlex.split(first["reproduce"])[2])
    assert scenario_file.is_file() and scenario_file.parent == bdir
    assert "FAIL" in r.stdout and "reproduce: harness run --store zoo.sqlite-max-turn-race" \
        in r.stdout


def test_a_battery_too_short_for_its_phases_is_incomplete_not_a_pass(tmp_path: Path) -> None:
    r = harness("run", "--store", "sqlite", "--duration", "2.5", "--seed", "1", "-q",
                "--reports", str(tmp_path / "r"), cwd=tmp_path)
    assert r.returncode == 3, r.stdout + r.stderr
    (bdir,) = (tmp_path / "r").iterdir()
    report = json.loads((bdir / "report.json").read_text())
    assert report["verdict"] == "incomplete"
    assert any("too short for every phase" in p for p in report["problems"])
    assert "INCOMPLETE" in r.stdout


@pytest.mark.parametrize("args, message", [
    ([], "give a SCENARIO file, or --store SPEC"),
    (["--store", "sqlite", "--workers", "2"], "--workers apply to a SCENARIO run"),
    (["--store", "sqlite", "--controlled"], "--controlled apply to a SCENARIO run"),
    (["--store", "no.such:store"], "no.such"),
])
def test_battery_bad_input_is_one_line_and_exit_2(tmp_path: Path, args: list[str],
                                                   message: str) -> None:
    r = harness("run", *args, "--reports", str(tmp_path / "r"), cwd=tmp_path)
    assert r.returncode == 2, r.stdout + r.stderr
    assert message in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert not (tmp_path / "r").exists() or not any((tmp_path / "r").iterdir())
