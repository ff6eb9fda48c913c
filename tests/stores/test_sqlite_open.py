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


def _trials(directory: str, trials: int, out: Any) -> None:
    """``trials`` fresh files, each opened by 8 processes forked at once; what each open
    said and each file's journal mode afterwards go to ``out``."""
    ctx = multiprocess.get_context("fork")
    outcomes: list[str] = []
    modes: list[str] = []
    for trial in range(trials):
        db = Path(directory) / f"{trial}.db"
        db.touch()
        barrier, results = ctx.Barrier(8), ctx.Queue()
        procs = [ctx.Process(target=_open, args=(f"sqlite:///{db}", barrier, results))
                 for _ in range(8)]
        for p in procs:
            p.start()
        outcomes += [results.get(timeout=60) for _ in procs]
        for p in procs:
            p.join()
        conn = connect(f"sqlite:///{db}")
        modes.append(conn.execute("PRAGMA journal_mode").fetchone()[0])
        conn.close()
    out.put((outcomes, modes))


def test_processes_opening_a_fresh_file_at_once_all_get_wal(tmp_path: Path) -> None:
    """Converting a fresh file to WAL races: SQLite answers the losers "database is locked"
    at once, whatever the busy timeout. Before the retry, 8 processes x 60 fresh files gave
    5-9 failures per run. The openers are forked from a spawned process, not from this one:
    480 forks of a test process whose heap the tests before it grew spent seconds copying
    its page tables (15-18 s in the suite, 3 s alone)."""
    ctx = multiprocess.get_context("spawn")
    out = ctx.Queue()
    runner = ctx.Process(target=_trials, args=(str(tmp_path), 60, out))
    runner.start()
    outcomes, modes = out.get(timeout=300)
    runner.join()
    assert len(outcomes) == 8 * 60 and modes == ["wal"] * 60
    assert [o for o in outcomes if o != "ok"] == []
