"""Nightly runs of any length: the same scenario at durations d, 5d and 20d, full speed
(ops unlimited, bounded by the duration), each a real ``harness run`` process.

Printed per run: the coordinator's peak RSS (psutil, every 0.2 s), disk bytes per op (the
run's ``history/`` at the end over its ops), seconds from the workers' stop to the verdict
(``stats.verdict_s``), ops/s and wall time; then, per scenario, the ratios between the
durations against the targets: peak RSS at 20d within 1.2x of d's and under 500 MB, the
verdict within 5 s of the workers' stop, disk per op at most a quarter of the 1,157 bytes
a run wrote before logs were compressed, wall time at most the duration + 10 s.

    python bench/nightly.py [--d 15] [--factors 1,5,20] [--scenario chaos-sqlite ...]
    python bench/nightly.py --quick      # d = 3 s, factors 1 and 3: a smoke check
"""

from __future__ import annotations

import argparse
import contextlib
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import psutil

ROOT = Path(__file__).resolve().parents[1]
BEFORE_BYTES_PER_OP = 1157  # history.jsonl plus the plain logs, before compressed logs
RSS_RATIO_MAX = 1.2
RSS_MAX_MB = 500
VERDICT_MAX_S = 5.0
WALL_SLACK_S = 10.0


def one_run(scenario: str, duration: float, seed: int, reports: Path) -> dict[str, Any]:
    """Run one scenario for ``duration`` s; what it measured."""
    out = reports / f"{scenario}-{duration:g}"
    cmd = [sys.executable, "-m", "harness", "run", str(ROOT / "scenarios" / f"{scenario}.toml"),
           "--duration", f"{duration:g}", "--seed", str(seed), "-q", "--reports", str(out)]
    started = time.monotonic()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    peak = 0
    ps = psutil.Process(proc.pid)
    while proc.poll() is None:
        with contextlib.suppress(psutil.Error):  # it may end between poll and sample
            peak = max(peak, ps.memory_info().rss)
        time.sleep(0.2)  # sampling a process we do not control: no event to wait on
    wall = time.monotonic() - started
    stderr = proc.stderr.read() if proc.stderr else ""
    (run_dir,) = [d for d in out.iterdir() if d.is_dir()]
    report = json.loads((run_dir / "report.json").read_text())
    st = report["stats"]
    disk = sum(p.stat().st_size for p in (run_dir / "history").iterdir())
    ops = max(1, int(st["ops"]))
    return {"scenario": scenario, "duration": duration, "exit": proc.returncode,
            "verdict": report.get("verdict"), "ops": ops, "ops_per_s": ops / max(st["seconds"], 1e-9),
            "peak_mb": peak / 2**20, "disk_per_op": disk / ops, "verdict_s": st.get("verdict_s"),
            "wall": wall, "error": "" if proc.returncode in (0, 1) else stderr.strip()[-300:]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--d", type=float, default=15.0, help="the base duration, seconds")
    ap.add_argument("--factors", default="1,5,20")
    ap.add_argument("--scenario", action="append", default=[])
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--quick", action="store_true")
    a = ap.parse_args()
    if a.quick:
        a.d, a.factors = 3.0, "1,3"
    factors = [float(x) for x in a.factors.split(",")]
    scenarios = a.scenario or ["chaos-sqlite", "chaos-redis"]
    print(f"nightly: {', '.join(scenarios)} at {', '.join(f'{a.d * f:g}s' for f in factors)}")
    print(f"{'scenario':14} {'duration':>8} {'ops':>9} {'ops/s':>7} {'peak RSS':>9} "
          f"{'disk/op':>8} {'verdict':>8} {'wall':>7}  result")
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        for sc in scenarios:
            rows = []
            for f in factors:
                r = one_run(sc, a.d * f, a.seed, Path(tmp))
                rows.append(r)
                print(f"{sc:14} {r['duration']:>7g}s {r['ops']:>9} {r['ops_per_s']:>7.0f} "
                      f"{r['peak_mb']:>7.0f}MB {r['disk_per_op']:>7.0f}B "
                      f"{r['verdict_s'] or 0:>7.2f}s {r['wall']:>6.1f}s  {r['verdict']}"
                      + (f" ({r['error']})" if r["error"] else ""), flush=True)
                if r["verdict_s"] is None or r["verdict_s"] > VERDICT_MAX_S:
                    failures.append(f"{sc} {r['duration']:g}s: verdict {r['verdict_s']} s "
                                    f"after the workers' stop (target {VERDICT_MAX_S:g})")
                if r["wall"] > r["duration"] + WALL_SLACK_S:
                    failures.append(f"{sc} {r['duration']:g}s: wall {r['wall']:.1f} s")
                if r["disk_per_op"] > BEFORE_BYTES_PER_OP / 4:
                    failures.append(f"{sc} {r['duration']:g}s: {r['disk_per_op']:.0f} B/op")
                if r["peak_mb"] > RSS_MAX_MB:
                    failures.append(f"{sc} {r['duration']:g}s: peak RSS {r['peak_mb']:.0f} MB")
            base = rows[0]
            for r in rows[1:]:
                ratio = r["peak_mb"] / base["peak_mb"]
                print(f"{sc:14} peak RSS {r['duration']:g}s / {base['duration']:g}s = "
                      f"{ratio:.2f} (target <= {RSS_RATIO_MAX}); ops x"
                      f"{r['ops'] / base['ops']:.1f}; disk/op {r['disk_per_op']:.0f} B = "
                      f"{r['disk_per_op'] / BEFORE_BYTES_PER_OP:.3f} of before")
                if r is rows[-1] and ratio > RSS_RATIO_MAX:
                    failures.append(f"{sc}: peak RSS ratio {ratio:.2f}")
    print("targets met" if not failures else "off target:\n  " + "\n  ".join(failures))


if __name__ == "__main__":
    main()
