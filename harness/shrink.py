"""Minimize a failing run; write it out as ``repro.toml`` and a pytest regression test.

A *case* is an explicit plan (one list of ops per worker), the trace that broke it (the
worker and the op of each grant) and its faults, each before a scheduling decision.
Shrinking is greedy delta debugging over cases: drop the faults (all, else one at a
time), drop whole workers, cut the tails of the streams, drop chunks of ops down to
single ones (ddmin), merge sessions, simplify contents, then cut the trace so that after
a prefix the workers run one after the other (the fewest context switches). A candidate
is kept when its controlled replay still fails with the same violation kind; what is
kept is what that replay really did (its recorded trace and faults), so the case always
matches its trace.

A free-mode run has no trace: shrinking it first looks for a controlled schedule of the
same scenario (its faults moved onto decisions) that fails the same way.
"""

from __future__ import annotations

import itertools
import math
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import orjson

from harness.errors import InputError
from harness.plan import stream_dicts
from harness.replay import load_run
from harness.runner.control.trace import read_trace
from harness.scenario import Scenario, _toml_value, control_spec, session_names
from harness.stores.registry import resolve

__all__ = ["Case", "ShrinkResult", "shrink"]

OpTable = dict[str, Any]  # one op of a [control] streams entry, as in repro.toml
Step = tuple[int, int, str]  # (worker slot, op index, point label) of one grant
Say = Callable[[str], None]
REFERENCE = {"sqlite": "sqlite", "redis": "redis", "postgres": "postgres"}
#: Points of a connection's set-up: they follow the connection to the worker's next op
#: when the op that first opened it is removed.
_SETUP = frozenset({"HELLO", "CLIENT", "AUTH"})
_OP_KEYS = ("f", "session", "role", "content", "choice")


@dataclass(frozen=True, slots=True)
class Case:
    """Explicit op streams, the trace to follow ((worker, op, label) per grant) and the
    faults, as ``[control] faults`` tables (kind, at_step, worker, for_steps)."""

    streams: tuple[tuple[OpTable, ...], ...]
    trace: tuple[Step, ...]
    faults: tuple[dict[str, Any], ...] = ()

    @property
    def ops(self) -> int:
        return sum(len(s) for s in self.streams)

    @property
    def sessions(self) -> int:
        return len({o["session"] for s in self.streams for o in s}) or 1

    @property
    def switches(self) -> int:
        ws = [w for w, _, _ in self.trace]
        return sum(1 for a, b in itertools.pairwise(ws) if a != b)

    def flat(self) -> list[tuple[int, int]]:
        return [(w, i) for w, s in enumerate(self.streams) for i in range(len(s))]

    def without(self, removed: set[tuple[int, int]]) -> Case:
        """The case minus some ops; workers left with none go, slots are renumbered. A
        fault keeps its place among the grants that stay; one aimed at a worker that
        goes goes too."""
        keep = [w for w, s in enumerate(self.streams)
                if any((w, i) not in removed for i in range(len(s)))]
        wmap = {w: n for n, w in enumerate(keep)}
        opmap: dict[tuple[int, int], int] = {}
        for w in keep:
            kept = [i for i in range(len(self.streams[w])) if (w, i) not in removed]
            opmap.update({(w, i): j for j, i in enumerate(kept)})
        streams = tuple(tuple(self.streams[w][i] for i in range(len(self.streams[w]))
                              if (w, i) in opmap) for w in keep)
        first = {w: min((o for v, o, _ in self.trace if v == w and o >= 0), default=-1)
                 for w in keep}
        trace: list[Step] = []
        position: list[int] = []  # position[k]: how many of the first k grants stay
        for w, o, label in self.trace:
            position.append(len(trace))
            if w not in wmap:
                continue
            if o < 0 or (w, o) in opmap:
                trace.append((wmap[w], -1 if o < 0 else opmap[(w, o)], label))
            elif o == first[w] and label in _SETUP:  # the connection opens in the next op
                trace.append((wmap[w], 0, label))
        faults = []
        for f in self.faults:
            if "worker" in f and f["worker"] not in wmap:
                continue
            k = f["at_step"]
            step = position[k] if k < len(position) else len(trace) + k - len(self.trace)
            faults.append({**f, "at_step": step,
                           **({"worker": wmap[f["worker"]]} if "worker" in f else {})})
        return Case(streams, tuple(trace), tuple(faults))

    def compact(self) -> Case:
        """Sessions renamed s0, s1, ... in order of their names."""
        used = sorted({o["session"] for s in self.streams for o in s},
                      key=lambda n: (len(n), n))
        names = dict(zip(used, session_names(len(used)), strict=True))
        return replace(self, streams=tuple(tuple({**o, "session": names[o["session"]]}
                                                 for o in s) for s in self.streams))

    def merged(self, a: str, b: str) -> Case:
        """Session ``a`` becomes session ``b``."""
        return replace(self, streams=tuple(
            tuple({**o, "session": b} if o["session"] == a else o for o in s)
            for s in self.streams))

    def simplified(self) -> Case:
        """Short, still unique contents; every role ``user``."""
        streams = tuple(
            tuple({**o, "role": "user", "content": f"w{w}.{i}|"} if o["f"] == "append" else o
                  for i, o in enumerate(s))
            for w, s in enumerate(self.streams))
        return replace(self, streams=streams)


