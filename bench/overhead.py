"""Overhead of the harness: the same worker processes doing the same operations through
the harness (history logging, error classification) versus raw store calls.

Both sides run in this one process tree on a fresh target each, back to back, in an order
shuffled for each repetition (seeded; a rotation would give each mode the same predecessor
every time, and whatever one run leaves behind, dirty pages of its logs say, would then
always land on the same next mode). Each repetition gives a ratio, raw time / harness time
(= harness throughput / raw throughput); the printed ratio is their median
with the quartiles beside it, since a single run on a small machine swings by 0.1 and more
(SQLite's busy handler sleeps a millisecond or more whenever a writer finds the lock taken,
so who waits on whom decides much of a run's time). Each rep also runs raw a second time:
the control line's ratio, raw / raw again, shows how far two identical runs differ here.
CPU time per op (user + system, all workers) is printed too. Two controls say what per-op
work of a given kind costs on this machine: ``--gap-us US`` (busy work between ops, with no
footprint) and ``--floor`` (one ``os.write`` of two pre-built history lines before each op,
the least any log that is on disk before each store call must do).

The stores: ``sqlite`` and ``redis`` are the reference stores as the tests run them (SQLite
at ``synchronous=NORMAL``, Redis at ``appendfsync everysec``: nothing waits for the disk);
``sqlite-durable`` and ``redis-durable`` are the same stores with each write on disk before
it returns (SQLite's own default ``synchronous=FULL``; ``appendfsync always``, what ``harness
run`` gives the Redis it starts), run with at most 500 ops per worker; ``postgres`` is the
reference PostgreSQL store (psycopg 3) on a server started here as ``harness run`` starts
one (``fsync`` and ``synchronous_commit`` on: durable too), a fresh schema per run, against
raw psycopg calls through the same store.

Target (docs/benchmarks.md says why the fast stores have none): a ratio >= 0.9
against the durable stores. Against the fast ones (15-30 µs of CPU per op) the ratio is
printed without a target: the floor alone, one history ``os.write`` before each store call,
is 0.95-0.97 there, and a ratio of 0.9 would leave about a microsecond per op for everything
else the harness does in Python. Last, what the harness adds per op is printed as CPU µs
(``cost per op``), measured in this process against one worker of each fast store, where it
can be told apart from noise (a forked child's rusage also counts its start and exit).

    python bench/overhead.py [--workers 4] [--ops 2000] [--reps 11] [--store NAME]
                             [--gap-us US] [--floor] [--no-cost]
"""

from __future__ import annotations

import argparse
import os
import random
import resource
import statistics
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import multiprocess

from harness.backends.postgres import ManagedPostgres, with_search_path
from harness.backends.redis import ManagedRedis
from harness.backends.sqlite import SqliteTarget
from harness.plan import Op, make_plan
from harness.runner.history_writer import HistoryWriter
from harness.runner.worker import execute
from harness.scenario import PayloadSpec, Scenario
from harness.stores import BUILTINS, open_store
from harness.stores.sqlite import SqliteStore

WEIGHTS = {"append": 6, "read": 3, "snapshot": 1, "rollback": 1, "list_snapshots": 1}
STORES = ("sqlite", "redis", "sqlite-durable", "redis-durable", "postgres")
DURABLE = ("sqlite-durable", "redis-durable", "postgres")
DURABLE_OPS = 500  # at most this many ops per worker against a durable store (fsyncs)


#: what the floor control writes before each op: an ok and an invoke line as the harness
#: writes them (one os.write per op carries a completion and the next invoke)
FLOOR_LINES = (b'{"index":7,"time":1234567890123,"process":0,"pid":4242,"type":"ok","f":"append",'
               b'"session":"s3","value":["user","w0-17 a turn with some words in it"]}\n'
               b'{"index":8,"time":1234567890456,"process":0,"pid":4242,"type":"invoke",'
               b'"f":"read","session":"s5","value":null}\n')


def _raw(store: Any, ops: tuple[Op, ...], gap_s: float = 0.0, fd: int | None = None) -> None:
    known: dict[str, list[str]] = {}
    for op in ops:
        s = op.session
        if fd is not None:  # the floor control: one durable write per op, nothing else
            os.write(fd, FLOOR_LINES)
        if gap_s:  # the gap control: busy work between store calls, where the harness logs
            until = time.perf_counter() + gap_s
            while time.perf_counter() < until:
                pass
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
    store = open_store(BUILTINS[spec.removesuffix("-durable")], url, ns)
    if isinstance(store, SqliteStore) and spec == "sqlite-durable":  # SQLite's default
        store.conn.execute("PRAGMA synchronous=FULL")  # durability: the WAL fsynced per commit
    writer = HistoryWriter(log, 0) if mode == "harness" else None
    ready.release()
    go.wait()
    if writer is not None:
        execute(store, ops, writer)
        writer.close()
    elif mode == "raw+write":
        fd = os.open(log, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        _raw(store, ops, fd=fd)
        os.close(fd)
    else:
        _raw(store, ops, GAP_S if mode == "raw+gap" else 0.0)
    store.close()


GAP_S = 0.0  # set by --gap-us (before the workers fork)


def _once(mode: str, spec: str, url: str, ns: str, streams: tuple[tuple[Op, ...], ...],
          logdir: Path) -> tuple[float, float]:
    """(wall seconds, CPU seconds of the workers) of one run of all workers."""
    ctx = multiprocess.get_context("fork")
    ready, go = ctx.Semaphore(0), ctx.Event()
    procs = [ctx.Process(target=_worker, args=(mode, spec, url, ns, ops,
                                               str(logdir / f"{ns}-{i}.jsonl"), ready, go))
             for i, ops in enumerate(streams)]
    for p in procs:
        p.start()
    for _ in procs:
        if not ready.acquire(timeout=60):
            for q in procs:
                q.kill()
            raise SystemExit(f"{mode} workers did not get ready (see the traceback above)")
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    go.set()
    for p in procs:
        p.join()
        assert p.exitcode == 0, f"{mode} worker failed"
    wall = time.perf_counter() - t0
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)


