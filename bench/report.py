"""report.html at scale: its size, and the time until it is on screen and answers a click in
a real headless Chromium (Debian's ``chromium``, driven by Playwright), for a long run's
report beside a short run's (the baseline, measured in the same run).

Each report is loaded ``--reps`` times; per load it measures the seconds from navigation
to the page's ``load`` event, then to a click on the first violation having highlighted its
ops (or, with none, to the timeline being drawn). Target: a million-op run's report at most
10 MB and interactive within 3 s.

    python bench/report.py RUN_DIR [--baseline RUN_DIR] [--reps 5]
    python bench/report.py --run-seconds 120      # make the long run first (chaos-sqlite)
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from playwright.sync_api import sync_playwright

ROOT = Path(__file__).resolve().parents[1]
SIZE_MAX_MB = 10.0
READY_MAX_S = 3.0


def make_run(seconds: float, reports: Path, store: str = "zoo.sqlite-crash-resume") -> Path:
    """A chaos-sqlite run of ``seconds`` against ``store`` (a zoo store: violations to click)."""
    subprocess.run([sys.executable, "-m", "harness", "run",
                    str(ROOT / "scenarios" / "chaos-sqlite.toml"), "--store", store,
                    "--duration", f"{seconds:g}", "--seed", "1", "-q", "--reports",
                    str(reports)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                   check=False)
    return max((d for d in reports.iterdir() if d.is_dir()), key=lambda d: d.stat().st_mtime)


def measure(run_dir: Path, reps: int) -> dict[str, float]:
    page_file = run_dir / "report.html"
    browser_path = shutil.which("chromium")
    if browser_path is None:
        raise SystemExit("chromium is not installed: scripts/install-browser installs it")
    loads, readies = [], []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=browser_path, args=["--no-sandbox"])
        try:
            for _ in range(reps):
                page = browser.new_page(viewport={"width": 1400, "height": 900})
                started = time.perf_counter()
                page.goto(page_file.as_uri(), wait_until="load")
                loads.append(time.perf_counter() - started)
                first = page.locator("#violations li").first
                if first.count():
                    first.click()
                    page.wait_for_selector(".op.hl", state="attached")
                else:
                    page.wait_for_selector("#timeline div", state="attached")
                readies.append(time.perf_counter() - started)
                page.close()
        finally:
            browser.close()
    report = json.loads((run_dir / "report.json").read_text())
    return {"ops": float(report["stats"]["worker_ops"]),
            "mb": page_file.stat().st_size / 2**20,
            "load_s": statistics.median(loads), "ready_s": statistics.median(readies)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("run_dir", nargs="?", type=Path)
    ap.add_argument("--baseline", type=Path)
    ap.add_argument("--run-seconds", type=float, default=120.0)
    ap.add_argument("--reps", type=int, default=5)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        long_dir = a.run_dir or make_run(a.run_seconds, Path(tmp) / "long")
        base_dir = a.baseline or make_run(2.0, Path(tmp) / "base")
        rows = {"baseline": measure(base_dir, a.reps), "long": measure(long_dir, a.reps)}
    for name, r in rows.items():
        print(f"{name:9} {r['ops']:>10.0f} ops  report.html {r['mb']:6.2f} MB  "
              f"load {r['load_s']:.2f} s  interactive {r['ready_s']:.2f} s")
    b, lg = rows["baseline"], rows["long"]
    print(f"long / baseline: ops x{lg['ops'] / b['ops']:.0f}, size x{lg['mb'] / b['mb']:.2f}, "
          f"interactive x{lg['ready_s'] / b['ready_s']:.2f}")
    ok = lg["mb"] <= SIZE_MAX_MB and lg["ready_s"] <= READY_MAX_S
    print("targets met" if ok else f"off target (size <= {SIZE_MAX_MB} MB, interactive "
          f"<= {READY_MAX_S} s)")


if __name__ == "__main__":
    main()
