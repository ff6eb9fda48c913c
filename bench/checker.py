"""Benchmark of the fast rules (and the default check) on synthetic valid histories.

    python bench/checker.py            # 1e4, 1e5, 1e6 ops x 4 and 64 processes
    python bench/checker.py --quick    # 1e4 and 1e5 only

Then the streaming checker (:mod:`harness.checker.stream`) on the same histories at 4
processes and every size but the smallest: its ops/s (CPU, history in memory, like the
batch figure) and its peak RSS with the history made lazily and fed as it comes (never
held, as a coordinator following logs), both as ratios to the batch run of that size.

Each (size, processes) runs in its own subprocess, which builds the history, times
the fast rules (``harness.checker.fast.check_fast``, the targets below) on it, then the
default check once (``harness.checker.check``: the fast rules, then every session decided
exactly; "default ops/s" and whether every session was proven) (CPU seconds of the best
of 30, 3 and 2 runs at 1e4, 1e5,
1e6: one core)
and reports its peak RSS (``ru_maxrss``, the history included).

The histories are what a long nightly run produces: a correct store driven by N worker
processes with overlapping ops (each is invoked, takes effect and completes at three
random later steps), 1 in 1000 ops cut short by a crash or an unknown outcome, and the op
mix of the shipped chaos scenarios (append 8 : read 4 : snapshot 1 : rollback 1 :
list_snapshots 1). Workers talk to a pool of 32 live conversations; a conversation retires
after 150 ops and a new one takes its place, so 1e6 ops touch ~6,700 sessions and a read,
which returns the whole session, holds ~18 turns on average (rollbacks keep sessions
short). Read values share their turn objects, as a coordinator's in-memory history does; a
history parsed from JSON holds separate copies: more memory, and about a quarter more time
(measured at 1e5 ops: the reads' turns are compared and hashed from scratch).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import subprocess
import sys
import time
from collections.abc import Iterator
from itertools import pairwise
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from harness.history import Event

POOL = 32
PER_SESSION = 150
#: The weights of the shipped chaos scenarios (scenarios/chaos-*.toml).
MIX = (("append", 8), ("read", 4), ("snapshot", 1), ("rollback", 1), ("list_snapshots", 1))
#: check() runs this many times on a 1e5-op history (30 at 1e4, 2 at 1e6); the best CPU
#: time counts, as with timeit: the best run is the one least disturbed by the machine.
REPEATS = 3
TARGET_OPS_S = 250_000
TARGET_SCALE = 12.0
TARGET_PROCS = 1.5
TARGET_MB = 1024


class _Session:
    __slots__ = ("ids", "name", "ops", "snaps", "turns")

    def __init__(self, name: str) -> None:
        self.name = name
        self.turns: list[list[str]] = []
        self.snaps: dict[str, list[list[str]]] = {}
        self.ids: list[str] = []
        self.ops = 0


def build(n_ops: int, procs: int, seed: int = 1, pool: int = POOL,
          per_session: int = PER_SESSION, rollbacks: bool = True) -> list[Event]:
    """A valid history of ``n_ops`` operations by ``procs`` processes, over ``pool`` live
    sessions each retired after ``per_session`` ops (0: never); without ``rollbacks``,
    the op mix has none."""
    b = _Builder(n_ops, procs, random.Random(seed), pool, per_session, rollbacks)
    while b.started < n_ops or b.inflight:
        b.t += 1
        idle = len(b.idle)
        if idle and b.started < n_ops and (not b.inflight or b.rng.random() < idle / procs):
            b.invoke()
        else:
            b.advance()
    return b.events


def build_stream(n_ops: int, procs: int, seed: int = 1, pool: int = POOL,
                 per_session: int = PER_SESSION) -> Iterator[tuple[str, Any]]:
    """:func:`build`'s history, made lazily, with what a coordinator knows as it runs:
    ``("event", e)`` in order, ``("retire", session)`` once no new op will touch the session
    (its last invoke was sent; ops still open complete later), ``("end", process)`` when a
    process is killed. Holds only the live sessions, never the history."""
    b = _Builder(n_ops, procs, random.Random(seed), pool, per_session)
    while b.started < n_ops or b.inflight:
        b.t += 1
        idle = len(b.idle)
        if idle and b.started < n_ops and (not b.inflight or b.rng.random() < idle / procs):
            b.invoke()
        else:
            b.advance()
        for e in b.events:
            yield "event", e
        yield from b.actions
        b.base += len(b.events)
        b.events.clear()
        b.actions.clear()


class _Builder:
    """The state of :func:`build`: live sessions, processes, ops in flight."""

    def __init__(self, n_ops: int, procs: int, rng: random.Random, pool: int,
                 per_session: int, rollbacks: bool = True) -> None:
        self.rng, self.pool, self.per_session = rng, pool, per_session
        self.live = [_Session(f"c{i}") for i in range(pool)]
        self.n_sessions = pool
        self.events: list[Event] = []
        self.inflight: dict[int, list[Any]] = {}
        self.idle = list(range(procs))
        self.next_proc = procs
        self.started = self.n = self.t = 0
        #: Ops each process has invoked: its turns are ``w<process>.<op number>|``, as
        #: the plan's are (``harness.plan``).
        self.per_proc: dict[int, int] = {}
        mix = [(f, w) for f, w in MIX if rollbacks or f != "rollback"]
        self.choices = rng.choices([f for f, _ in mix], [w for _, w in mix], k=n_ops)
        #: Index of ``events[0]`` (:func:`build_stream` drains the list as it goes).
        self.base = 0
        #: ``("retire", session)`` after a session's last invoke, ``("end", process)``
        #: when a process is killed (it never sends anything again).
        self.actions: list[tuple[str, Any]] = []

    def invoke(self) -> None:
        rng = self.rng
        p = self.idle.pop(rng.randrange(len(self.idle)))
        f = self.choices[self.started]
        self.started += 1
        k = rng.randrange(self.pool)
        ses = self.live[k]
        ses.ops += 1
        retired = ses.ops == self.per_session
        if retired:
            self.live[k] = _Session(f"c{self.n_sessions}")
            self.n_sessions += 1
        value: Any = None
        k_op = self.per_proc[p] = self.per_proc.get(p, -1) + 1
        if f == "append":
            self.n += 1
            value = ["user" if self.n & 1 else "assistant", f"w{p}.{k_op}|"]
        elif f == "rollback":
            value = rng.choice(ses.ids) if ses.ids else "none"
        self.events.append(Event(self.base + len(self.events), self.t, p, "invoke", f, ses.name, value))
        self.inflight[p] = [ses, f, value, False, None, None]
        if retired:
            self.actions.append(("retire", ses.name))

    def advance(self) -> None:
        """One op in flight takes effect, or completes (rarely: is cut short)."""
        p = self.rng.choice(list(self.inflight))
        op = self.inflight[p]
        if not op[3]:
            _apply(op, self.rng)
            return
        del self.inflight[p]
        r = self.rng.random()
        if r < 0.0005:  # killed: never completes; a new process takes the slot
            self.idle.append(self.next_proc)
            self.next_proc += 1
            self.actions.append(("end", p))
            return
        ses, f, ev = op[0], op[1], self.events
        i = self.base + len(ev)
        if r < 0.001:
            ev.append(Event(i, self.t, p, "info", f, ses.name, None, "ConnectionError"))
        elif op[5] is not None:
            ev.append(Event(i, self.t, p, "fail", f, ses.name, None, op[5]))
        else:
            ev.append(Event(i, self.t, p, "ok", f, ses.name, op[4]))
            if f == "snapshot":
                ses.ids.append(op[4])
        self.idle.append(p)


def _apply(op: list[Any], rng: random.Random) -> None:
    ses, f, value = op[0], op[1], op[2]
    op[3] = True
    if f == "append":
        ses.turns.append(value)
        op[4] = value
    elif f == "read":
        op[4] = list(ses.turns)
    elif f == "snapshot":
        sid = f"{ses.name}/s{len(ses.snaps)}"
        ses.snaps[sid] = list(ses.turns)
        op[4] = sid
    elif f == "rollback":
        if value in ses.snaps:
            ses.turns = list(ses.snaps[value])
            op[4] = value
        else:
            op[5] = f"SnapshotNotFound: {value}"
    else:
        op[4] = list(ses.snaps)


def _rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def one(n_ops: int, procs: int) -> dict[str, Any]:
    """Build, check and measure one history (run in a fresh process)."""
    from harness.checker import check
    from harness.checker.fast import check_fast

    t0 = time.perf_counter()
    events = build(n_ops, procs)
    built_s = time.perf_counter() - t0
    rss_history = _rss_mb()
    cpu = wall = float("inf")
    for _ in range(max(2, REPEATS * 100_000 // n_ops)):
        t0, c0 = time.perf_counter(), time.process_time()
        res = check_fast(events)
        cpu = min(cpu, time.process_time() - c0)
        wall = min(wall, time.perf_counter() - t0)
    secs = cpu
    c0 = time.process_time()
    default = check(events)  # the fast rules, then every session decided exactly
    default_s = time.process_time() - c0
    reads = [e for e in events if e.f == "read" and e.type == "ok"]
    return {
        "target_ops": n_ops,
        "procs": procs,
        "ops": res.stats["ops"],
        "sessions": res.stats["sessions"],
        "avg_read_len": round(sum(len(e.value) for e in reads) / max(1, len(reads)), 1),
        "valid": res.valid,
        "seconds": secs,
        "wall_seconds": wall,
        "ops_per_s": res.stats["ops"] / secs,
        "default_ops_per_s": res.stats["ops"] / default_s,
        "default_valid": default.valid,
        "proven": (default.proof() or {}).get("proven"),
        "build_s": built_s,
        "rss_history_mb": rss_history,
        "rss_peak_mb": _rss_mb(),
    }


def one_stream(n_ops: int, procs: int) -> dict[str, Any]:
    """Time the streaming checker on :func:`build_stream`'s history (held in memory, so
    only the checker is timed: CPU seconds of the best of as many runs as :func:`one`)."""
    from harness.checker.stream import StreamChecker

    items = list(build_stream(n_ops, procs))
    cpu = float("inf")
    for _ in range(max(2, REPEATS * 100_000 // n_ops)):
        c0 = time.process_time()
        sc = StreamChecker()
        for kind, x in items:
            if kind == "event":
                sc.feed(x)
            elif kind == "retire":
                sc.retire(x)
            else:
                sc.process_ended(x)
        res = sc.finish()
        cpu = min(cpu, time.process_time() - c0)
    return {"ops": res.stats["ops"], "valid": res.valid, "seconds": cpu,
            "ops_per_s": res.stats["ops"] / cpu}


def one_stream_rss(n_ops: int, procs: int) -> dict[str, Any]:
    """Peak RSS of a run as a coordinator would do it: the history made lazily and fed as
    it comes, never held (the generator's live sessions and the checker only)."""
    from harness.checker.stream import StreamChecker

    sc = StreamChecker()
    for kind, x in build_stream(n_ops, procs):
        if kind == "event":
            sc.feed(x)
        elif kind == "retire":
            sc.retire(x)
        else:
            sc.process_ended(x)
    kept = sc.retained()
    res = sc.finish()
    return {"ops": res.stats["ops"], "valid": res.valid, "rss_peak_mb": _rss_mb(),
            "owner_bytes_per_op": kept["owner_bytes"] / res.stats["ops"],
            "live_ops": kept["live_ops"]}


def _run(n_ops: int, procs: int, mode: str = "--one") -> dict[str, Any]:
    out = subprocess.run(
        [sys.executable, os.path.abspath(__file__), mode, str(n_ops), str(procs)],
        check=True, capture_output=True, text=True,
    )
    return dict(json.loads(out.stdout))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="1e4 and 1e5 ops only")
    ap.add_argument("--one", nargs=2, type=int, metavar=("OPS", "PROCS"), help=argparse.SUPPRESS)
    ap.add_argument("--stream", nargs=2, type=int, help=argparse.SUPPRESS)
    ap.add_argument("--stream-rss", nargs=2, type=int, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    for flag, fn in ((args.one, one), (args.stream, one_stream), (args.stream_rss, one_stream_rss)):
        if flag:
            print(json.dumps(fn(*flag)))
            return 0
    sizes = [10_000, 100_000] if args.quick else [10_000, 100_000, 1_000_000]
    print(" ".join(__doc__.split("\n\n")[4].split()) + "\n")
    rows: dict[tuple[int, int], dict[str, Any]] = {}
    print(f"{'ops':>9} {'procs':>5} {'sessions':>8} {'read len':>8} {'seconds':>8} "
          f"{'ops/s':>9} {'peak MB':>8} valid {'default ops/s':>13} proven")
    for n in sizes:
        for procs in (4, 64):
            r = rows[n, procs] = _run(n, procs)
            print(f"{r['ops']:>9} {procs:>5} {r['sessions']:>8} {r['avg_read_len']:>8} "
                  f"{r['seconds']:>8.3f} {r['ops_per_s']:>9.0f} {r['rss_peak_mb']:>8.0f} "
                  f"{r['valid']!s:>5} {r['default_ops_per_s']:>13.0f} {r['proven']}", flush=True)
    ok = _verdicts(rows, sizes) == 0
    return 0 if _streaming(rows, sizes[1:]) and ok else 1


def _streaming(rows: dict[tuple[int, int], dict[str, Any]], sizes: list[int]) -> bool:
    """The streaming checker at 4 processes against the batch one of the same run."""
    print("\nstreaming (harness.checker.stream, sessions retired as the history goes; 4 procs):")
    print(f"{'ops':>9} {'ops/s':>9} {'x batch':>7} {'peak MB':>8} {'x batch':>7} "
          f"{'owner B/op':>10} valid")
    ok = True
    for n in sizes:
        t, m, b = _run(n, 4, "--stream"), _run(n, 4, "--stream-rss"), rows[n, 4]
        ok = ok and t["valid"] and m["valid"]
        print(f"{t['ops']:>9} {t['ops_per_s']:>9.0f} {t['ops_per_s'] / b['ops_per_s']:>7.2f} "
              f"{m['rss_peak_mb']:>8.0f} {m['rss_peak_mb'] / b['rss_peak_mb']:>7.2f} "
              f"{m['owner_bytes_per_op']:>10.0f} {t['valid'] and m['valid']}", flush=True)
    return ok


def _verdicts(rows: dict[tuple[int, int], dict[str, Any]], sizes: list[int]) -> int:
    ok = True

    def say(name: str, value: str, met: bool) -> None:
        nonlocal ok
        ok = ok and met
        print(f"  {'MET ' if met else 'MISS'} {name}: {value}")

    print("\ntargets:")
    worst = min(r["ops_per_s"] for r in rows.values())
    say(f">= {TARGET_OPS_S:,} ops/s", f"slowest run {worst:,.0f} ops/s", worst >= TARGET_OPS_S)
    for a, b in pairwise(sizes):
        for procs in (4, 64):
            ra, rb = rows[a, procs], rows[b, procs]
            ratio = (rb["seconds"] / ra["seconds"]) / (rb["ops"] / ra["ops"]) * 10
            say(f"10x ops <= {TARGET_SCALE}x time ({a:.0e}->{b:.0e}, {procs} procs)",
                f"{rb['seconds'] / ra['seconds']:.2f}x time for {rb['ops'] / ra['ops']:.2f}x ops"
                f" ({ratio:.2f}x per 10x)", ratio <= TARGET_SCALE)
    for n in sizes:
        r4, r64 = rows[n, 4], rows[n, 64]
        ratio = (r64["seconds"] / r64["ops"]) / (r4["seconds"] / r4["ops"])
        say(f"64 procs <= {TARGET_PROCS}x time of 4 ({n:.0e} ops)", f"{ratio:.2f}x",
            ratio <= TARGET_PROCS)
    if 1_000_000 in sizes:
        peak = max(rows[1_000_000, p]["rss_peak_mb"] for p in (4, 64))
        say(f"< {TARGET_MB} MB at 1e6 ops", f"peak RSS {peak:.0f} MB (history included)",
            peak < TARGET_MB)
    if not all(r["valid"] and r["default_valid"] for r in rows.values()):
        print("  MISS the synthetic histories are valid: a false positive!")
        ok = False
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
