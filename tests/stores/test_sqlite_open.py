"""Opening the reference SQLite store from many processes at once, as a run's workers do."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import multiprocess

from harness.stores.sqlite import connect


def _open(url: str, barrier: Any, results: Any) -> None:
    barrier.wait()
    try:
        connect(url).close()
        results.put("ok")
    except Exception as exc:
        results.put(f"{type(exc).__name__}: {exc}")


def test_processes_opening_a_fresh_file_at_once_all_get_wal(tmp_path: Path) -> None:
    """Converting a fresh file to WAL races: SQLite answers the losers "database is locked"
    at once, whatever the busy timeout. Before the retry, 8 processes x 60 fresh files gave
    5-9 failures per run."""
    ctx = multiprocess.get_context("fork")
    failures: list[str] = []
    for trial in range(60):
        db = tmp_path / f"{trial}.db"
        db.touch()
        barrier, results = ctx.Barrier(8), ctx.Queue()
        procs = [ctx.Process(target=_open, args=(f"sqlite:///{db}", barrier, results))
                 for _ in range(8)]
        for p in procs:
            p.start()
        outcomes = [results.get(timeout=60) for _ in procs]
        for p in procs:
            p.join()
        failures += [o for o in outcomes if o != "ok"]
        conn = connect(f"sqlite:///{db}")
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        conn.close()
    assert failures == []
