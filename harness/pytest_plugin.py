"""pytest plugin of harness: stress a memory store from a test, fail the test on what it finds.

Enabled through the ``pytest11`` entry point; ``-p no:harness`` disables it.

- ``harness_run(scenario=None, *, expect="pass", **overrides)``: runs a scenario (a path,
  a ``Scenario``, or the ``scenario`` of the test's ``harness`` marker) with overrides
  (``store``, ``seed``, ``workers``, ``duration``, ``ops``, ``redis_url``, ...; the
  marker's, then the call's, then the command line's), reports under the test's
  ``tmp_path``, and returns the ``RunResult``. A verdict other than ``expect`` fails the
  test with the first violation's sentence (or the problem that made the run prove
  nothing), the report's path and the command that reproduces the run.
- ``@pytest.mark.harness(scenario=..., store=..., seed=..., workers=..., duration=...)``:
  a test's defaults for ``harness_run``.
- ``--harness-seed``, ``--harness-duration``, ``--harness-store``: override every
  ``harness_run`` of the session (a CI raises the duration at night without touching a
  test). ``--harness-redis-exec``: the ``redis-server`` binary of ``harness_redis``.
- ``harness_redis`` (session scope): the URL of a ``redis-server`` of the session's own, on
  a free loopback port, its files in a temporary directory, stopped when the session
  ends (pass it as ``redis_url=`` to ``harness_run``, or to your store).
- ``harness_sqlite``: the URL of a fresh SQLite file in the test's ``tmp_path``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

#: The marker's and the command line's keys (the command line's win).
MARKER_KEYS = ("scenario", "store", "seed", "workers", "duration", "ops", "sessions")


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("harness", "harness: multi-process stress runs of memory stores")
    group.addoption("--harness-seed", type=int, default=None,
                    help="the seed of every harness_run (default: the test's)")
    group.addoption("--harness-duration", type=float, default=None,
                    help="the duration in seconds of every harness_run (default: the test's)")
    group.addoption("--harness-store", default=None,
                    help="the store spec of every harness_run (default: the test's)")
    group.addoption("--harness-redis-exec", default=None,
                    help="the redis-server binary harness_redis starts (default: PATH)")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "harness(scenario=None, store=None, seed=None, workers=None, duration=None): "
        "defaults of the harness_run fixture for this test")


@pytest.fixture
def harness_run(request: pytest.FixtureRequest, tmp_path: Path) -> Callable[..., Any]:
    """Run a scenario and fail the test unless its verdict is ``expect`` (see the module)."""
    from harness.runner.coordinator import run
    from harness.scenario import Scenario, load_scenario

    marker = request.node.get_closest_marker("harness")
    defaults = dict(marker.kwargs) if marker is not None else {}
    cli = {"seed": request.config.getoption("--harness-seed"),
           "duration": request.config.getoption("--harness-duration"),
           "store": request.config.getoption("--harness-store")}

    def _run(scenario: str | Path | Scenario | None = None, *, expect: str = "pass",
             **overrides: Any) -> Any:
        given = {**defaults, **overrides, **{k: v for k, v in cli.items() if v is not None}}
        scenario = scenario if scenario is not None else given.pop("scenario", None)
        given.pop("scenario", None)
        if scenario is None:
            raise pytest.UsageError("harness_run needs a scenario: an argument or "
                                    "@pytest.mark.harness(scenario=...)")
        sc = scenario if isinstance(scenario, Scenario) else load_scenario(scenario)
        redis_url = given.pop("redis_url", "")
        res = run(sc.with_overrides(**given), reports=tmp_path / "reports", redis_url=redis_url)
        if res.verdict != expect:
            pytest.fail(failure(res, expect), pytrace=False)
        return res

    return _run


def failure(res: Any, expect: str) -> str:
    """Why a run failed its test: the verdict, the first violation's sentence (or the
    problem that made it prove nothing), the report's path, the reproduce command."""
    lines = [f"harness: {res.scenario.name} ended {res.verdict.upper()}, expected {expect}"]
    if res.result.violations:
        v = res.result.violations[0]
        n = res.result.total()
        lines.append(f"{v.kind} (session {v.session}): {v.message}"
                     + (f" (and {n - 1} more violations)" if n > 1 else ""))
    lines += [f"problem: {p}" for p in res.problems[:3]]
    lines.append(f"report: {res.run_dir / 'report.json'}")
    lines.append(f"reproduce: {res.reproduce}")
    return "\n".join(lines)


@pytest.fixture(scope="session")
def harness_redis(request: pytest.FixtureRequest,
                  tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The URL of a redis-server of this session's own (see the module)."""
    from harness.backends.redis import ManagedRedis

    server = ManagedRedis(tmp_path_factory.mktemp("harness-redis"),
                          binary=request.config.getoption("--harness-redis-exec"))
    server.start()
    try:
        yield server.url
    finally:
        server.stop()


@pytest.fixture
def harness_sqlite(tmp_path: Path) -> str:
    """The URL of a fresh SQLite file in the test's tmp_path (not created yet)."""
    return f"sqlite:///{tmp_path / 'store.db'}"