@dataclass(frozen=True, slots=True)
class ShrinkResult:
    kind: str
    case: Case
    original: Case
    repro: Path
    test: Path
    runs: int
    seconds: float
    reference: str | None  # the reference store the repro was also run on
    reference_passes: bool | None


class _Tester:
    """Runs cases as controlled replays; says whether each still fails with ``kind``."""

    def __init__(self, base: Scenario, seed: int, kind: str, work: Path, redis_url: str,
                 max_runs: int, deadline: float, say: Say, pg_url: str = "") -> None:
        self.base, self.seed, self.kind, self.work = base, seed, kind, work
        self.pg_url = pg_url
        self.redis_url, self.max_runs, self.deadline, self.say = redis_url, max_runs, deadline, say
        self.runs = 0
        self.kept: Path | None = None

    @property
    def exhausted(self) -> bool:
        return self.runs >= self.max_runs or time.monotonic() >= self.deadline

    def scenario(self, case: Case, with_trace: bool = True) -> Scenario:
        spec = control_spec(self.base)
        control: dict[str, Any] = {
            "enabled": True, "strategy": spec.strategy, "block_ms": spec.block_ms,
            "busy_retries": spec.busy_retries,
            "streams": [list(s) for s in case.streams]}
        if with_trace:
            control["trace"] = [w for w, _, _ in case.trace]
        if case.faults:
            control["faults"] = [dict(f) for f in case.faults]
        return self.base.with_overrides(
            seed=self.seed, workers=len(case.streams), ops=max(len(s) for s in case.streams),
            sessions=case.sessions, faults=(), control=control)

    def __call__(self, case: Case) -> Case | None:
        """The case as replayed (its recorded trace) if it still fails, else None."""
        if self.exhausted or not case.streams:
            return None
        from harness.runner.coordinator import run

        case = case.compact()
        self.runs += 1
        res = run(self.scenario(case), reports=self.work, redis_url=self.redis_url,
                  pg_url=self.pg_url)
        if self.kind not in res.result.counts():
            shutil.rmtree(res.run_dir, ignore_errors=True)
            return None
        t = read_trace(res.run_dir)
        if self.kept is not None:
            shutil.rmtree(self.kept, ignore_errors=True)
        self.kept = res.run_dir
        out = Case(case.streams, tuple(zip(t.grants, t.ops, t.points, strict=True)),
                   tuple(t.fault_plan()))
        self.say(f"  run {self.runs}: {len(out.streams)} workers, {out.ops} ops, "
                 f"{out.sessions} sessions, {len(out.trace)} steps, {out.switches} switches, "
                 f"{len(out.faults)} faults")
        return out


def _load_case(run_dir: Path) -> Case:
    streams = stream_dicts((run_dir / "plan.json").read_bytes())  # drawn again from the seed
    t = read_trace(run_dir)
    return Case(tuple(tuple(s) for s in streams),
                tuple(zip(t.grants, t.ops, t.points, strict=True)), tuple(t.fault_plan()))


def _kind(run_dir: Path, store: str, asked: str | None) -> str:
    try:
        counts = orjson.loads((run_dir / "report.json").read_bytes())["check"]["counts"]
        if not isinstance(counts, dict):
            raise TypeError(f"counts is a {type(counts).__name__}")
    except FileNotFoundError:
        raise InputError(f"{run_dir}: no report.json (the run did not finish)") from None
    except (OSError, orjson.JSONDecodeError, KeyError, TypeError) as err:
        raise InputError(f"{run_dir}/report.json: not a report ({err})") from None
    if asked:
        if asked not in counts:
            raise InputError(f"{run_dir}: no {asked!r} violation in this run "
                             f"(it has: {', '.join(counts) or 'none'})")
        return asked
    if not counts:
        raise InputError(f"{run_dir}: this run found no violation; nothing to shrink")
    expected = resolve(store).expected
    if expected is not None and expected in counts:
        return expected
    return str(max(counts, key=lambda k: counts[k]))


