"""The contract suite inside a user's pytest session (``pytester``, real pytest
subprocesses): ``pytest --pyargs harness.contract --harness-store SPEC``, and the one-line
import into a test file of the user's own with the store named by a conftest fixture."""

from __future__ import annotations

import pytest


def _run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    # no langsmith plugin: its import is ~1.3 s of CPU per pytest process (pyproject.toml)
    return pytester.runpytest_subprocess("-p", "no:cacheprovider", "-p", "no:xdist",
                                         "-p", "no:langsmith_plugin", *args)


def test_pyargs_runs_the_contract_and_prints_its_table(pytester: pytest.Pytester) -> None:
    res = _run(pytester, "--pyargs", "harness.contract", "--harness-store",
               "zoo.sqlite-rollback-wipes-snapshots", "-k", "not concurrency")
    outcomes = res.parseoutcomes()
    assert outcomes["failed"] == 3 and outcomes["passed"] == 9, res.stdout.str()
    assert outcomes["skipped"] == 1  # TTL: not applicable to a SQLite store, and said so
    res.stdout.fnmatch_lines([
        "*zoo.sqlite-rollback-wipes-snapshots fails 'empty snapshot' (a snapshot of an empty "
        "session that restores nothing, or vanishes):*",
        "*the snapshot vanished after the rollback to it*",
        "*= harness contract =*",
        "*edge * empty snapshot * FAIL * the snapshot vanished after the rollback to it*",
        "*zoo.sqlite-rollback-wipes-snapshots: 9 of 12 cases passed (1 not applicable)*",
    ])


def test_one_import_runs_the_contract_in_the_users_own_suite(pytester: pytest.Pytester) -> None:
    pytester.makeconftest('''
import pytest

@pytest.fixture(scope="session")
def harness_contract_store():
    return "sqlite"
''')
    pytester.makepyfile(test_my_store="from harness.contract.test_store import test_contract  # noqa: F401\n")
    res = _run(pytester, "-k", "edge")
    res.assert_outcomes(passed=11, skipped=1)
    res.stdout.fnmatch_lines(["*= harness contract =*", "*sqlite: 11 of 11 cases passed (1 not applicable)*"])


def test_without_a_store_the_suite_says_what_it_needs(pytester: pytest.Pytester) -> None:
    res = _run(pytester, "--pyargs", "harness.contract", "-k", "unknown")
    res.assert_outcomes(errors=1)
    res.stdout.fnmatch_lines(["*the contract suite needs a store: --harness-store SPEC*"])
