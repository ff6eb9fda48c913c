"""The contract suite: what every memory store must do, in three layers, against any spec.

``harness contract SPEC`` runs it and prints a table by layer and case; :func:`run_contract`
is the same from Python. Each case states in one line the bug it catches.

- **sequential**: a hypothesis state machine drives the store against the model (appends,
  reads, snapshots, rollbacks, listings, over two sessions) and shrinks a failure to the
  smallest sequence of calls;
- **edge**: odd content (unicode, emoji, NUL, quotes, newlines; 1 MB; empty), session
  isolation, many sessions, a rollback to an unknown id, a snapshot of an empty session,
  and a store reopened by another process;
- **concurrency**: short harness runs across real processes, free and controlled, that
  must be clean.

The store runs against a target of its own (a fresh SQLite file, or a redis-server
started for the suite), in a temporary directory removed at the end.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import traceback
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["CASES", "Case", "Outcome", "run_contract"]

SMOKE = Path(__file__).resolve().parents[1] / "scenarios" / "smoke.toml"


@dataclass(frozen=True, slots=True)
class Outcome:
    """One case's result: ``ok``, and when not, what went wrong in one paragraph."""

    layer: str
    name: str
    catches: str
    ok: bool
    detail: str = ""


@dataclass(slots=True)
class _Ctx:
    """What a case gets: the store's spec and info, its target's URL, a scratch directory."""

    spec: str
    info: Any
    url: str
    tmp: Path

    def store(self) -> Any:
        from harness.stores import open_store

        return open_store(self.info, self.url, "contract")

    def session(self) -> str:
        """A session name no other case uses."""
        return f"contract-{uuid.uuid4().hex[:12]}"


@dataclass(frozen=True, slots=True)
class Case:
    layer: str
    name: str
    catches: str
    check: Callable[[_Ctx], None]


def _roundtrip(contents: list[str]) -> Callable[[_Ctx], None]:
    def check(ctx: _Ctx) -> None:
        st, s = ctx.store(), ctx.session()
        try:
            for i, c in enumerate(contents):
                st.append(s, "user" if i % 2 else "assistant", c)
            got = [tuple(t) for t in st.history(s)]
            want = [("user" if i % 2 else "assistant", c) for i, c in enumerate(contents)]
            assert got == want, f"wrote {_short(want)}, read back {_short(got)}"
        finally:
            st.close()
    return check


def _isolation(ctx: _Ctx) -> None:
    st = ctx.store()
    try:
        a, b = ctx.session(), ctx.session()
        st.append(a, "user", "only in a")
        assert list(st.history(b)) == [], "a turn of one session shows in another"
        st.snapshot(a)
        assert list(st.snapshots(b)) == [], "a snapshot of one session shows in another"
    finally:
        st.close()


def _many_sessions(ctx: _Ctx) -> None:
    st = ctx.store()
    try:
        names = [ctx.session() for _ in range(50)]
        for i, s in enumerate(names):
            for k in range(3):
                st.append(s, "user", f"{i}.{k}")
        for i, s in enumerate(names):
            got = [c for _, c in st.history(s)]
            assert got == [f"{i}.{k}" for k in range(3)], f"session {i} holds {_short(got)}"
    finally:
        st.close()


def _unknown_rollback(ctx: _Ctx) -> None:
    st, s = ctx.store(), ctx.session()
    try:
        st.append(s, "user", "kept")
        try:
            st.rollback(s, "no-such-snapshot")
        except LookupError:
            pass
        else:
            raise AssertionError("a rollback to an unknown id returned instead of raising LookupError")
        assert [c for _, c in st.history(s)] == ["kept"], "a failed rollback changed the turns"
    finally:
        st.close()


