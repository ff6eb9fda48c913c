"""Overhead of the harness: the same worker processes doing the same operations through
the harness (history logging, error classification) versus raw store calls.

Both sides run in this one process tree, alternating, on a fresh target each repetition;
the printed ratio is harness throughput / raw throughput (target: >= 0.9).

    python bench/overhead.py [--workers 4] [--ops 2000] [--reps 5]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import multiprocess

from harness.history import HistoryWriter
from harness.plan import Op, make_plan
from harness.scenario import PayloadSpec, Scenario
from harness.stores import BUILTINS, open_store
from harness.targets import ManagedRedis, SqliteTarget
from harness.worker import execute

WEIGHTS = {"append": 6, "read": 3, "snapshot": 1, "rollback": 1, "list_snapshots": 1}


def _raw(store: Any, ops: tuple[Op, ...]) -> None:
    known: dict[str, list[str]] = {}
    for op in ops:
        s = op.session
        if op.f == "append":
            store.append(s, op.role, op.content)
        elif op.f == "read":
            store.history(s)
        elif op.f == "snapshot":
            known.setdefault(s, []).append(store.snapshot(s))
        elif op.f == "list_snapshots":
            known[s] = list(store.snapshots(s))
        elif op.f == "rollback":
            if not known.get(s):
                known[s] = list(store.snapshots(s))
            if known[s]:
                store.rollback(s, known[s][(op.choice or 0) % len(known[s])])


def _worker(mode: str, spec: str, url: str, ns: str, ops: tuple[Op, ...], log: str,
            ready: Any, go: Any) -> None:
    store = open_store(BUILTINS[spec], url, ns)
    writer = HistoryWriter(log, 0) if mode == "harness" else None
    ready.release()
    go.wait()
    if writer is not None:
        execute(store, ops, writer)
        writer.close()
    else:
        _raw(store, ops)
    store.close()


def _once(mode: str, spec: str, url: str, ns: str, streams: tuple[tuple[Op, ...], ...],
          logdir: Path) -> float:
    ctx = multiprocess.get_context("fork")
    ready, go = ctx.Semaphore(0), ctx.Event()
    procs = [ctx.Process(target=_worker, args=(mode, spec, url, ns, ops,
                                               str(logdir / f"{ns}-{i}.jsonl"), ready, go))
             for i, ops in enumerate(streams)]
    for p in procs:
        p.start()
    for _ in procs:
        ready.acquire()
    t0 = time.perf_counter()
    go.set()
    for p in procs:
        p.join()
        assert p.exitcode == 0, f"{mode} worker failed"
    return time.perf_counter() - t0


def bench(spec: str, workers: int, ops: int, reps: int, tmp: Path) -> dict[str, float]:
    sc = Scenario(workers=workers, ops=ops, sessions=8, weights=WEIGHTS,
                  payload=PayloadSpec(max_bytes=4000, long_rate=0.01))
    streams = make_plan(sc, 1).streams
    times: dict[str, list[float]] = {"raw": [], "harness": []}
    redis = ManagedRedis(tmp / "redis", "everysec") if spec == "redis" else None
    if redis:
        redis.start()
    try:
        for rep in range(reps):
            for mode in (("raw", "harness") if rep % 2 == 0 else ("harness", "raw")):
                if redis:
                    url = redis.url
                else:
                    t = SqliteTarget(tmp / f"{mode}{rep}")
                    t.start()
                    url = t.url
                times[mode].append(_once(mode, spec, url, f"{mode}{rep}", streams, tmp))
    finally:
        if redis:
            redis.stop()
    total = workers * ops
    raw, har = statistics.median(times["raw"]), statistics.median(times["harness"])
    return {"raw_ops_s": total / raw, "harness_ops_s": total / har, "ratio": raw / har}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--workers", type=int, default=4)
    ap.add_argument("--ops", type=int, default=2000)
    ap.add_argument("--reps", type=int, default=5)
    a = ap.parse_args()
    print(f"workers={a.workers} ops/worker={a.ops} reps={a.reps} (medians; ratio = harness/raw"
          " throughput, target >= 0.9)")
    with tempfile.TemporaryDirectory(prefix="harness-bench-") as d:
        for spec in ("sqlite", "redis"):
            r = bench(spec, a.workers, a.ops, a.reps, Path(d))
            ok = "OK" if r["ratio"] >= 0.9 else "BELOW TARGET"
            print(f"{spec:7} raw {r['raw_ops_s']:9.0f} ops/s   harness {r['harness_ops_s']:9.0f}"
                  f" ops/s   ratio {r['ratio']:.3f}  {ok}")


if __name__ == "__main__":
    main()
