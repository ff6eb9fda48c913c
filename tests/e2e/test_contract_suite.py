"""``harness contract SPEC`` as a user runs it: the reference stores pass every case, a zoo
store fails the cases its bug breaks with a readable table, an unknown store is one line
and exit 2."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest


def _contract(spec: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "harness", "contract", spec, *args],
                          capture_output=True, text=True, timeout=300, check=False,
                          env={**os.environ, "COLUMNS": "200"})


@pytest.mark.parametrize("spec", ["sqlite", "redis"])
def test_the_reference_stores_pass_every_case(spec: str) -> None:
    out = _contract(spec)
    assert out.returncode == 0, out.stdout + out.stderr
    assert f"{spec}: 15 of 15 cases passed (1 not applicable)" in out.stdout
    rows = _rows(out.stdout)
    for layer in ("sequential", "edge", "concurrency"):
        assert layer in out.stdout
    assert "n/a" in rows["TTL"]  # neither sets a TTL: the case says so, it does not pass
    assert "pass" in rows["run under faults"] and "pass" in rows["appends to one session"]


def test_a_store_that_wipes_snapshots_fails_the_cases_that_see_it() -> None:
    out = _contract("zoo.sqlite-rollback-wipes-snapshots")
    assert out.returncode == 1, out.stdout + out.stderr
    rows = _rows(out.stdout)
    assert "FAIL" in rows["empty snapshot"] and "the snapshot vanished" in rows["empty snapshot"]
    assert "FAIL" in rows["snapshots of one session"]
    assert "acknowledged and listed, raised SnapshotNotFound" in rows["snapshots of one session"]
    assert "FAIL" in rows["free run"] and "vanished-checkpoint" in rows["free run"]
    assert "pass" in rows["odd content"]  # its appends and reads are fine
    assert "pass" in rows["appends to one session"]
    assert "zoo.sqlite-rollback-wipes-snapshots: " in out.stdout and " of 15 cases passed" in out.stdout


def test_a_shared_key_store_fails_isolation_with_writers_at_once() -> None:
    out = _contract("zoo.redis-shared-key", "--layer", "edge")
    assert out.returncode == 1
    rows = _rows(out.stdout)
    assert "a turn of one session shows in another" in rows["session isolation"]
    assert "free run" not in rows  # --layer edge ran the edge cases only
    assert "zoo.redis-shared-key: 1 of 11 cases passed (1 not applicable)" in out.stdout


def test_a_read_modify_write_append_loses_turns_to_processes_appending_at_once() -> None:
    out = _contract("zoo.redis-rmw-append", "--layer", "edge")
    assert out.returncode == 1
    rows = _rows(out.stdout)
    assert "FAIL" in rows["appends to one session"]
    assert "acknowledged appends are missing (4 processes, 40 each" in rows["appends to one session"]


def test_a_store_that_answers_from_process_memory_during_an_outage_fails_backend_down() -> None:
    out = _contract("zoo.redis-offline-buffer", "--layer", "edge")
    assert out.returncode == 1
    rows = _rows(out.stdout)
    assert "an append acknowledged while the redis-server was down is not there" in rows["backend down"]


def _rows(stdout: str) -> dict[str, str]:
    return {line.split("│")[1].strip(): line for line in stdout.splitlines() if "│" in line}


def test_an_unknown_store_is_one_line_and_exit_2() -> None:
    out = _contract("nope.nothing")
    assert out.returncode == 2 and out.stdout == ""
    assert out.stderr.count("\n") == 1 and "unknown store 'nope.nothing'" in out.stderr