def _empty_snapshot(ctx: _Ctx) -> None:
    st, s = ctx.store(), ctx.session()
    try:
        sid = st.snapshot(s)
        st.append(s, "user", "after")
        st.rollback(s, sid)
        assert list(st.history(s)) == [], "a rollback to an empty session's snapshot kept turns"
        assert sid in st.snapshots(s), "the snapshot vanished after the rollback to it"
    finally:
        st.close()


def _reopened(ctx: _Ctx) -> None:
    """Process A writes, snapshots and exits; this process reopens and rolls back."""
    s = ctx.session()
    code = (
        "import sys\n"
        "from harness.stores import open_store, resolve\n"
        f"st = open_store(resolve({ctx.spec!r}), {ctx.url!r}, 'contract')\n"
        f"st.append({s!r}, 'user', 'one'); sid = st.snapshot({s!r})\n"
        f"st.append({s!r}, 'assistant', 'two'); print(sid); st.close()\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=60, check=False)
    assert out.returncode == 0, f"the writing process failed: {out.stderr.strip()[-300:]}"
    sid = out.stdout.strip().splitlines()[-1]
    st = ctx.store()
    try:
        got = [c for _, c in st.history(s)]
        assert got == ["one", "two"], f"another process wrote ['one', 'two']; this one reads {got}"
        assert sid in st.snapshots(s), "another process's snapshot is not listed"
        st.rollback(s, sid)
        got = [c for _, c in st.history(s)]
        assert got == ["one"], f"a rollback to another process's snapshot gave {got}"
    finally:
        st.close()


def _sequential(ctx: _Ctx) -> None:
    from hypothesis import HealthCheck, settings
    from hypothesis import strategies as st
    from hypothesis.stateful import Bundle, RuleBasedStateMachine, rule, run_state_machine_as_test

    class Model(RuleBasedStateMachine):
        snaps = Bundle("snaps")

        def __init__(self) -> None:
            super().__init__()
            self.store = ctx.store()
            self.names = [ctx.session(), ctx.session()]
            self.turns: dict[str, list[tuple[str, str]]] = {n: [] for n in self.names}
            # (session, id) -> the turns: ids are new within their session
            self.saved: dict[tuple[str, str], list[tuple[str, str]]] = {}

        @rule(k=st.integers(0, 1), role=st.sampled_from(["user", "assistant", "tool"]),
              content=st.text(max_size=20))
        def append(self, k: int, role: str, content: str) -> None:
            self.store.append(self.names[k], role, content)
            self.turns[self.names[k]].append((role, content))

        @rule(k=st.integers(0, 1))
        def read(self, k: int) -> None:
            got = [tuple(t) for t in self.store.history(self.names[k])]
            assert got == self.turns[self.names[k]], f"read {got}, model {self.turns[self.names[k]]}"

        @rule(target=snaps, k=st.integers(0, 1))
        def snapshot(self, k: int) -> tuple[str, str]:
            key = (self.names[k], str(self.store.snapshot(self.names[k])))
            assert key not in self.saved, f"snapshot id {key[1]!r} returned twice"
            self.saved[key] = list(self.turns[self.names[k]])
            return key

        @rule(key=snaps)
        def rollback(self, key: tuple[str, str]) -> None:
            self.store.rollback(*key)
            self.turns[key[0]] = list(self.saved[key])

        @rule(k=st.integers(0, 1))
        def listing(self, k: int) -> None:
            want = {sid for s, sid in self.saved if s == self.names[k]}
            got = set(self.store.snapshots(self.names[k]))
            assert got == want, f"listed {sorted(got)}, model {sorted(want)}"

        def teardown(self) -> None:
            self.store.close()

    try:
        run_state_machine_as_test(Model, settings=settings(  # type: ignore[no-untyped-call]
            max_examples=25, stateful_step_count=25, deadline=None, database=None,
            suppress_health_check=list(HealthCheck)))
    except AssertionError:
        raise
    except Exception as err:  # several failures, or a store whose answers vary between runs
        raise AssertionError(_first_line(err)) from err


def _harness_run(controlled: bool) -> Callable[[_Ctx], None]:
    def check(ctx: _Ctx) -> None:
        from harness.runner.coordinator import run
        from harness.scenario import load_scenario

        sc = load_scenario(SMOKE).with_overrides(store=ctx.spec, ops=60, seed=1, workers=4)
        if controlled:
            sc = sc.with_overrides(control={**sc.control, "enabled": True, "strategy": "window"})
        url = ctx.url if ctx.info.backend == "redis" else ""
        res = run(sc, reports=ctx.tmp / "reports", redis_url=url)
        if res.verdict != "pass":
            v = res.result.violations[0] if res.result.violations else None
            why = f"{v.kind}: {v.message}" if v else "; ".join(res.problems) or res.verdict
            raise AssertionError(f"{res.verdict}: {why} (reproduce: {res.reproduce})")
    return check


CASES: tuple[Case, ...] = (
    Case("sequential", "state machine", "any call whose result the model does not give, "
         "shrunk to the shortest sequence", _sequential),
    Case("edge", "odd content", "content mangled on the way in or out (encoding, NUL, quotes)",
         _roundtrip(["héllo ✓", "😀👩‍👩‍👧", "nul\x00byte", "quote ' \" `", "line\nbreak\r\n",
                     "\\u0000 escaped", "{\"json\": [1, 2]}"])),
    Case("edge", "1 MB content", "a large turn truncated or refused", _roundtrip(["x" * (1 << 20)])),
    Case("edge", "empty content", "an empty turn dropped", _roundtrip(["", "after empty"])),
    Case("edge", "session isolation", "turns or snapshots leaking across sessions", _isolation),
    Case("edge", "many sessions", "sessions overwriting each other (a shared key)", _many_sessions),
    Case("edge", "unknown rollback", "a rollback to an unknown id that does not raise "
         "LookupError, or changes the turns", _unknown_rollback),
    Case("edge", "empty snapshot", "a snapshot of an empty session that restores nothing",
         _empty_snapshot),
    Case("edge", "reopened by another process", "state kept per process (a cache, a pickle) "
         "instead of in the store", _reopened),
    Case("concurrency", "free run", "races between worker processes (4 workers, 240 ops)",
         _harness_run(controlled=False)),
    Case("concurrency", "controlled run", "races inside multi-command ops (window strategy)",
         _harness_run(controlled=True)),
)


@contextmanager
def _target(info: Any, tmp: Path) -> Iterator[str]:
    from harness.backends import make_target

    with make_target(info.backend or "sqlite", tmp / "run", f"harness:contract:{uuid.uuid4().hex[:8]}") as t:
        yield t.url


def run_contract(spec: str, on_case: Callable[[Outcome], None] | None = None) -> list[Outcome]:
    """Run every case against a store spec; ``on_case`` is told each outcome as it comes."""
    from harness.stores import resolve

    info = resolve(spec)
    outcomes = []
    with tempfile.TemporaryDirectory(prefix="harness-contract-") as d, _target(info, Path(d)) as url:
        ctx = _Ctx(spec, info, url, Path(d))
        for case in CASES:
            try:
                case.check(ctx)
                out = Outcome(case.layer, case.name, case.catches, True)
            except Exception as err:  # a case's failure, whatever raised it, is its detail
                detail = str(err) or "".join(traceback.format_exception_only(err)).strip()
                out = Outcome(case.layer, case.name, case.catches, False, detail)
            outcomes.append(out)
            if on_case is not None:
                on_case(out)
    return outcomes


def _first_line(err: BaseException) -> str:
    """A hypothesis error in one line: the first assertion among several, else its own."""
    for sub in getattr(err, "exceptions", ()):
        if isinstance(sub, AssertionError) and str(sub):
            return str(sub)
    return str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__


def _short(x: Any, width: int = 120) -> str:
    s = repr(x)
    return s if len(s) <= width else s[: width - 1] + "…"
