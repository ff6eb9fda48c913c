"""The checker's public face: what ``harness.checker`` exports and how it is called."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import harness.checker as checker
from harness.checker import KINDS, CheckResult, Violation, check, check_path
from harness.checker.exact import check_exact
from harness.checker.fast import check_fast
from harness.errors import HistoryError
from harness.history import write_history
from tests.checker.builder import H


def test_all_is_honest() -> None:
    assert set(checker.__all__) == {"KINDS", "CheckResult", "Violation", "check", "check_path"}
    for name in checker.__all__:
        assert hasattr(checker, name)


def test_init_only_reexports() -> None:
    tree = ast.parse(Path(checker.__file__).read_text())
    for node in tree.body:
        assert isinstance(node, ast.ImportFrom | ast.Assign | ast.Expr), ast.dump(node)


def test_empty_history_is_valid() -> None:
    res = check([])
    assert isinstance(res, CheckResult) and res.valid is True and res.violations == ()
    assert res.stats["ops"] == 0


def test_violation_contract() -> None:
    h = H()
    h.append(0, "s", "a")
    h.read(1, "s", [])
    (v,) = check(h.events).violations
    assert isinstance(v, Violation) and v.kind in KINDS and v.session == "s"
    assert v.to_dict()["events"][0]["index"] == 0


def test_check_path_reads_a_file_and_a_run_dir(tmp_path: Path) -> None:
    h = H()
    h.append(0, "s", "a")
    h.read(1, "s", [])
    write_history(tmp_path / "history.jsonl", h.events)
    assert check_path(tmp_path / "history.jsonl").counts() == {"lost-turn": 1}
    assert check_path(tmp_path).counts() == {"lost-turn": 1}
    with pytest.raises(HistoryError):
        check_path(tmp_path / "missing")


def test_exact_budget_exhausted_is_unknown_never_a_pass() -> None:
    h = H()
    h.append(0, "s", "a")
    h.read(1, "s", ["a"])
    assert check_exact(h.events, budget_s=0).valid is None
    # no rollback: decided without search, whatever the budget
    res = check(h.events, exact=True, budget_s=0)
    assert res.valid is True and res.stats["exact"]["sessions_proven_without_search"] == 1
    h.snapshot(0, "s", "x")
    h.rollback(1, "s", "x")
    res = check(h.events, exact=True, budget_s=0)  # a rollback: only a search decides it
    assert res.valid is None and res.stats["exact"]["sessions_unknown"] == ["s"]
    res = check(h.events, budget_s=0)  # the default check: a pass, named as not proven
    assert res.valid is True and res.stats["exact"]["sessions_unknown"] == ["s"]
    # no search ran: nothing placed, the whole session is the window still ambiguous
    assert res.proof()["sessions_unknown_detail"] == [  # type: ignore[index]
        {"session": "s", "ops": 4, "ops_placed": 0, "share_placed": 0.0,
         "window": {"from_event": 0, "to_event": len(h.events) - 1}}]
    h.read(1, "s", [])
    assert check(h.events, exact=True, budget_s=0).valid is False


def test_an_undecided_session_says_how_far_the_searches_got(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every search out of steps on a 300-step session of 6 processes: the ops placed are
    some but not all, and the window still ambiguous starts at the invocation of the op
    the deepest search could not place and ends at the session's last event."""
    import harness.checker.exact as exact
    from tests.checker.simulate import Params, simulate

    for name in ("QUICK_STEPS", "JIT_STEPS", "EAGER_STEPS"):
        monkeypatch.setattr(exact, name, 20)
    events = simulate(15, Params(procs=6, sessions=1, steps=300))
    res = check_fast(events, prover=exact.Prover(total_s=10, session_steps=20))
    assert res.valid is True  # the fast rules' verdict, named as not proven
    proof = res.proof()
    assert proof is not None and not proof["proven"] and proof["sessions_unknown"] == ["s0"]
    [d] = proof["sessions_unknown_detail"]
    assert 0 < d["ops_placed"] < d["ops"] and d["share_placed"] == round(d["ops_placed"] / d["ops"], 3)
    invoked = {e.index for e in events if e.type == "invoke"}
    assert d["window"]["from_event"] in invoked
    assert d["window"]["to_event"] == max(e.index for e in events if e.session == "s0")
    assert d["window"]["from_event"] > min(e.index for e in events if e.session == "s0")
    # and the console says it
    from rich.console import Console

    from harness.report.console import print_check

    con = Console(record=True, width=400)
    print_check(res, con)
    w = d["window"]
    text = con.export_text()
    assert (f"(s0: {d['ops_placed']} of {d['ops']} ops placed, events {w['from_event']}-"
            f"{w['to_event']} undecided)") in text
    assert "`harness check RUN --exact --budget S` gives them S seconds" in text
    from harness.report.html import _proof as html_proof  # the report page's verdict line

    assert f"{d['ops_placed']} of {d['ops']} ops placed" in html_proof(res.to_dict())


