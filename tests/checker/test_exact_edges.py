"""The exact decision (harness.checker.exact) on what mutation testing found untested: a
backward pair of reads naming a turn whose token holds spaces or is blank, a failed rollback
to a malformed id followed by other rollbacks, the peak memory's unit on each platform, and
the deadline's very instant (time left, as ``check_exact`` counts it) in ``judge``,
``Prover.prove_first`` and the searches run side by side.

Histories are built with tests.checker.builder.H (each event 10 ns after the one before);
clocks that move only when told stand in for ``time`` where an instant matters."""

from __future__ import annotations

import time
from types import SimpleNamespace

import pytest

import harness.checker.exact as exact
from harness.checker.evidence import Evidence
from harness.checker.exact import _SEP, Prover, Tally, check_exact, judge, session_ops
from harness.checker.linearize import Outcome
from harness.checker.model import ModelOp
from harness.checker.ops import SessionOps, group_by_session
from tests.checker.builder import H


def _one(h: H) -> SessionOps:
    (so,) = group_by_session(h.events)[0].values()
    return so


class _Clock:
    """A ``time`` module whose clock moves only when told."""

    def __init__(self, now: float) -> None:
        self.now = now

    def monotonic(self) -> float:
        return self.now


def _rolled_back() -> H:
    """a, a snapshot x of (a), b, a rollback to x, a read of (a): linearizable, and not
    decided by the chain (a rollback takes effect), so a search proves it."""
    h = H()
    h.append(0, "s", "a")
    h.snapshot(0, "s", "x")
    h.append(0, "s", "b")
    h.rollback(0, "s", "x")
    h.read(1, "s", ["a"])
    return h


# ---------------------------------------------------------------------------------------
# a backward pair of reads names the turn the later read lost, whole


def _lost_by_a_later_read(role: str, tok: str) -> H:
    """A read shows the turn (role, tok) and a read invoked after it returned shows
    nothing, while that turn's append is still pending. Two appends of one token with two
    roles, of unknown outcome, make the session ambiguous to the fast rules (they check
    little there), and the exact checker drops them (no read shows them): the chain's
    backward pair of reads is the explanation."""
    h = H()
    h.inv(0, "append", "s", ["user", "t"])
    h.info(0)
    h.inv(0, "append", "s", ["assistant", "t"])
    h.info(0)
    h.inv(1, "append", "s", [role, tok])  # pending across both reads
    h.inv(2, "read", "s")
    h.ok(2, [[role, tok]])
    h.inv(3, "read", "s")
    h.ok(3, [])
    h.ok(1)
    return h


def test_a_turn_lost_between_two_reads_is_named_by_its_whole_token_even_with_spaces_or_blank() -> None:
    """The token a pair of reads lost is everything after the role's separator: a token
    holding spaces is named whole, and a blank role and token (strings, as the format
    asks) are a turn like any other, not a crash."""
    res = check_exact(_lost_by_a_later_read("user", "hello world").events, budget_s=30.0)
    assert res.valid is False
    [v] = res.violations
    assert v.kind == "lost-turn" and v.session == "s"
    assert v.message.startswith("Turn 'hello world' was shown by the read by process 2 at event 6")
    res = check_exact(_lost_by_a_later_read("", "").events, budget_s=30.0)
    assert res.valid is False
    [v] = res.violations
    assert v.kind == "lost-turn"
    assert v.message.startswith("Turn '' was shown by the read by process 2 at event 6")
    assert exact._bare(f"user{_SEP}hello world") == "hello world"
    assert exact._bare(_SEP) == "" and exact._bare(f" {_SEP} ") == " "


# ---------------------------------------------------------------------------------------
# a failed rollback to a malformed id is skipped, not the rollbacks after it


def test_a_failed_rollback_to_a_malformed_id_leaves_the_rollbacks_after_it_in_the_model() -> None:
    """A rollback to an id that is not a string, which failed, took no effect and is left
    out; the acknowledged rollback after it still restores the snapshot, so the read of
    (a) after b's append is explained and the session is proven."""
    h = H()
    h.append(0, "s", "a")
    h.snapshot(0, "s", "x")
    h.append(0, "s", "b")
    h.inv(0, "rollback", "s", 7)
    h.fail(0, "TypeError: bad id")
    h.rollback(0, "s", "x")
    h.read(1, "s", ["a"])
    ops = session_ops(_one(h), Evidence())
    assert [(o.kind, o.arg) for o in ops if o.kind.startswith("rollback")] == [("rollback", "x")]
    res = check_exact(h.events, budget_s=30.0)
    assert res.valid is True and res.violations == ()
    assert res.stats["sessions_proven"] == 1 and res.stats["sessions_refuted"] == 0


# ---------------------------------------------------------------------------------------
# the peak memory, in MB on every platform


