"""Does each shipped scenario do what its header says, over several seeds? For one backend:
its reference store through every scenario of that backend (each must pass), and each zoo
store through the scenario its declaration names (each must fail with its kind), as a user
runs them (a real ``harness run`` process each). Prints a table and exits 1 if any row
falls short.

    python scripts/zoo_seeds.py --backend postgres [--seeds 1 2 3 4 5] [--reports DIR]

A scenario is the backend's when its store is (``scenarios/*.toml``). The figures of a run
of this script go in the docs (docs/scenarios.md), with the date.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from harness.scenario import load_scenario
from harness.stores import BUILTINS
from harness.stores.registry import resolve

SCENARIOS = Path(__file__).resolve().parents[1] / "scenarios"


def _run(scenario: Path, store: str, seed: int, reports: Path) -> dict[str, object]:
    t = time.monotonic()
    p = subprocess.run([sys.executable, "-m", "harness", "run", str(scenario), "--store", store,
                        "--seed", str(seed), "-q", "--reports", str(reports)],
                       capture_output=True, text=True, check=False)
    report = next((line.split("report: ", 1)[1] for line in p.stdout.splitlines()
                   if line.startswith("report: ")), None)
    counts: dict[str, int] = {}
    if report:
        data = json.loads(Path(report).read_text())
        counts = {k: v for k, v in data.get("check", {}).get("counts", {}).items() if v}
    return {"code": p.returncode, "counts": counts, "seconds": time.monotonic() - t}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--backend", default="postgres", choices=["sqlite", "redis", "postgres"])
    ap.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3, 4, 5])
    ap.add_argument("--reports", type=Path, help="keep the run directories here")
    a = ap.parse_args()
    reports = a.reports or Path(tempfile.mkdtemp(prefix="zoo-seeds-"))
    reference = next(n for n, i in BUILTINS.items() if i.backend == a.backend and i.expected is None)
    mine = sorted(p for p in SCENARIOS.glob("*.toml")
                  if resolve(load_scenario(p).store).backend == a.backend)
    rows: list[tuple[str, str, str, int, float]] = []  # store, scenario, wanted, hits, mean s
    for sc in mine:
        got = [_run(sc, reference, s, reports) for s in a.seeds]
        rows.append((reference, sc.name, "pass", sum(g["code"] == 0 for g in got),
                     sum(float(g["seconds"]) for g in got) / len(got)))  # type: ignore[arg-type]
        print(f"{reference} {sc.name}: exit codes {[g['code'] for g in got]}", flush=True)
    for name, info in sorted(BUILTINS.items()):
        if info.backend != a.backend or info.expected is None or info.scenario is None:
            continue
        kinds = {info.expected, *info.also_caught_as}
        got = [_run(SCENARIOS / info.scenario, name, s, reports) for s in a.seeds]
        hits = sum(g["code"] == 1 and bool(kinds & set(g["counts"])) for g in got)  # type: ignore[arg-type]
        rows.append((name, info.scenario, info.expected, hits,
                     sum(float(g["seconds"]) for g in got) / len(got)))  # type: ignore[arg-type]
        print(f"{name} {info.scenario}: {[g['counts'] for g in got]}", flush=True)
    n = len(a.seeds)
    print("\n| store | scenario | wanted | seeds | mean run |\n|---|---|---|---|---|")
    for store, sc_name, wanted, hits, secs in rows:
        print(f"| {store} | {sc_name} | {wanted} | {hits} of {n} | {secs:.1f} s |")
    return 0 if all(hits == n for *_, hits, _ in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
