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
- ``harness_state(url)``: the whole memory state of a store as a canonical, order-stable
  dump (:mod:`harness.golden`); ``harness_golden(url)`` compares it with the baseline
  beside the test (syrupy's ``snapshot``: ``--snapshot-update`` writes it) and fails with
  a diff.
- ``harness_contract_store`` / ``harness_contract`` (session scope): the store spec of the
  contract suite (``--harness-store``; override the fixture to name it in a conftest)
  and the context its cases run in (:mod:`harness.contract.test_store`). When contract
  cases ran, the session ends with their table by layer and case.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

#: syrupy colours its diff whatever the terminal; a failure message is read in CI logs too.
_ANSI = re.compile(r"\x1b\[[0-9;]*m")

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
    config.pluginmanager.register(_ContractTable(config), "harness-contract-table")
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


@pytest.fixture
def harness_state() -> Callable[..., Any]:
    """``harness_state(url, namespace="")``: the canonical dump of a store's memory."""
    from harness.golden import memory_state

    return memory_state


@pytest.fixture
def harness_golden(snapshot: Any, request: pytest.FixtureRequest) -> Callable[..., None]:
    """``harness_golden(url, namespace="")``: fail unless the store's memory equals the
    baseline beside the test (``__snapshots__/``, written by ``--snapshot-update``), with
    the rows that differ."""
    from harness.golden import memory_state
    from harness.redact import redact_url

    def _check(url: str, namespace: str = "") -> None:
        # compared here, not in an assert of the caller's, so the diff is in the message
        # whether or not pytest rewrote the assertion
        if snapshot != memory_state(url, namespace):
            diff = [_ANSI.sub("", line) for line in
                    snapshot.get_assert_diff(diff_mode=request.config.option.diff_mode)]
            if any("does not exist" in line for line in diff[:2]):
                head = (f"the memory of {redact_url(url)} has no baseline yet ({snapshot.name}); "
                        "--snapshot-update writes it:")
            else:
                head = (f"the memory of {redact_url(url)} differs from its baseline "
                        f"({snapshot.name}; '-' the baseline, '+' now; --snapshot-update "
                        "accepts it):")
            pytest.fail("\n".join([head, *diff]), pytrace=False)

    return _check


@pytest.fixture(scope="session")
def harness_contract_store(request: pytest.FixtureRequest) -> str:
    """The store spec the contract suite runs against: ``--harness-store``."""
    spec = request.config.getoption("--harness-store")
    if not spec:
        pytest.fail("the contract suite needs a store: --harness-store SPEC, or a "
                    "harness_contract_store fixture that returns it", pytrace=False)
    return str(spec)


@pytest.fixture(scope="session")
def harness_contract(harness_contract_store: str) -> Iterator[Any]:
    """The contract's context: the store resolved, a target of its own started."""
    from harness.contract import contract_ctx
    from harness.errors import HarnessError

    try:
        with contract_ctx(harness_contract_store) as ctx:
            yield ctx
    except HarnessError as err:
        pytest.fail(str(err), pytrace=False)


class _ContractTable:
    """Collects the contract outcomes of the session's reports (user_properties reach the
    controller under xdist too) and prints their table at the end."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.seen: list[dict[str, str]] = []

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.when == "call":
            self.seen += [json.loads(str(v)) for k, v in report.user_properties if k == "harness_contract"]

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if not self.seen:
            return
        import io

        from rich.console import Console

        from harness.contract import CASES, Outcome, contract_summary, contract_table

        rank = {(c.layer, c.name): i for i, c in enumerate(CASES)}
        specs = sorted({o.pop("spec", "") for o in self.seen})
        outcomes = sorted((Outcome(**o) for o in self.seen), key=lambda o: rank.get((o.layer, o.name), 99))
        spec = ", ".join(specs)
        buf = io.StringIO()
        Console(file=buf, width=max(100, terminalreporter._tw.fullwidth), no_color=True,
                highlight=False).print(contract_table(outcomes))
        terminalreporter.write_sep("=", "harness contract")
        terminalreporter.write(buf.getvalue())
        terminalreporter.write_line(contract_summary(spec, outcomes))
