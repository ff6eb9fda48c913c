"""Benchmark of the exact decision (harness.checker: chain, frontier search, certificates).

    python bench/exact.py             # all three parts
    python bench/exact.py --quick     # smaller: agreement on 200 histories per family,
                                      # recorded runs at 200 ops only
    python bench/exact.py --part 2 --runs DIR   # keep the recorded runs in DIR; run again,
                                                # it checks them again without recording
    python bench/exact.py --part 2 --workers 2 4 8 16   # issue 21's grid: W 2-16, N 200-5000
    python bench/exact.py --part 2 --reps 9             # the least of 9 CPU times (noisy machines)
    python bench/exact.py --part 2 --workers 16 --ops 200 --recordings 8 --reps 9
                          # the spread: each of the grid's W16 N200 commands recorded 8 times

1. **Agreement** on small generated histories of simulated buggy stores (the families of
   ``tests/checker/simulate.py``: an append that reads then writes back, a back-dated
   append, a rollback in two steps, a rollback to the wrong snapshot, a snapshot in two
   steps), each judged by an independent brute-force oracle (every order of every subset
   of ops), by the fast rules alone and by the default check (fast rules, then every
   session decided): how many histories show the bug, how many of those each catches,
   false positives, and the default verdict's agreement with the oracle.
2. **Recorded histories**: ``harness run scenarios/smoke.toml --workers W --ops N --seed S``
   for W in 2, 4, 8, 16 (and 32 without --quick), N in 200 and 1000 (and 5000), S in 1, 2
   (``--seeds``), each command recorded once (``--recordings``: more, a recording differs
   from the next with timing); each history checked with ``check(exact=True, budget_s=60)``
   in its own process (CPU time, peak RSS) beside the fast rules' time on the same history
   in the same process; last, the range of the default check's time against the fast
   rules' and how many histories took more than 3x.
3. **Generated histories** (``bench/checker.py``'s synthetic nightly histories, 1e5 ops;
   1e4 with --quick)
   at 2, 4, 8, 16 and 32 processes, with and without rollbacks: the default check's ops/s
   and how many sessions were proven without search, beside the fast rules' ops/s.
"""

from __future__ import annotations

import argparse
import itertools
import json
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from harness.checker import check  # noqa: E402
from harness.checker.fast import check_fast  # noqa: E402
from harness.history import read_history  # noqa: E402


def agreement(n: int) -> bool:
    from tests.checker.simulate import BUGS, MORE_BUGS, buggy_params, simulate
    from tests.checker.test_bruteforce import TooBig, brute_force

    print(f"1. agreement with brute force, {n} histories per family (2-3 processes, 30-50 "
          "steps, crashes, failures and unknown outcomes)")
    print(f"{'family':<24}{'bug shows':>10}{'fast finds':>11}{'default finds':>14}"
          f"{'false pos.':>11}{'agreement':>10}{'too big':>9}")
    ok = True
    for bug in BUGS + MORE_BUGS:
        shows = fast_finds = default_finds = false_pos = agree = too_big = 0
        for seed in range(n):
            events = simulate(seed, buggy_params(random.Random(seed), bug))
            try:
                truth = brute_force(events, budget=2_000_000)
            except TooBig:
                too_big += 1
                continue
            fast, default = check_fast(events).valid, check(events).valid
            shows += not truth
            fast_finds += not truth and fast is False
            default_finds += not truth and default is False
            false_pos += truth and default is False
            agree += default is truth
        judged = n - too_big
        ok = ok and false_pos == 0 and agree == judged
        print(f"{bug:<24}{shows:>10}{fast_finds:>11}{default_finds:>14}{false_pos:>11}"
              f"{100 * agree / max(judged, 1):>9.1f}%{too_big:>9}", flush=True)
    return ok