MODES: tuple[str, ...] = ("raw", "harness", "raw-again")


def _streams(workers: int, ops: int) -> tuple[tuple[Op, ...], ...]:
    sc = Scenario(workers=workers, ops=ops, sessions=8, weights=WEIGHTS,
                  payload=PayloadSpec(max_bytes=4000, long_rate=0.01))
    return make_plan(sc, 1).materialize()


@contextmanager
def _targets(spec: str, tmp: Path) -> Iterator[Callable[[str], str]]:
    """A function giving a fresh target's URL for a name unique within ``spec``: a new
    SQLite file each time, the one Redis started here (an fsync per write if durable),
    where the caller uses the name as the namespace, or a new schema on the one PostgreSQL
    started here (fsync on, as `harness run` starts it)."""
    if spec == "postgres":
        import psycopg

        pg = ManagedPostgres(tmp / f"pg-{os.urandom(4).hex()}")
        pg.start()

        def pg_url(name: str) -> str:
            with psycopg.connect(pg.url, autocommit=True) as c:
                c.execute(f'CREATE SCHEMA "{name}"')
            return with_search_path(pg.url, name)

        try:
            yield pg_url
        finally:
            pg.stop()
        return
    if not spec.startswith("redis"):
        def sqlite_url(name: str) -> str:
            t = SqliteTarget(tmp / f"{spec}-{name}")  # sqlite and sqlite-durable share tmp
            t.start()
            return t.url

        yield sqlite_url
        return
    redis = ManagedRedis(tmp / f"{spec}-{os.urandom(4).hex()}",
                         "always" if spec == "redis-durable" else "everysec")
    redis.start()
    try:
        yield lambda name: redis.url
    finally:
        redis.stop()


def bench(spec: str, workers: int, ops: int, reps: int, tmp: Path) -> dict[str, float]:
    """Each rep runs raw, harness and raw again (the control: what two identical raw runs
    differ by), in an order shuffled per rep."""
    streams = _streams(workers, ops)
    wall: dict[str, list[float]] = {m: [] for m in MODES}
    cpu: dict[str, list[float]] = {m: [] for m in MODES}
    with _targets(spec, tmp) as target:
        for rep in range(reps):
            for mode in random.Random(rep).sample(MODES, len(MODES)):
                w, c = _once(mode, spec, target(f"{mode}{rep}"), f"{mode}{rep}", streams, tmp)
                wall[mode].append(w)
                cpu[mode].append(c)
    total = workers * ops

    def median_ratio(a: list[float], b: list[float]) -> tuple[float, float, float]:
        ratios = sorted(x / y for x, y in zip(a, b, strict=True))
        if len(ratios) < 2:
            return ratios[0], ratios[0], ratios[0]
        q1, med, q3 = statistics.quantiles(ratios, n=4)
        return med, q1, q3

    ratio, q1, q3 = median_ratio(wall["raw"], wall["harness"])
    control, c1, c3 = median_ratio(wall["raw"], wall["raw-again"])
    gap = median_ratio(wall["raw"], wall["raw+gap"]) if "raw+gap" in wall else None
    floor = median_ratio(wall["raw"], wall["raw+write"]) if "raw+write" in wall else None
    return {
        **({"gap": gap[0], "g1": gap[1], "g3": gap[2]} if gap else {}),
        **({"floor": floor[0], "f1": floor[1], "f3": floor[2]} if floor else {}),
        "raw_ops_s": total / statistics.median(wall["raw"]),
        "harness_ops_s": total / statistics.median(wall["harness"]),
        "ratio": ratio, "q1": q1, "q3": q3,
        "control": control, "c1": c1, "c3": c3,
        "raw_cpu_us": statistics.median(cpu["raw"]) / total * 1e6,
        "harness_cpu_us": statistics.median(cpu["harness"]) / total * 1e6,
    }


