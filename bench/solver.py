"""Benchmark of ``check --exact``'s last resort, the SMT solver (harness.checker.smt), beside
the default check on the same sessions.

    python bench/solver.py                      # the recorded sessions of tests/checker/data
    python bench/solver.py FILE... --budget 600 # these histories, 600 s for the solver each

Each history is timed in a process of its own: the default check (its step budgets: the
searches), then the solver alone on each session it covers (``smt.decide``, up to
``--budget`` seconds), its order checked by ``exact.replays``. Prints, per session, the ops,
the default check's CPU time and verdict, the solver's CPU time and verdict, the ratio of
the two, and the process's peak RSS. The solver is the slower on every session the
searches decide; it is for those they do not.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from harness.checker import check, smt  # noqa: E402
from harness.checker.evidence import Evidence  # noqa: E402
from harness.checker.exact import complete, replays, session_ops  # noqa: E402
from harness.checker.ops import group_by_session  # noqa: E402
from harness.history import read_history  # noqa: E402


def one(path: str, budget: float) -> list[dict[str, Any]]:
    events = read_history(path)
    t = time.process_time()
    res = check(events)
    default_s = time.process_time() - t
    unknown = set((res.stats.get("exact") or {}).get("sessions_unknown", ()))
    rows = []
    for name, so in group_by_session(events)[0].items():
        ops = session_ops(so, Evidence())
        row: dict[str, Any] = {"session": name, "ops": len(ops), "default_s": default_s,
                               "default": "undecided" if name in unknown else "proven"}
        if not smt.supported(ops):
            row["solver"] = "not covered"
        else:
            t = time.process_time()
            out = smt.decide(ops, time.monotonic() + budget)
            row["solver_s"] = time.process_time() - t
            if out.ok:
                order = [ops[k] for k in out.order]
                assert complete(order, ops) and replays(order), "an order that does not replay"
            row["solver"] = {True: "proven", False: "refuted", None: "undecided"}[out.ok]
        rows.append(row)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return [r | {"rss_mb": peak} for r in rows]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("files", nargs="*", type=Path, help="histories (default: tests/checker/data)")
    ap.add_argument("--budget", type=float, default=120.0, help="seconds for the solver, each session")
    ap.add_argument("--one", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one:
        print(json.dumps(one(args.one, args.budget)))
        return
    if not smt.available():
        sys.exit("the solver is not installed: pip install -e '.[smt]'")
    files = args.files or sorted((ROOT / "tests/checker/data").glob("*.jsonl.zst"))
    print(f"the default check (its step budgets) and the solver alone ({args.budget:.0f} s a "
          "session at most), CPU seconds, each history in a process of its own")
    print(f"{'history':<24}{'session':>8}{'ops':>6}{'default s':>10}{'default':>11}"
          f"{'solver s':>10}{'solver':>12}{'x default':>10}{'peak MB':>9}")
    for f in files:
        out = subprocess.run([sys.executable, __file__, "--one", str(f), "--budget", str(args.budget)],
                             check=True, capture_output=True, text=True)
        for r in json.loads(out.stdout):
            s = r.get("solver_s")
            took = "" if s is None else f"{s:.2f}"
            ratio = "" if s is None else f"{s / max(r['default_s'], 1e-6):.0f}x"
            print(f"{f.name.split('.')[0]:<24}{r['session']:>8}{r['ops']:>6}{r['default_s']:>10.2f}"
                  f"{r['default']:>11}{took:>10}{r['solver']:>12}{ratio:>10}"
                  f"{r['rss_mb']:>9.0f}", flush=True)


if __name__ == "__main__":
    main()
