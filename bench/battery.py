"""The battery's finding power: every zoo store and every reference store of a backend
through ``harness run --store SPEC`` (the battery, :mod:`harness.battery`) over several
seeds, as a user runs it (a real ``harness`` process each).

For each store it prints: the seeds whose battery failed (a zoo store must fail in every
seed, a reference store in none), the median time to the first violation as a share of the
battery's duration (the ratio this benchmark is about: how much of the battery a bug needs),
and for the reference stores the phases whose coverage goals were met.

    python bench/battery.py [--backend sqlite|redis|postgres|all] [--seeds 5] [--duration 120]
                            [--store SPEC ...]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from harness.stores.registry import builtins


def battery(store: str, seed: int, duration: float, reports: Path) -> dict[str, Any]:
    """Run one battery; its report.json, with the exit code."""
    out = reports / f"{store}-{seed}"
    r = subprocess.run([sys.executable, "-m", "harness", "run", "--store", store, "--seed",
                        str(seed), "--duration", f"{duration:g}", "-q", "--reports", str(out)],
                       capture_output=True, text=True, timeout=duration * 3 + 120)
    dirs = [d for d in out.iterdir() if (d / "report.json").is_file()] if out.exists() else []
    if not dirs:
        return {"verdict": f"error (exit {r.returncode}): {r.stderr.strip()[-200:]}",
                "exit": r.returncode}
    report: dict[str, Any] = json.loads((dirs[0] / "report.json").read_text())
    report["exit"] = r.returncode
    return report


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--backend", choices=["sqlite", "redis", "postgres", "all"], default="all")
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--duration", type=float, default=120.0)
    ap.add_argument("--store", action="append", default=[], help="only these stores")
    a = ap.parse_args()
    stores = sorted(s for s, info in builtins().items()
                    if (a.backend == "all" or info.backend == a.backend)
                    and (not a.store or s in a.store))
    print(f"battery: {len(stores)} stores x {a.seeds} seeds, --duration {a.duration:g}")
    print(f"{'store':40} {'expect':6} {'failed':>7} {'first violation / duration':>28}  goals met")
    misses = 0
    with tempfile.TemporaryDirectory() as tmp:
        for store in stores:
            zoo = builtins()[store].expected is not None
            reports = [battery(store, seed, a.duration, Path(tmp)) for seed in
                       range(1, a.seeds + 1)]
            failed = sum(r.get("verdict") == "fail" for r in reports)
            firsts = [r["first_violation"]["after_s"] / a.duration for r in reports
                      if r.get("first_violation")]
            ratio = f"{statistics.median(firsts):.3f}" if firsts else "-"
            met = [f"{sum(p['met'] for p in r['phases'])}/{len(r['phases'])}"
                   for r in reports if "phases" in r and r.get("verdict") != "fail"]
            others = sorted({str(r.get("verdict")) for r in reports} - {"fail", "pass"})
            print(f"{store:40} {'fail' if zoo else 'pass':6} {failed:>4}/{a.seeds:<2} "
                  f"{ratio:>28}  {' '.join(met) or '-'}"
                  + (f"  other verdicts: {', '.join(others)}" if others else ""))
            misses += (failed < a.seeds) if zoo else (failed > 0)
    print(f"stores off target: {misses}")


if __name__ == "__main__":
    main()