def one(path: str, reps: int = 3) -> dict[str, Any]:
    """The three checks on one recorded history: the fast rules, the default check (its
    step budgets) and ``check(exact=True, budget_s=60)``; once each to warm up (imports,
    first calls), then ``reps`` times alternated, the least CPU time of each (a history
    whose two checks take more than 10 s together is timed once: the machines are noisy,
    and the least of several times is the one least disturbed)."""
    events = read_history(path)
    fast = check_fast(events)
    t = time.process_time()
    dflt = check(events)
    default_s = time.process_time() - t
    t = time.process_time()
    res = check(events, exact=True, budget_s=60)
    exact_s = time.process_time() - t
    fast_s = float("inf")
    for _ in range(reps if exact_s + default_s < 10 else 0):
        t = time.process_time()
        check_fast(events)
        fast_s = min(fast_s, time.process_time() - t)
        t = time.process_time()
        check(events)
        default_s = min(default_s, time.process_time() - t)
        t = time.process_time()
        check(events, exact=True, budget_s=60)
        exact_s = min(exact_s, time.process_time() - t)
    if fast_s == float("inf"):
        t = time.process_time()
        check_fast(events)
        fast_s = time.process_time() - t
    proof = res.proof() or {}
    dproof = dflt.proof() or {}
    return {"ops": fast.stats["ops"], "fast_s": fast_s, "default_s": default_s,
            "exact_s": exact_s, "valid": res.valid, "proven": proof.get("proven"),
            "sessions": proof.get("sessions"), "unknown": proof.get("sessions_unknown_count"),
            "default_proven": dproof.get("proven"),
            "default_unknown": dproof.get("sessions_unknown_count"),
            "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}


def recorded(workers: list[int], sizes: list[int], keep: Path | None = None, reps: int = 3,
             seeds: tuple[int, ...] = (1, 2), recordings: int = 1) -> bool:
    print("\n2. recorded histories: harness run scenarios/smoke.toml --workers W --ops N "
          "--seed S; the default check and check(exact=True, budget_s=60) in a process of "
          f"their own, warmed up, best of {reps} CPU times; x fast: against the fast rules alone")
    print(f"{'W':>3}{'N':>6}{'S':>3}{'ops':>8}{'fast s':>8}{'default s':>10}{'x fast':>8}"
          f"{'exact s':>9}{'x fast':>8}{'peak MB':>8}  default / exact")
    ok = True
    ratios: list[float] = []  # the default check's time over the fast rules', each history
    with tempfile.TemporaryDirectory() as tmp:
        for w, n, s, k in itertools.product(workers, sizes, seeds, range(recordings)):
            # (a second recording of a command has a directory of its own)
            d = (keep or Path(tmp)) / (f"w{w}-n{n}-s{s}" + (f"-r{k + 1}" if k else ""))
            if not d.is_dir():  # --runs: a history recorded before is checked again
                subprocess.run([sys.executable, "-m", "harness", "run",
                                str(ROOT / "scenarios/smoke.toml"), "--workers", str(w),
                                "--ops", str(n), "--seed", str(s), "--reports", str(d)],
                               check=False, capture_output=True, cwd=tmp)
            run = next(d.iterdir())
            out = subprocess.run([sys.executable, __file__, "--one", str(run),
                                  "--reps", str(reps)],
                                 check=True, capture_output=True, text=True)
            r = json.loads(out.stdout)
            verdict = ("proven" if r["proven"] else
                       f"unknown ({r['unknown']} of {r['sessions']} sessions)"
                       if r["valid"] is None else str(r["valid"]))
            dverdict = ("proven" if r["default_proven"] else
                        f"{r['default_unknown']} of {r['sessions']} undecided")
            ok = ok and r["valid"] is not None
            fast_s = max(r["fast_s"], 1e-6)
            ratios.append(r["default_s"] / fast_s)
            print(f"{w:>3}{n:>6}{s:>3}{r['ops']:>8}{r['fast_s']:>8.3f}"
                  f"{r['default_s']:>10.3f}{r['default_s'] / fast_s:>8.1f}"
                  f"{r['exact_s']:>9.3f}{r['exact_s'] / fast_s:>8.1f}{r['rss_mb']:>8.0f}"
                  f"  {dverdict} / {verdict}", flush=True)
    if ratios:
        print(f"by default {min(ratios):.2f}-{max(ratios):.2f}x the fast rules' time; over "
              f"3.0x: {sum(x > 3.0 for x in ratios)} of {len(ratios)}")
    return ok


def generated(n_ops: int, reps: int = 3) -> None:
    import checker as synth  # bench/checker.py

    print(f"\n3. generated histories ({n_ops:,} ops, bench/checker.py's nightly mix), "
          f"default check vs the fast rules, CPU time, best of {reps}")
    print(f"{'procs':>5}{'rollbacks':>10}{'fast ops/s':>11}{'default ops/s':>14}{'x fast':>8}"
          f"{'no search':>10}{'searched':>9}{'undecided':>10}")
    for rollbacks in (True, False):
        for procs in (2, 4, 8, 16, 32):
            events = synth.build(n_ops, procs, rollbacks=rollbacks)
            fast_s = default_s = float("inf")
            for _ in range(reps):  # alternated, so that both see the same machine
                t = time.process_time()
                check_fast(events)
                fast_s = min(fast_s, time.process_time() - t)
                t = time.process_time()
                res = check(events)
                default_s = min(default_s, time.process_time() - t)
            ex = res.stats["exact"]
            print(f"{procs:>5}{'yes' if rollbacks else 'no':>10}{n_ops / fast_s:>11,.0f}"
                  f"{n_ops / default_s:>14,.0f}{default_s / fast_s:>8.2f}"
                  f"{ex['sessions_proven_without_search']:>10}{ex['sessions_searched']:>9}"
                  f"{len(ex['sessions_unknown']):>10}", flush=True)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--one", help=argparse.SUPPRESS)
    ap.add_argument("--part", type=int, choices=(1, 2, 3), help="run one part only")
    ap.add_argument("--workers", type=int, nargs="+", help="part 2: these numbers of "
                    "workers (default 2 4 8 16 32; --quick: 2 4 8 16)")
    ap.add_argument("--ops", type=int, nargs="+", help="part 2: these numbers of ops per "
                    "worker (default 200 1000 5000; --quick: 200)")
    ap.add_argument("--seeds", type=int, nargs="+", default=[1, 2], help="part 2: these "
                    "seeds (default 1 2)")
    ap.add_argument("--recordings", type=int, default=1, help="part 2: record each command "
                    "this many times, each recording checked (default 1)")
    ap.add_argument("--runs", type=Path, help="part 2: keep the recorded runs in this "
                    "directory, and check again those already there instead of recording")
    ap.add_argument("--reps", type=int, default=3, help="part 2: time each check this many "
                    "times, the least CPU time kept (default 3; more where the machine is noisy)")
    args = ap.parse_args(argv)
    if args.one:
        print(json.dumps(one(args.one, args.reps)))
        return 0
    ok = True
    if args.part in (None, 1):
        ok = agreement(200 if args.quick else 1000) and ok
    if args.part in (None, 2):
        ok = recorded(args.workers or ([2, 4, 8, 16] if args.quick else [2, 4, 8, 16, 32]),
                      args.ops or ([200] if args.quick else [200, 1000, 5000]), args.runs,
                      args.reps, tuple(args.seeds), args.recordings) and ok
    if args.part in (None, 3):
        generated(10_000 if args.quick else 100_000)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