def test_the_peak_memory_is_read_in_bytes_on_macos_and_in_kilobytes_elsewhere(monkeypatch: pytest.MonkeyPatch) -> None:
    """``ru_maxrss`` is in bytes on macOS and in KB on Linux: 1 GB of peak is 1024 MB on
    both (the searches' memory limit, SEARCH_MEMORY_MB, is counted in MB)."""
    usage: dict[str, int] = {}
    fake = SimpleNamespace(RUSAGE_SELF=0, getrusage=lambda who: SimpleNamespace(ru_maxrss=usage["rss"]))
    monkeypatch.setattr(exact, "resource", fake)
    monkeypatch.setattr(exact, "sys", SimpleNamespace(platform="darwin"))
    usage["rss"] = 1 << 30
    assert exact._peak_mb() == 1024.0
    monkeypatch.setattr(exact, "sys", SimpleNamespace(platform="linux"))
    usage["rss"] = 1 << 20
    assert exact._peak_mb() == 1024.0


# ---------------------------------------------------------------------------------------
# the deadline's very instant is time left (as check_exact counts it), everywhere


def test_judge_at_exactly_its_deadline_still_searches_and_proves(monkeypatch: pytest.MonkeyPatch) -> None:
    """A session the chain does not decide, judged at the very instant of its deadline:
    not past it, so the searches run (the walk proves it), as ``check_exact`` judges a
    session it reaches at exactly the run's deadline."""
    deadline = time.monotonic() + 60  # the searches' own clock: a minute ahead
    monkeypatch.setattr(exact, "time", _Clock(deadline))
    tally = Tally()
    assert judge(_one(_rolled_back()), Evidence(), deadline, tally) is True
    assert tally.proven == 1 and tally.unknown == [] and tally.undecided == []


def test_prove_first_at_exactly_its_deadline_still_tries_the_walk(monkeypatch: pytest.MonkeyPatch) -> None:
    """A prover with no time budget left gets a deadline of now: at that very instant the
    short walk still runs, and proves the session before the fast rules."""
    monkeypatch.setattr(exact, "time", _Clock(time.monotonic() + 60))
    p = Prover(total_s=0.0)
    assert p.prove_first(_one(_rolled_back())) is True
    assert p.tally.proven == 1 and p.tally.by_chain == 0 and p.tally.explored > 0
    assert p._tried is None


class _Run:
    def __init__(self, name: str, depth: int) -> None:
        self.name, self.depth, self.closed = name, depth, False

    def close(self) -> None:
        self.closed = True


def test_a_search_that_used_its_time_at_exactly_the_deadline_is_resumed(monkeypatch: pytest.MonkeyPatch) -> None:
    """The first search spends its turn up to the very instant of the deadline: time is
    not past, so it (and the others) go on to the next turn, where it decides."""
    clock = _Clock(100.0)
    monkeypatch.setattr(exact, "time", clock)
    made: dict[str, _Run] = {}

    def make(name: str, depth: int) -> _Run:
        made[name] = _Run(name, depth)
        return made[name]

    monkeypatch.setattr(exact, "begin_frontier",
                        lambda ops, early=False, ahead=None: make("E", 4) if early else make("F", 2))
    monkeypatch.setattr(exact, "begin_jit", lambda ops: make("J", 3))
    monkeypatch.setattr(exact, "begin_eager", lambda ops: make("G", 1))
    monkeypatch.setattr(exact, "stop", lambda run: Outcome(None, depth=run.depth))
    monkeypatch.setattr(exact, "_peak_mb", lambda: 0.0)
    proof = Outcome(True, explored=7)
    script: dict[tuple[str, int], tuple[float, tuple[Outcome | None, bool]]] = {
        ("F", 1): (0.5, (None, False)),  # up to 100.5, the deadline
        ("J", 1): (0.0, (None, False)),
        ("E", 1): (0.0, (None, False)),
        ("G", 1): (0.0, (None, False)),
        ("F", 2): (0.0, (proof, False)),
    }
    turns: dict[str, int] = {}
    resumed: list[tuple[str, int]] = []

    def resume(run: _Run, deadline: float, cap: int) -> tuple[Outcome | None, bool]:
        turns[run.name] = turns.get(run.name, 0) + 1
        resumed.append((run.name, turns[run.name]))
        took, got = script[(run.name, turns[run.name])]
        clock.now += took
        return got

    monkeypatch.setattr(exact, "resume", resume)
    ops = [ModelOp(0, "append", 0, 1, "a")]
    walk = Outcome(None)
    tries = exact._searches(ops, 100.5, 9, walk)
    assert resumed == [("F", 1), ("J", 1), ("E", 1), ("G", 1), ("F", 2)]
    assert tries == [walk, proof] and tries[-1] is proof
    assert made["J"].closed and made["E"].closed and made["G"].closed