def test_the_default_check_finds_what_the_fast_rules_cannot() -> None:
    """b's append began after a's was acknowledged, so a state holding b holds a; a read
    that began before a's acknowledgment but shows b alone proves a lost turn. The fast
    rules (sound, not complete) let it pass; the exact decision, which the default check
    runs on every session the fast rules pass, names the two appends and the read."""
    h = H()
    h.inv(2, "read", "s")
    h.append(0, "s", "a")
    h.append(1, "s", "b")
    h.ok(2, ["b"])
    assert check_fast(h.events).valid is True
    for res in (check(h.events), check(h.events, exact=True)):
        assert res.valid is False
        (v,) = res.violations
        assert v.kind == "lost-turn"
        assert v.message.startswith("Turn 'a' was acknowledged (process 0 at event 2) before "
                                    "the append of turn 'b' was invoked"), v.message


def test_stats_count_suppressed_violations() -> None:
    h = H()
    for i in range(300):
        h.append(0, "s", f"t{i}")
        h.read(1, "s", [])
    res = check(h.events)
    assert res.stats["violations_total"] == 300
    assert len(res.violations) == 100  # capped per kind
    # every count shown is the true total; only the evidence is capped, and says so
    assert res.counts() == {"lost-turn": 300} and res.shown() == {"lost-turn": 100}
    d = res.to_dict()
    assert d["counts"] == {"lost-turn": 300} and d["violations_total"] == 300
    assert d["violations_shown"] == 100 and d["truncated"] is True


def test_report_counts_are_true_totals_and_evidence_says_it_is_capped() -> None:
    from io import StringIO

    from rich.console import Console

    from harness.report import check_dict, print_check

    h = H()
    for i in range(250):
        h.append(0, "s", f"t{i}")
        h.read(1, "s", [])
        h.append(0, "s", f"u{i}")
        h.read(1, "s", [f"u{i}", f"u{i}"])  # a duplicate too, and u_i lost from later reads
    res = check(h.events)
    counts = res.counts()
    assert counts["lost-turn"] > 100 and counts["duplicate-turn"] == 250
    d = check_dict(res)
    assert d["counts"] == counts and d["violations_total"] == sum(counts.values())
    assert d["truncated"] is True and d["violations_shown"] == len(d["violations"]) <= 200
    assert {v["kind"] for v in d["violations"]} == set(counts)  # every kind keeps evidence
    out = StringIO()
    print_check(res, Console(file=out, width=200, highlight=False))
    text = out.getvalue()
    assert f"FAIL: {sum(counts.values())} violations" in text
    row = next(line for line in text.splitlines() if line.lstrip().startswith("duplicate-turn"))
    assert row.replace("│", " ").split()[1:3] == ["250", "100"], row  # true count, then how many carry evidence
    assert "true totals" in text


def test_exact_mode_does_not_recount_a_session_whose_evidence_was_capped() -> None:
    h = H()
    for s, n in (("s1", 150), ("s2", 5)):  # s2's lost turns come past the per-kind cap
        for i in range(n):
            h.append(0, s, f"{s}-t{i}")
            h.read(1, s, [])
    fast = check(h.events)
    assert fast.counts() == {"lost-turn": 155}
    assert {v.session for v in fast.violations} == {"s1"}
    assert check(h.events, exact=True, budget_s=10).counts() == {"lost-turn": 155}