def cost(spec: str, n_ops: int, reps: int, tmp: Path) -> dict[str, float]:
    """CPU µs per op that the harness and the floor add to one worker, measured in this
    process (``time.process_time``; a forked child's rusage also counts its start and exit,
    and swung by +-5 µs per op here): raw, harness and floor on fresh targets in an order
    shuffled per rep, each figure the median over the reps of its difference from the
    same rep's raw run."""
    (ops,) = _streams(1, n_ops)
    modes = ("raw", "harness", "raw+write")
    cpu: dict[str, list[float]] = {m: [] for m in modes}
    with _targets(spec, tmp) as target:
        for rep in range(reps):
            for mode in random.Random(rep).sample(modes, len(modes)):
                name = f"cost-{mode}{rep}"
                store = open_store(BUILTINS[spec], target(name), name)
                log = str(tmp / f"{name}.jsonl")
                c0 = time.process_time()
                if mode == "harness":
                    with HistoryWriter(log, 0) as writer:
                        execute(store, ops, writer)
                elif mode == "raw+write":
                    fd = os.open(log, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
                    _raw(store, ops, fd=fd)
                    os.close(fd)
                else:
                    _raw(store, ops)
                cpu[mode].append(time.process_time() - c0)
                store.close()

    def added(mode: str) -> float:
        return statistics.median(m - r for m, r in zip(cpu[mode], cpu["raw"], strict=True)) / n_ops * 1e6

    return {"raw_cpu_us": statistics.median(cpu["raw"]) / n_ops * 1e6,
            "cost_us": added("harness"), "floor_cost_us": added("raw+write")}


def _print_ratio(spec: str, r: dict[str, float], gap_us: float, target: bool) -> None:
    verdict = ("OK" if r["ratio"] >= 0.9 else "BELOW TARGET") if target else "(no target: see docs/benchmarks.md)"
    print(f"{spec:24} raw {r['raw_ops_s']:7.0f} ops/s  harness {r['harness_ops_s']:7.0f}"
          f" ops/s  ratio {r['ratio']:.3f} [{r['q1']:.2f}-{r['q3']:.2f}] {verdict}\n"
          f"{'':25}control raw/raw {r['control']:.3f} [{r['c1']:.2f}-{r['c3']:.2f}]"
          f"  CPU/op raw {r['raw_cpu_us']:.0f} µs, harness {r['harness_cpu_us']:.0f} µs"
          + (f"\n{'':25}raw + {gap_us:g} µs gap per op: {r['gap']:.3f}"
             f" [{r['g1']:.2f}-{r['g3']:.2f}]" if "gap" in r else "")
          + (f"\n{'':25}raw + one write per op (floor): {r['floor']:.3f}"
             f" [{r['f1']:.2f}-{r['f3']:.2f}]" if "floor" in r else ""),
          flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--workers", type=int, default=4)
    ap.add_argument("--ops", type=int, default=2000)
    ap.add_argument("--reps", type=int, default=11)
    ap.add_argument("--store", choices=STORES, action="append",
                    help="one store only (repeatable); default all five")
    ap.add_argument("--gap-us", type=float, default=0.0,
                    help="also run raw with this many µs of busy work before each op, and"
                    " print its ratio: what any per-op work of that size costs")
    ap.add_argument("--floor", action="store_true",
                    help="also run raw with one os.write of two pre-built history lines before"
                    " each op, and print its ratio: the floor of any log that is on disk"
                    " before each store call")
    ap.add_argument("--no-cost", action="store_true",
                    help="skip the one-worker cost measurement")
    a = ap.parse_args()
    if a.workers < 1 or a.ops < 1 or a.reps < 1:
        ap.error("--workers, --ops and --reps must be at least 1")
    global GAP_S, MODES
    if a.gap_us > 0:
        GAP_S, MODES = a.gap_us / 1e6, (*MODES, "raw+gap")
    if a.floor:
        MODES = (*MODES, "raw+write")
    stores = a.store or STORES
    print(f"workers={a.workers} ops/worker={a.ops} reps={a.reps} (ratio = raw time / harness"
          " time, median of the reps [quartiles]; target >= 0.9 against a durable store)")
    with tempfile.TemporaryDirectory(prefix="harness-bench-") as d:
        for spec in stores:
            ops = min(a.ops, DURABLE_OPS) if spec in DURABLE else a.ops
            label = f"{spec} ({ops} ops)" if ops != a.ops else spec
            _print_ratio(label, bench(spec, a.workers, ops, a.reps, Path(d)), a.gap_us,
                         target=spec in DURABLE)
        cost_stores = [s for s in stores if s not in DURABLE]
        if a.no_cost or not cost_stores:
            return
        ops = a.workers * a.ops
        print(f"cost per op: one worker x {ops} ops in this process, CPU of harness (and of"
              f" the floor) minus raw, median of {a.reps} paired reps")
        for spec in cost_stores:
            r = cost(spec, ops, a.reps, Path(d))
            print(f"{spec:24} raw {r['raw_cpu_us']:.1f} µs/op  harness +{r['cost_us']:.1f} µs"
                  f"  floor +{r['floor_cost_us']:.1f} µs", flush=True)


if __name__ == "__main__":
    main()
