"""bench/overhead.py runs as docs/benchmarks.md says and prints every figure it promises.

Only that it runs: what it measures is for the benchmark to say, never for a timed test."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "bench" / "overhead.py"


def _bench(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(BENCH), *args], capture_output=True, text=True,
                          timeout=300)


def test_a_tiny_run_prints_a_ratio_per_store_and_the_cost_per_op() -> None:
    r = _bench("--workers", "2", "--ops", "60", "--reps", "1", "--store", "sqlite",
               "--store", "sqlite-durable", "--floor")
    assert r.returncode == 0, r.stderr
    out = r.stdout
    fast = re.search(r"^sqlite +raw +\d+ ops/s +harness +\d+ ops/s +ratio (\d\.\d+) .*\(no target", out, re.M)
    # the durable ratio passes 10 when the raw store's fsyncs queue behind a busy disk (10.800 seen)
    durable = re.search(r"^sqlite-durable +raw .* ratio \d+\.\d+ .*(OK|BELOW TARGET)$", out, re.M)
    assert fast and durable, out
    assert re.search(r"floor\): \d\.\d+", out), out
    assert re.search(r"^sqlite +raw [\d.]+ µs/op +harness \+-?[\d.]+ µs +floor \+-?[\d.]+ µs$", out, re.M), out
    assert "sqlite-durable" not in out.split("cost per op")[1], "durable stores are not costed"


def test_bad_arguments_are_one_line_and_exit_2() -> None:
    r = _bench("--workers", "0")
    assert r.returncode == 2
    assert "at least 1" in r.stderr and "Traceback" not in r.stderr