def test_the_frontier_and_just_in_time_searches_run_side_by_side(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """After the lazy walk (skipped here), the four searches take turns: a session the
    frontier search (in either order of trying) and the eager one cannot decide within
    their shares is decided by the just-in-time one, and by the frontier search with the
    others stopped, or by the eager one; with none able to, the session stays undecided.
    Each proof found replays through the eager model."""
    import time

    import harness.checker.exact as exact
    from harness.checker.evidence import Evidence
    from harness.checker.lazy import certify
    from harness.checker.linearize import Outcome
    from harness.checker.ops import group_by_session
    from tests.checker.simulate import Params, simulate

    # 94 ops: the frontier search decides it in 362 steps, the just-in-time one in 69,623
    events = simulate(3, Params(procs=6, sessions=1, steps=300))
    [so] = group_by_session(events)[0].values()
    ops = exact.session_ops(so, Evidence())
    monkeypatch.setattr(exact, "_quick_walk", lambda ops, deadline: Outcome(None))

    def searches(frontier_steps: int) -> list[Outcome]:
        return exact._searches(ops, time.monotonic() + 60, frontier_steps, None)

    eager_steps = exact.EAGER_STEPS
    monkeypatch.setattr(exact, "EAGER_STEPS", 1)
    by_jit = searches(1)  # the frontier search stops at once in both orders, eager too
    assert [t.ok for t in by_jit] == [None, None, None, None, True]
    by_frontier = searches(exact.SESSION_STEPS)
    monkeypatch.setattr(exact, "JIT_STEPS", 1)
    assert [t.ok for t in searches(exact.SESSION_STEPS)] == [None, True]  # no need of the others
    # frontier, jit, frontier trying early ops first, eager: undecided
    assert [t.ok for t in searches(1)] == [None, None, None, None, None]
    monkeypatch.setattr(exact, "EAGER_STEPS", eager_steps)
    by_eager = searches(1)  # all but the eager search stop at once
    assert [t.ok for t in by_eager] == [None, None, None, None, True]
    assert exact.replays([ops[k] for k in by_eager[-1].order])
    for out in (by_jit[-1], by_frontier[-1]):
        assert exact.replays(certify([ops[k] for k in out.order], out.path))


def test_the_frontier_search_proves_a_session_before_the_fast_rules_and_goes_on_after(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Where the lazy walk does not prove a session (skipped here), the frontier search's
    first steps (FRONTIER_FIRST_PER_OP per op) do, before the fast rules run; a session
    they do not decide is searched on by ``judge`` from where they stopped, not afresh:
    the same steps in all as one search without a pause."""
    import time
    from inspect import GEN_CLOSED, GEN_SUSPENDED, getgeneratorstate

    import harness.checker.exact as exact
    from harness.checker.evidence import Evidence
    from harness.checker.frontier import search
    from harness.checker.linearize import Outcome
    from harness.checker.ops import group_by_session
    from tests.checker.simulate import Params, simulate

    monkeypatch.setattr(exact, "_quick_walk", lambda ops, deadline: Outcome(None))
    monkeypatch.setattr(exact, "FRONTIER_FIRST_PER_OP", 6)
    first = exact.FRONTIER_FIRST_PER_OP
    # 94 ops, 362 steps; then 187 ops, 4,439 steps (the first try: 6 x 187 + 256)
    for seed, steps, proven_first in ((3, 300, True), (0, 600, False)):
        [so] = group_by_session(simulate(seed, Params(procs=6, sessions=1, steps=steps)))[0].values()
        ops = exact.session_ops(so, Evidence())
        alone = search(ops, time.monotonic() + 60)
        assert alone.ok is True
        assert (alone.explored <= first * len(ops)) is proven_first
        prover = exact.Prover()
        assert prover.prove_first(so) is proven_first
        if proven_first:
            assert (prover.tally.proven, prover.tally.by_chain) == (1, 0)
            assert prover.tally.explored == alone.explored
            continue
        assert prover._tried is not None
        run = prover._tried[1].frontier
        assert run is not None and getgeneratorstate(run) == GEN_SUSPENDED  # paused, not done
        assert prover.judge(so, Evidence()) is True
        assert getgeneratorstate(run) == GEN_CLOSED  # that very run went on to the proof
        assert prover.tally.explored == alone.explored


def test_the_searches_stop_together_past_their_memory(monkeypatch: pytest.MonkeyPatch) -> None:
    """Past SEARCH_MEMORY_MB added to the process's peak, the four searches stop at once
    and the session is undecided; within it the same session is proven."""
    import time

    import harness.checker.exact as exact
    from harness.checker.evidence import Evidence
    from harness.checker.linearize import Outcome
    from harness.checker.ops import group_by_session
    from tests.checker.simulate import Params, simulate

    # 187 ops: the frontier search needs 22,213 steps, more than one turn's time
    [so] = group_by_session(simulate(1, Params(procs=6, sessions=1, steps=600)))[0].values()
    ops = exact.session_ops(so, Evidence())
    monkeypatch.setattr(exact, "SEARCH_MEMORY_MB", -1e9)  # any peak is past it
    tries = exact._searches(ops, time.monotonic() + 60, None, Outcome(None))
    assert [t.ok for t in tries] == [None] * 5  # the walk's, then the four, stopped
    monkeypatch.setattr(exact, "SEARCH_MEMORY_MB", 400)
    assert exact._searches(ops, time.monotonic() + 60, None, Outcome(None))[-1].ok is True
