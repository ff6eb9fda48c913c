"""Controlled mode: its cost, and what it buys in finding races, all in one run.

1. Scheduling decisions per second, 4 worker processes, reference SQLite and Redis stores
   (appends and reads over 8 sessions), next to the same scenario in free mode (ops/s),
   and the control plane alone (workers that do nothing but stop at points).
2. Schedules explored per minute: whole controlled runs (spawn, run, final read, check)
   of a 4 x 30-op scenario, one after the other.
3. Time to first detection of each race in the zoo, on the scenario that tells its story
   (``scenarios/*.toml``) and on a tiny run of it (2 workers x 5 ops), in these ways:
   free mode (runs under seeds N, N+1, ... until one fails), controlled PCT and random
   walk (``--schedules``), and the approach the field uses today: one process,
   ``asyncio.gather`` over coroutines that share one store (also with each coroutine's
   calls in a thread of its own, ``gather + threads``). Each is repeated ``--reps`` times
   from different seeds (medians), bounded by ``--budget`` seconds.

    python bench/controlled.py [--reps 3] [--budget 60] [--parts 123]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from pathlib import Path
from typing import Any

import multiprocess

from harness.backends.redis import ManagedRedis
from harness.checker import check
from harness.history import merge, read_log
from harness.plan import Op, make_plan
from harness.runner.control.driver import Controller
from harness.runner.control.hooks import attach
from harness.runner.coordinator import run
from harness.runner.history_writer import HistoryWriter
from harness.runner.worker import execute
from harness.scenario import PayloadSpec, RedisSpec, Scenario, load_scenario
from harness.scenario_control import ControlSpec
from harness.stores import BUILTINS, open_store

SCENARIOS = Path(__file__).resolve().parents[1] / "scenarios"
RACES = {"zoo.redis-rmw-append": "redis-append-race.toml",
         "zoo.sqlite-max-turn-race": "sqlite-max-turn-race.toml"}


def _rate_scenario(store: str, controlled: bool, ops: int) -> Scenario:
    return Scenario(name="rate", store=store, seed=1, workers=4, ops=ops, sessions=8,
                    weights={"append": 3, "read": 1}, payload=PayloadSpec(0, 0.0),
                    redis=RedisSpec(persistence="none"),
                    control={"enabled": True, "strategy": "random"} if controlled else {})


def decisions(tmp: Path, ops: int) -> None:
    print("1. scheduling decisions per second, 4 worker processes (target >= 5,000/s)")
    print(f"   {'control plane only':22} {_plane(4, 5000):8.0f} decisions/s")
    for store in ("sqlite", "redis"):
        c = run(_rate_scenario(store, True, ops), reports=tmp)
        f = run(_rate_scenario(store, False, ops), reports=tmp)
        s = c.stats["control"]
        print(f"   {store + ' reference store':22} {s['decisions_per_s']:8.0f} decisions/s "
              f"({s['decisions']} decisions, {s['busy_retries']} SQLITE_BUSY retries); "
              f"whole run {c.stats['seconds']:.2f} s controlled vs {f.stats['seconds']:.2f} s "
              f"free for {4 * ops} ops")


def _noop_worker(how: Any, slot: int, n: int) -> None:
    c = attach(how, slot)
    for _ in range(n):
        c.point("noop")
    c.done()


def _plane(workers: int, points: int) -> float:
    ctl = Controller(ControlSpec(enabled=True, strategy="random"), 1, workers, points)
    ctx = multiprocess.get_context("fork")
    procs = [ctx.Process(target=_noop_worker, args=(ctl.attach, w, points))
             for w in range(workers)]
    try:
        for p in procs:
            p.start()
        t = ctl.drive(procs, time.monotonic() + 60)
    finally:
        for p in procs:
            p.join()
        ctl.close()
    return t.decisions / t.seconds


def schedules_per_minute(tmp: Path, n: int) -> None:
    print("2. schedules explored per minute (whole controlled runs, 4 workers x 30 ops)")
    for store in ("sqlite", "redis", *RACES):
        sc = load_scenario(SCENARIOS / RACES.get(store, "smoke.toml")).with_overrides(
            store=store, workers=4, ops=30, control={"enabled": True, "strategy": "pct"})
        t0 = time.monotonic()
        for i in range(n):
            run(sc.with_overrides(seed=1000 + i), reports=tmp)
        per_min = 60 * n / (time.monotonic() - t0)
        print(f"   {store:26} {per_min:6.0f} schedules/min")


# --- time to first detection ------------------------------------------------------------

def _free(sc: Scenario, seed: int, tmp: Path, budget: float) -> tuple[float | None, int]:
    t0, n = time.monotonic(), 0
    while time.monotonic() - t0 < budget:
        n += 1
        res = run(sc.with_overrides(seed=seed + n - 1, control={}), reports=tmp)
        if res.result.valid is False:
            return time.monotonic() - t0, n
    return None, n


def _controlled(sc: Scenario, seed: int, tmp: Path, budget: float,
                strategy: str = "pct") -> tuple[float | None, int]:
    """What ``harness run --controlled --schedules K`` does, bounded by time instead."""
    t0, n = time.monotonic(), 0
    cs = sc.with_overrides(control={"enabled": True, "strategy": strategy})
    while time.monotonic() - t0 < budget:
        n += 1
        if run(cs.with_overrides(seed=seed + n - 1), reports=tmp).result.valid is False:
            return time.monotonic() - t0, n
    return None, n


async def _agents(store: Any, streams: tuple[tuple[Op, ...], ...], logs: list[HistoryWriter],
                  threads: bool) -> None:
    loop = asyncio.get_running_loop()
    pools = [ThreadPoolExecutor(1) for _ in streams] if threads else []

    async def agent(i: int) -> None:
        st = store
        if threads:  # each coroutine's store lives in its own thread (sqlite3 needs that)
            st = await loop.run_in_executor(pools[i], store)
        for op in streams[i]:
            if threads:
                await loop.run_in_executor(pools[i], execute, st, [op], logs[i])
            else:
                execute(st, [op], logs[i])
                await asyncio.sleep(0)
        if threads:
            await loop.run_in_executor(pools[i], st.close)

    try:
        await asyncio.gather(*(agent(i) for i in range(len(streams))))
    finally:
        for p in pools:
            p.shutdown()


def _gather_once(sc: Scenario, seed: int, url: str, tmp: Path, threads: bool) -> bool:
    info = BUILTINS[sc.store]
    plan = make_plan(sc, seed, info.capabilities)
    d = Path(tempfile.mkdtemp(dir=tmp))
    ns = f"gather:{d.name}"  # a fresh namespace (and directory) every run
    url = url or f"sqlite:///{d / 'store.db'}"
    streams = plan.materialize()
    logs = [HistoryWriter(d / f"{w}.jsonl", w) for w in range(len(streams))]
    shared = open_store(info, url, ns)
    opener: Callable[[], Any] = lambda: open_store(info, url, ns)  # noqa: E731
    asyncio.run(_agents(opener if threads else shared, streams, logs, threads))
    with HistoryWriter(d / "final.jsonl", "final") as final:
        execute(shared, [Op("read", s) for s in plan.sessions()], final)
    shared.close()
    for log in logs:
        log.close()
    events = merge(read_log(p) for p in sorted(d.glob("*.jsonl")))
    return check(events).valid is False


def _gather(sc: Scenario, seed: int, tmp: Path, budget: float, url: str = "",
            threads: bool = False) -> tuple[float | None, int]:
    t0, n = time.monotonic(), 0
    while time.monotonic() - t0 < budget:
        n += 1
        if _gather_once(sc, seed + n - 1, url, tmp, threads):
            return time.monotonic() - t0, n
    return None, n


def _cases() -> Iterator[tuple[str, str, Scenario]]:
    """(store, label, scenario): the story scenario of each race, and a tiny run of it."""
    for store, file in RACES.items():
        sc = load_scenario(SCENARIOS / file).with_overrides(store=store)
        yield store, f"{sc.workers} workers x {sc.ops} ops, {file}", sc
        tiny = sc.with_overrides(workers=2, ops=5, sessions=1)
        yield store, "2 workers x 5 ops, 1 session", tiny


def detection(tmp: Path, reps: int, budget: float) -> None:
    print(f"3. time to first detection (median of {reps} from different seeds; budget "
          f"{budget:.0f} s each; '-' = not found; a mode that misses once is not repeated)")
    with ManagedRedis(tmp / "gather-redis", "none") as redis:
        for store, label, sc in _cases():
            url = redis.url if BUILTINS[store].backend == "redis" else ""
            modes: dict[str, Callable[..., tuple[float | None, int]]] = {
                "free mode": _free,
                "controlled PCT": _controlled,
                "controlled random": partial(_controlled, strategy="random"),
                "asyncio.gather": partial(_gather, url=url),
                "gather + threads": partial(_gather, url=url, threads=True),
            }
            print(f"   {store} ({label})")
            med: dict[str, float | None] = {}
            for name, fn in modes.items():
                got: list[tuple[float | None, int]] = []
                for r in range(reps):
                    got.append(fn(sc, 100 + 1000 * r, tmp, budget))
                    if got[-1][0] is None:
                        break
                times = [t for t, _ in got if t is not None]
                med[name] = statistics.median(times) if len(times) == reps else None
                runs = statistics.median(n for _, n in got)
                shown = f"{med[name]:7.2f} s" if med[name] is not None else "      -  "
                print(f"     {name:18} {shown}  ({len(times)}/{len(got)} found, median "
                      f"{runs:g} runs/schedules each)")
            base = med["controlled PCT"]
            if base:
                ratios = ", ".join(
                    f"{k} / PCT = {v / base:.2f}" if v else f"{k} / PCT = inf (> {budget:.0f} s)"
                    for k, v in med.items() if k != "controlled PCT")
                print(f"     ratios: {ratios}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ops", type=int, default=1000, help="ops per worker for part 1")
    ap.add_argument("--schedules", type=int, default=20, help="runs for part 2")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--budget", type=float, default=60.0)
    ap.add_argument("--parts", default="123", help="which parts to run, e.g. 1 or 23")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="harness-bench-ctl-") as d:
        tmp = Path(d)
        if "1" in a.parts:
            decisions(tmp, a.ops)
        if "2" in a.parts:
            schedules_per_minute(tmp, a.schedules)
        if "3" in a.parts:
            detection(tmp, a.reps, a.budget)


if __name__ == "__main__":
    main()
