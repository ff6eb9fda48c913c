"""Golden-state snapshots as a user's suite meets them (``pytester``, real pytest
subprocesses, real SQLite files and a real redis-server): ``--snapshot-update`` writes the
baseline beside the test, the same scenario then passes, and a store that wipes the
snapshots table fails with a diff that names the rows that went."""

from __future__ import annotations

import pytest

#: A user's test: process A writes and snapshots, then exits; this process reopens the
#: store and rolls back; the whole memory is compared with the baseline.
USER_TEST = '''
import subprocess, sys

from harness.stores import open_store, resolve

WRITER = """
import sys
from harness.stores import open_store, resolve
st = open_store(resolve(sys.argv[1]), sys.argv[2], "golden")
st.append("alice", "user", "hello")
first = st.snapshot("alice")
st.append("alice", "assistant", "hi, how can I help?")
st.snapshot("alice")
st.append("bob", "user", "another session")
print(first)
st.close()
"""


def test_memory_after_a_rollback_in_another_process(request, harness_golden, harness_sqlite):
    spec = request.config.getoption("--harness-store") or "sqlite"
    out = subprocess.run([sys.executable, "-c", WRITER, spec, harness_sqlite],
                         capture_output=True, text=True, check=True)
    first = out.stdout.strip()
    st = open_store(resolve(spec), harness_sqlite, "golden")
    st.rollback("alice", first)
    st.close()
    harness_golden(harness_sqlite)
'''


def _run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    # no langsmith plugin: its import is ~1.3 s of CPU per pytest process (pyproject.toml)
    return pytester.runpytest_subprocess("-q", "-p", "no:cacheprovider", "-p", "no:xdist",
                                         "-p", "no:langsmith_plugin", *args)


def test_a_baseline_is_written_then_kept_then_a_wiped_table_shows_as_a_diff(
        pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_memory=USER_TEST)

    first = _run(pytester)  # no baseline yet: syrupy fails the assertion
    first.assert_outcomes(failed=1)

    _run(pytester, "--snapshot-update").assert_outcomes(passed=1)
    baseline = (pytester.path / "__snapshots__" / "test_memory.ambr").read_text()
    # canonical: ids numbered in order, rows one per line, the table's columns named
    assert "'snapshots (id, session, created)': list([" in baseline
    assert "\"'<id-1>', 'alice', 0\"" in baseline and "\"'<id-2>', 'alice', 1\"" in baseline
    assert "\"'alice', 1, 'user', 'hello'\"" in baseline
    assert "hi, how can I help?" in baseline  # still in snapshot 2, gone from the turns

    _run(pytester).assert_outcomes(passed=1)  # same scenario, fresh file, new ids: equal

    res = _run(pytester, "--harness-store", "zoo.sqlite-rollback-wipes-snapshots")
    res.assert_outcomes(failed=1)
    res.stdout.fnmatch_lines([
        "*'snapshots (id, session, created)': list([*",
        "*- *'<id-1>', 'alice', 0*",
        "*- *'<id-2>', 'alice', 1*",
    ])
    assert (pytester.path / "__snapshots__" / "test_memory.ambr").read_text() == baseline


def test_the_redis_store_has_a_golden_state_too(pytester: pytest.Pytester, redis_url: str) -> None:
    pytester.makepyfile(test_memory='''
from harness.stores import open_store, resolve

def test_memory(request, harness_golden, harness_state):
    url, ns = request.config.getoption("--url"), request.config.getoption("--ns")
    st = open_store(resolve("redis"), url, ns)
    st.append("alice", "user", "hello")
    sid = st.snapshot("alice")
    st.append("alice", "assistant", "hi")
    st.rollback("alice", sid)
    st.close()
    assert harness_state(url, ns)["<ns>:alice:turns (list)"] == ["'user\\\\nhello'"]
    harness_golden(url, ns)
''', conftest='''
def pytest_addoption(parser):
    parser.addoption("--url")
    parser.addoption("--ns")
''')
    _run(pytester, "--url", redis_url, "--ns", "golden:a", "--snapshot-update").assert_outcomes(passed=1)
    # another namespace on the same server: the same state once the namespace is masked
    _run(pytester, "--url", redis_url, "--ns", "golden:b").assert_outcomes(passed=1)
    baseline = (pytester.path / "__snapshots__" / "test_memory.ambr").read_text()
    assert "'<ns>:alice:snap:1 (list)'" in baseline and "golden:a" not in baseline
