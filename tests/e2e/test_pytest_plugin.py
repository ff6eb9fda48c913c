"""The pytest plugin as a user's test suite meets it (``pytester``, each inner session a
real pytest subprocess running real harness runs): the marker, the command-line overrides,
a failing run's message, the session's own redis-server and the SQLite fixture."""

from __future__ import annotations

from pathlib import Path

import pytest
import redis

SCENARIOS = Path(__file__).resolve().parents[2] / "scenarios"
#: each inner session's options: no cache, no langsmith plugin (its import alone is ~1.3 s
#: of CPU per pytest process; pyproject.toml's addopts say why)
INNER = ("-q", "-p", "no:cacheprovider", "-p", "no:langsmith_plugin")


def _suite(pytester: pytest.Pytester, body: str) -> None:
    pytester.makepyfile(test_user=f"SCENARIOS = {str(SCENARIOS)!r}\n" + body)


def test_a_marked_test_runs_its_scenario_and_passes(pytester: pytest.Pytester) -> None:
    _suite(pytester, """
import pytest

@pytest.mark.harness(scenario=SCENARIOS + "/smoke.toml", seed=3, ops=15, workers=2)
def test_smoke(harness_run):
    res = harness_run()
    assert (res.verdict, res.seed, res.scenario.workers) == ("pass", 3, 2)
    assert res.result.proof()["proven"] is True
""")
    pytester.runpytest_subprocess(*INNER).assert_outcomes(passed=1)


def test_a_violation_fails_the_test_with_its_sentence_report_and_reproduce_command(
        pytester: pytest.Pytester) -> None:
    _suite(pytester, """
def test_zoo(harness_run):
    harness_run(SCENARIOS + "/sqlite-rollback.toml", seed=1, ops=60)
""")
    res = pytester.runpytest_subprocess(*INNER)
    res.assert_outcomes(failed=1)
    res.stdout.fnmatch_lines([
        "*harness: sqlite-rollback ended FAIL, expected pass*",
        "*vanished-checkpoint (session *): *",
        "*report: */report.json*",
        "*reproduce: harness run *sqlite-rollback.toml --seed 1 *",
    ])


def test_an_expected_failure_passes_and_returns_the_result(pytester: pytest.Pytester) -> None:
    _suite(pytester, """
def test_zoo(harness_run):
    res = harness_run(SCENARIOS + "/sqlite-rollback.toml", expect="fail", seed=1, ops=60)
    assert "vanished-checkpoint" in res.result.counts()
""")
    pytester.runpytest_subprocess(*INNER).assert_outcomes(passed=1)


def test_the_command_line_overrides_every_run(pytester: pytest.Pytester) -> None:
    """A nightly CI changes the seed, the duration and the store of every test's run
    without touching the tests; the command line wins over the marker and the call."""
    _suite(pytester, """
import pytest

@pytest.mark.harness(scenario=SCENARIOS + "/smoke.toml", seed=3, ops=10, workers=2)
def test_smoke(harness_run):
    res = harness_run(seed=4, store="zoo.sqlite-max-turn-race")
    assert (res.seed, res.scenario.duration, res.store.spec) == (7, 2.5, "sqlite")
    assert "--seed 7 --store sqlite" in res.reproduce
""")
    res = pytester.runpytest_subprocess(
        *INNER, "--harness-seed", "7", "--harness-duration", "2.5", "--harness-store", "sqlite")
    res.assert_outcomes(passed=1)


def test_the_sessions_redis_server_serves_runs_and_is_stopped_at_the_end(
        pytester: pytest.Pytester, tmp_path: Path) -> None:
    url_file = tmp_path / "url"
    _suite(pytester, f"""
from pathlib import Path

def test_one(harness_run, harness_redis):
    Path({str(url_file)!r}).write_text(harness_redis)
    res = harness_run(SCENARIOS + "/smoke.toml", store="redis", redis_url=harness_redis,
                      ops=10, workers=2, seed=1)
    assert res.verdict == "pass"

def test_two(harness_redis):
    assert Path({str(url_file)!r}).read_text() == harness_redis  # one server per session

def test_sqlite(harness_sqlite, tmp_path):
    assert harness_sqlite == "sqlite:///" + str(tmp_path / "store.db")
""")
    pytester.runpytest_subprocess(*INNER).assert_outcomes(passed=3)
    url = url_file.read_text()
    assert url.startswith("redis://127.0.0.1:")
    with pytest.raises(redis.ConnectionError):  # stopped with the session
        redis.Redis.from_url(url, socket_connect_timeout=1).ping()


def test_a_run_without_a_scenario_is_a_usage_error(pytester: pytest.Pytester) -> None:
    _suite(pytester, """
def test_nothing(harness_run):
    harness_run(seed=1)
""")
    res = pytester.runpytest_subprocess(*INNER)
    assert res.ret != 0
    res.stdout.fnmatch_lines(["*harness_run needs a scenario*"])
