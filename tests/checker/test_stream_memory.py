"""The streaming checker's memory follows the live sessions, not the length of the run.

A long synthetic run (``bench/checker.py``'s valid histories, made lazily: 32 live
conversations, each retired after 150 ops, processes killed now and then) is fed through
the checker, retiring sessions and ending killed processes as a coordinator would. From a
quarter of the run to its end (x4 the ops): the live state stays the same size, and all
that grows is the compact owner table of retired appends, at a bounded cost per op.
"""

from __future__ import annotations

import gc
import importlib.util
import tracemalloc
from pathlib import Path
from types import ModuleType
from typing import Any

from harness.checker.stream import StreamChecker

BENCH = Path(__file__).resolve().parents[2] / "bench" / "checker.py"
OPS = 100_000  # from a quarter to the end: 75k more ops, far past the live pool
#: Measured 2026-11-23: ~84 bytes per owner row, ~44 per op (8 of 15 ops append).
MAX_OWNER_BYTES_PER_OP = 50
#: All traced memory that is not the owner table may grow by this much from 1/4 to the end.
SLACK_BYTES = 2 << 20


def _bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_checker", BENCH)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _sample(sc: StreamChecker, ops: int) -> dict[str, Any]:
    gc.collect()
    return {"ops": ops, "traced": tracemalloc.get_traced_memory()[0], **sc.retained()}


def test_retained_state_is_flat_but_for_the_owner_table() -> None:
    bench = _bench()
    sc = StreamChecker()
    samples: list[dict[str, Any]] = []
    ops = 0
    tracemalloc.start()
    try:
        for kind, x in bench.build_stream(OPS, 4):
            if kind == "event":
                sc.feed(x)
                if x.type == "invoke":
                    ops += 1
                    if ops % (OPS // 8) == 0:
                        samples.append(_sample(sc, ops))
            elif kind == "retire":
                sc.retire(x)
            else:
                sc.process_ended(x)
        res = sc.finish()
    finally:
        tracemalloc.stop()
    assert res.valid and res.stats["ops"] == OPS
    quarter, end = samples[1], samples[-1]
    assert end["ops"] == 4 * quarter["ops"]
    assert end["judged_sessions"] > 4 * quarter["judged_sessions"] * 0.9  # sessions did retire
    for s in samples:  # the live part is bounded by the pool, whatever the length
        assert s["live_sessions"] <= bench.POOL and s["held_sessions"] == 0
        assert s["live_ops"] <= bench.POOL * bench.PER_SESSION
        assert s["open_invokes"] <= 4 and s["candidates"] == 0
    assert max(s["live_ops"] for s in samples[4:]) <= 1.5 * max(s["live_ops"] for s in samples[:4])
    owner_growth = end["owner_bytes"] - quarter["owner_bytes"]
    per_op = owner_growth / (end["ops"] - quarter["ops"])
    assert per_op <= MAX_OWNER_BYTES_PER_OP, per_op
    print(f"owner table {per_op:.1f} B/op; traced {quarter['traced'] / 2**20:.1f} MB at "
          f"{quarter['ops']} ops, {end['traced'] / 2**20:.1f} MB at {end['ops']}")
    assert end["owner_whole_rows"] == 0  # every append fits a compact row
    other_growth = (end["traced"] - end["owner_bytes"]) - (quarter["traced"] - quarter["owner_bytes"])
    assert other_growth <= SLACK_BYTES, (other_growth, samples)
