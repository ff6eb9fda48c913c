"""Benchmark of reading a stored history: what ``harness check RUN`` does before it checks.

    python bench/read.py RUN_DIR [RUN_DIR ...]   # runs of ``harness run`` (their history/)
    python bench/read.py --record --workers 16 --ops 1000    # record one first (smoke.toml)

For each run: its per-process logs read line by line and each line parsed (``orjson``,
nothing else: the floor any reader pays), then ``harness.history.read_history`` (the same
lines parsed, each event checked and made an ``Event``, the logs merged by time and
renumbered), each the least CPU time of ``--reps`` alternated; printed with the ratio of
the second to the first, and the microseconds per event of each.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import orjson

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from harness.history import read_history  # noqa: E402
from harness.history_files import iter_lines, log_files  # noqa: E402


def parse_only(run: Path) -> int:
    """Every line of the run's logs parsed, nothing more; the number of events."""
    n = 0
    for f in log_files(run / "history"):
        for line in iter_lines(f):
            if line.strip():
                orjson.loads(line)
                n += 1
    return n


def one(run: Path, reps: int) -> tuple[int, float, float]:
    n = parse_only(run)
    read_history(run)  # warm up (imports, first calls)
    floor = full = float("inf")
    for _ in range(reps):
        t = time.process_time()
        parse_only(run)
        floor = min(floor, time.process_time() - t)
        t = time.process_time()
        read_history(run)
        full = min(full, time.process_time() - t)
    return n, floor, full


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("runs", nargs="*", type=Path)
    ap.add_argument("--record", action="store_true", help="record a smoke run first")
    ap.add_argument("--workers", type=int, default=16)
    ap.add_argument("--ops", type=int, default=1000)
    ap.add_argument("--reps", type=int, default=5)
    args = ap.parse_args(argv)
    runs = list(args.runs)
    with tempfile.TemporaryDirectory() as tmp:
        if args.record or not runs:
            subprocess.run([sys.executable, "-m", "harness", "run", str(ROOT / "scenarios/smoke.toml"),
                            "--workers", str(args.workers), "--ops", str(args.ops), "--seed", "1",
                            "--reports", tmp, "--quiet"], check=False, capture_output=True, cwd=tmp)
            runs += [p for p in Path(tmp).iterdir() if p.is_dir()]
        print(f"{'events':>8} {'parse s':>8} {'read s':>8} {'x parse':>8} {'us/event':>9}  run")
        for run in runs:
            if not (run / "history").is_dir():
                print(f"{run}: no history/ in it", file=sys.stderr)
                return 2
            n, floor, full = one(run, args.reps)
            print(f"{n:>8} {floor:>8.3f} {full:>8.3f} {full / floor:>8.2f} {full / n * 1e6:>9.2f}  {run.name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
