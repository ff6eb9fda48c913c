"""``cold_start = true``: every worker opens the fresh store at the same instant; an open
that fails there is a finding (``setup-race``), retried, not a setup error. Real worker
processes on real SQLite files."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.checker import check
from harness.history import Event, read_history
from harness.runner.coordinator import run
from harness.scenario import Scenario

HERE = Path(__file__).resolve().parent


@pytest.fixture(autouse=True)
def importable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(HERE))


def test_set_up_code_that_races_is_a_finding_and_the_run_goes_on(tmp_path: Path) -> None:
    sc = Scenario(store="user_stores:CheckThenCreateStore", backend="sqlite", seed=1, workers=4,
                  ops=20, cold_start=True)
    res = run(sc, reports=tmp_path)
    assert res.exit_code == 1 and res.verdict == "fail", (res.verdict, res.problems)
    races = [v for v in res.result.violations if v.kind == "setup-race"]
    assert races and len(races) <= 3  # one process made the table; each other failed once
    assert "table t already exists" in races[0].message
    assert "on a cold start" in races[0].message
    # every worker opened in the end and ran its ops: the finding did not end the run
    assert all(w["why"] == "done" for w in res.workers), res.workers
    assert res.result.counts() == {"setup-race": len(races)}
    # each retried: a fail open, then an ok open that says how many attempts it took
    opens = [e for e in read_history(res.run_dir) if e.f == "open" and isinstance(e.process, int)]
    assert sum(e.type == "fail" for e in opens) == len(races)
    assert {e.value["attempts"] for e in opens if e.type == "ok"} >= {1, 2}


def test_the_reference_store_passes_a_cold_start(tmp_path: Path) -> None:
    res = run(Scenario(store="sqlite", seed=1, workers=4, ops=30, cold_start=True), reports=tmp_path)
    assert res.exit_code == 0, (res.result.counts(), res.problems)
    opens = [e for e in read_history(res.run_dir) if e.f == "open" and isinstance(e.process, int)]
    assert all(e.type == "ok" and e.value["cold_start"] for e in opens)


def test_the_batch_and_the_streaming_checker_agree_on_a_failed_open() -> None:
    from harness.checker.stream import StreamChecker

    events = [Event(0, 1, 0, "fail", "open", None, {"cold_start": True, "attempt": 1},
                    "OperationalError: table t already exists"),
              Event(1, 2, 0, "ok", "open", None, {"seconds": 0.1, "cold_start": True, "attempts": 2}),
              Event(2, 3, 1, "info", "open", None, None, "a plain open that failed: not a finding"),
              Event(3, 4, 0, "invoke", "append", "s", ["user", "w0.0|a"]),
              Event(4, 5, 0, "ok", "append", "s", ["user", "w0.0|a"])]
    batch = check(events)
    sc = StreamChecker()
    for e in events:
        sc.feed(e)
    stream = sc.finish()
    assert batch.counts() == stream.counts() == {"setup-race": 1}
    assert batch.violations[0].message == stream.violations[0].message
    assert batch.valid is False and stream.valid is False
