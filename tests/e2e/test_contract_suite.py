"""``harness contract SPEC`` as a user runs it: the reference stores pass every case, a zoo
store fails the cases its bug breaks with a readable table, an unknown store is one line
and exit 2."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest


def _contract(spec: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "harness", "contract", spec],
                          capture_output=True, text=True, timeout=300, check=False,
                          env={**os.environ, "COLUMNS": "200"})


@pytest.mark.parametrize("spec", ["sqlite", "redis"])
def test_the_reference_stores_pass_every_case(spec: str) -> None:
    out = _contract(spec)
    assert out.returncode == 0, out.stdout + out.stderr
    assert f"{spec}: 11 of 11 cases passed" in out.stdout
    for layer in ("sequential", "edge", "concurrency"):
        assert layer in out.stdout


def test_a_store_that_wipes_snapshots_fails_the_cases_that_see_it() -> None:
    out = _contract("zoo.sqlite-rollback-wipes-snapshots")
    assert out.returncode == 1, out.stdout + out.stderr
    rows = {line.split("│")[1].strip(): line for line in out.stdout.splitlines() if "│" in line}
    assert "FAIL" in rows["empty snapshot"] and "the snapshot vanished" in rows["empty snapshot"]
    assert "FAIL" in rows["free run"] and "vanished-checkpoint" in rows["free run"]
    assert "pass" in rows["odd content"]  # its appends and reads are fine
    assert "zoo.sqlite-rollback-wipes-snapshots: 7 of 11 cases passed" in out.stdout


def test_a_shared_key_store_fails_isolation() -> None:
    out = _contract("zoo.redis-shared-key")
    assert out.returncode == 1
    rows = {line.split("│")[1].strip(): line for line in out.stdout.splitlines() if "│" in line}
    assert "a turn of one session shows in another" in rows["session isolation"]


def test_an_unknown_store_is_one_line_and_exit_2() -> None:
    out = _contract("nope.nothing")
    assert out.returncode == 2 and out.stdout == ""
    assert out.stderr.count("\n") == 1 and "unknown store 'nope.nothing'" in out.stderr