def _passes(case: Case, test: _Tester) -> Iterator[Callable[[Case], Case]]:
    """The shrinking passes, cheapest and biggest cuts first."""

    def faults(c: Case) -> Case:
        if not c.faults:
            return c
        got = test(replace(c, faults=()))
        if got is not None:
            return got
        for i in reversed(range(len(c.faults))):
            if len(c.faults) > 1 and i < len(c.faults):
                c = test(replace(c, faults=c.faults[:i] + c.faults[i + 1 :])) or c
        return c

    def workers(c: Case) -> Case:
        for w in reversed(range(len(c.streams))):
            if len(c.streams) > 1 and w < len(c.streams):
                c = test(c.without({(w, i) for i in range(len(c.streams[w]))})) or c
        return c

    def tails(c: Case) -> Case:
        for frac in (1 / 16, 1 / 8, 1 / 4, 1 / 2, 3 / 4):
            cut = {(w, i) for w, s in enumerate(c.streams)
                   for i in range(math.ceil(len(s) * frac), len(s))}
            if cut and (got := test(c.without(cut))) is not None:
                return got
        return c

    def ops(c: Case) -> Case:
        size = max(1, c.ops // 2)
        while size >= 1 and not test.exhausted:
            i = 0
            while i < c.ops and c.ops > 1:
                got = test(c.without(set(c.flat()[i : i + size])))
                if got is not None:
                    c = got
                else:
                    i += size
            size //= 2
        return c

    def sessions(c: Case) -> Case:
        for name in sorted({o["session"] for s in c.streams for o in s}, reverse=True):
            if name != "s0":
                c = test(c.merged(name, "s0")) or c
        return c

    def contents(c: Case) -> Case:
        simple = c.simplified()
        return (test(simple) or c) if simple != c else c

    def trace(c: Case) -> Case:
        for p in (len(c.trace) // 8, len(c.trace) // 4, len(c.trace) // 2):
            if p > 0 and (got := test(replace(c, trace=c.trace[:p]))) is not None:
                return got
        return c

    yield from (faults, workers, tails, ops, sessions, contents, trace)


def shrink(run_dir: Path, *, kind: str | None = None, out: Path | None = None,
           max_runs: int = 300, budget_s: float = 300.0, redis_url: str = "",
           say: Say = lambda _msg: None, pg_url: str = "") -> ShrinkResult:
    """Minimize the failing run ``run_dir`` (see the module docstring); write the repro."""
    run_dir = Path(run_dir)
    started = time.monotonic()
    base, seed = load_run(run_dir)
    info = resolve(base.store)
    kind = _kind(run_dir, base.store, kind)
    out = Path(out) if out is not None else run_dir
    try:
        out.mkdir(parents=True, exist_ok=True)
        work = Path(tempfile.mkdtemp(prefix="shrink-", dir=out))
    except OSError as err:
        raise InputError(f"cannot write to {out}: {err.strerror or err}") from None
    # Each candidate run starts its own redis-server (unless redis_url says otherwise): a
    # shared one keeps Lua scripts cached from run to run, which changes the commands a
    # client sends and so the trace a candidate follows.
    try:
        test = _Tester(base, seed, kind, work, redis_url, max_runs, started + budget_s, say,
                       pg_url)
        case = _start(run_dir, base, seed, test, say)
        original = case
        while not test.exhausted:
            before = case
            for step in _passes(case, test):
                case = step(case)
            if case == before:
                break
        say(f"smallest: {len(case.streams)} workers, {case.ops} ops, {case.sessions} "
            f"sessions, {len(case.trace)} steps, {len(case.faults)} faults ({test.runs} runs)")
        repro, test_file = _write(out, run_dir, test.scenario(case), kind, case, original)
        ref = REFERENCE.get(info.backend or "")
        passes = _reference_passes(repro, ref, kind, work, redis_url, pg_url) if ref else None
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return ShrinkResult(kind, case, original, repro, test_file, test.runs,
                        time.monotonic() - started, ref, passes)


def _start(run_dir: Path, base: Scenario, seed: int, test: _Tester, say: Say) -> Case:
    """The failing case to shrink: the run's own, or a controlled schedule of a free run."""
    if (run_dir / "trace.json").is_file():
        case = _load_case(run_dir)
        got = test(case)
        if got is not None:
            return got
        raise InputError(f"{run_dir}: its trace no longer reproduces the violation")
    say("free-mode run: looking for a controlled schedule that fails the same way")
    from harness.runner.coordinator import run

    for n in range(20):
        strategy = ("random", "pct")[n % 2]
        test.runs += 1
        sc = base.with_overrides(seed=seed + n // 2,
                                 control={"enabled": True, "strategy": strategy})
        res = run(sc, reports=test.work, redis_url=test.redis_url, pg_url=test.pg_url)
        if test.kind in res.result.counts():
            test.seed, test.base = res.seed, sc
            return _load_case(res.run_dir)
    raise InputError(f"{run_dir}: no controlled schedule of this scenario shows {test.kind!r} "
                     "(tried 20)")


def _reference_passes(repro: Path, store: str, kind: str, work: Path, url: str,
                      pg_url: str = "") -> bool:
    from harness.runner.coordinator import run
    from harness.scenario import load_scenario

    res = run(load_scenario(repro).with_overrides(store=store), reports=work, redis_url=url,
              pg_url=pg_url)
    return kind not in res.result.counts()


def _write(out: Path, run_dir: Path, sc: Scenario, kind: str, case: Case,
           original: Case) -> tuple[Path, Path]:
    head = (f"# Written by `harness shrink` from {run_dir}.\n"
            f"# The smallest run found that still shows {kind!r} on {sc.store}: "
            f"{len(case.streams)} workers, {case.ops} ops, {case.sessions} sessions, "
            f"{len(case.trace)} scheduling steps, {len(case.faults)} faults\n"
            f"# (from {len(original.streams)} workers, {original.ops} ops, "
            f"{original.sessions} sessions, {len(original.trace)} steps, "
            f"{len(original.faults)} faults).\n"
            f"# Run it: harness run repro.toml    As a test: pytest "
            f"test_repro_{kind.replace('-', '_')}.py\n")
    body = replace(sc, name=f"repro-{kind}", description=f"minimal {kind} on {sc.store}",
                   control={}, source="").to_toml()
    c = sc.control
    lines = ["", "[control]"] + [f"{k} = {_toml_value(c[k])}" for k in
                                 ("enabled", "strategy", "block_ms", "busy_retries")]
    lines.append("# the grants to follow, one worker slot per scheduling step; the points:")
    for k in range(0, len(case.trace), 8):
        lines.append("#   " + ", ".join(f"w{w} {label}" for w, _, label in case.trace[k : k + 8]))
    lines.append(f"trace = {_toml_value(c['trace'])}")
    if case.faults:
        lines.append("# the faults, each before a scheduling decision (at_step: that many grants "
                     "done)")
        lines.append("faults = [")
        lines += [f"  {_toml_value(f)}," for f in c["faults"]]
        lines.append("]")
    lines.append("# the ops of each worker, in order")
    lines.append("streams = [")
    for stream in c["streams"]:
        lines.append("  [")
        lines += [f"    {_toml_value({k: o[k] for k in _OP_KEYS if k in o})}," for o in stream]
        lines.append("  ],")
    lines.append("]")
    repro = out / "repro.toml"
    repro.write_text(head + body + "\n".join(lines) + "\n", encoding="utf-8")
    name = kind.replace("-", "_")
    test = out / f"test_repro_{name}.py"
    test.write_text(_TEST.format(run_dir=run_dir, kind=kind, name=name, store=sc.store),
                    encoding="utf-8")
    return repro, test


_TEST = '''"""Regression test written by `harness shrink` from {run_dir}.

It replays repro.toml (the smallest scenario found and the interleaving that broke it)
through the harness: real worker processes, a real store. It fails while {store}
still shows {kind!r}. To run it against another store (the fixed one, the reference):
    HARNESS_REPRO_STORE=<store spec> pytest test_repro_{name}.py
"""

import os
from pathlib import Path

from harness.replay import run_repro

REPRO = Path(__file__).with_name("repro.toml")
KIND = "{kind}"


def test_repro_{name}(tmp_path: Path) -> None:
    store = os.environ.get("HARNESS_REPRO_STORE") or None
    res = run_repro(REPRO, tmp_path / "reports", store=store)
    found = [v for v in res.result.violations if v.kind == KIND]
    assert not found, f"{{KIND}} on {{res.store.spec}}: {{found[0].message}} (run: {{res.run_dir}})"
'''
