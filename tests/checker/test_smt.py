"""The solver that ``check --exact`` falls back on (harness.checker.smt) against brute force.

Its "unsat" is a refutation, so the formula must be exactly the model: on tiny histories of
the ops it covers (every outcome known, appends shown by a read or ghosts), valid,
scrambled or of a buggy store, it says linearizable exactly when brute force does, and
each order it gives replays through the eager model.
"""

from __future__ import annotations

import random
import time
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from harness.checker import smt
from harness.checker.evidence import Evidence
from harness.checker.exact import complete, replays, session_ops
from harness.checker.model import GHOST, ModelOp
from harness.checker.ops import INF, group_by_session
from harness.history import Event, read_history
from tests.checker.examples import examples
from tests.checker.mutate import scramble
from tests.checker.simulate import BUGS, MORE_BUGS, Params, buggy_params, simulate
from tests.checker.test_bruteforce import TooBig, brute_force

DATA = Path(__file__).parent / "data"


def _known(seed: int, buggy: bool) -> list[Event]:
    """A tiny history with rollbacks: of a buggy store, or valid, scrambled half the time;
    every outcome known in a third of them, else some ops crashed or of unknown outcome."""
    rng = random.Random(seed)
    unknown = rng.random() < 2 / 3
    if buggy:
        prm = buggy_params(rng, rng.choice(BUGS + MORE_BUGS))
        return simulate(seed, prm if unknown else replace(prm, p_crash=0.0, p_info=0.0))
    prm = Params(procs=rng.randint(1, 4), sessions=1, steps=rng.randint(2, 24),
                 p_crash=0.05 if unknown else 0.0, p_info=0.1 if unknown else 0.0,
                 p_fail=0.1, p_any_id=0.3)
    events = simulate(seed, prm)
    return scramble(events, rng) if rng.random() < 0.5 else events


def _decided(events: list[Event]) -> bool | None:
    """The solver's verdict over every session (None: some session it does not cover)."""
    for so in group_by_session(events)[0].values():
        found = Evidence()
        ops = session_ops(so, found)
        if found.count():
            return False
        if not smt.supported(ops):
            return None
        out = smt.decide(ops, time.monotonic() + 60)
        assert out.ok is not None
        if not out.ok:
            return False
        order = [ops[k] for k in out.order]
        assert complete(order, ops) and replays(order)
    return True


@settings(max_examples=examples(300), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32 - 1), buggy=st.booleans())
def test_the_solver_agrees_with_brute_force(seed: int, buggy: bool) -> None:
    events = _known(seed, buggy)
    got = _decided(events)
    assume(got is not None)
    try:
        truth = brute_force(events, budget=50_000)
    except TooBig:
        assume(False)
    assert got is truth


def _op(k: int, kind: str, lo: int, hi: int, arg: object = None, out: object = None) -> ModelOp:
    return ModelOp(k, kind, lo, hi, arg, out)


def test_a_rollback_restores_what_its_snapshot_saw_when_it_was_placed() -> None:
    """Two appends overlap a snapshot; a read after a rollback shows ``a`` alone: only
    the order a, snapshot, b explains it, and the solver finds that one."""
    ops = [_op(0, "append", 0, 10, "a", ()), _op(1, "snapshot", 1, 9, None, "1"),
           _op(2, "append", 2, 8, "b", ("a",)), _op(3, "read", 11, 12, None, ("a", "b")),
           _op(4, "rollback", 13, 14, "1"), _op(5, "read", 15, 16, None, ("a",))]
    out = smt.decide(ops, time.monotonic() + 60)
    assert out.ok and [ops[k].kind for k in out.order] == [
        "append", "snapshot", "append", "read", "rollback", "read"]


def test_a_read_no_order_explains_is_refuted() -> None:
    """The same, but the snapshot returned before ``a`` was appended: it can only hold
    the empty list, and the read after the rollback shows ``a``."""
    ops = [_op(0, "snapshot", 0, 1, None, "1"), _op(1, "append", 2, 3, "a", ()),
           _op(2, "rollback", 4, 5, "1"), _op(3, "read", 6, 7, None, ("a",))]
    assert smt.decide(ops, time.monotonic() + 60).ok is False


def test_what_it_does_not_cover_is_left_undecided() -> None:
    """A snapshot of unknown outcome (it may have made any of several ids) is not in the
    formula: the solver says nothing."""
    ops = [_op(0, "snapshot?", 0, INF, frozenset({"1", "2"})), _op(1, "rollback", 1, 2, "1")]
    assert not smt.supported(ops)
    assert smt.decide(ops, time.monotonic() + 60).ok is None


@pytest.mark.parametrize("name", ["w4-listing", "w8-final-read", "w8-restored"])
def test_the_solver_proves_recorded_sessions(name: str) -> None:
    """Recorded sessions of real runs (ghost appends, listings, snapshots no rollback
    restores, hundreds of ops), each proven by the solver in about a second here, its
    order holding every completed op and replaying through the eager model."""
    (so,) = group_by_session(read_history(DATA / f"{name}.jsonl.zst"))[0].values()
    ops = session_ops(so, Evidence())
    assert smt.supported(ops)
    out = smt.decide(ops, time.monotonic() + 120)
    assert out.ok is True
    order = [ops[k] for k in out.order]
    assert complete(order, ops) and replays(order)


def test_past_its_memory_the_solver_leaves_the_session_undecided(monkeypatch: pytest.MonkeyPatch) -> None:
    """The solver's memory is bounded (a session the searches decide at once took it to
    3.6 GB): past :data:`~harness.checker.smt.SOLVER_MEMORY_MB` it says nothing."""
    (so,) = group_by_session(read_history(DATA / "w8-restored.jsonl.zst"))[0].values()
    ops = session_ops(so, Evidence())
    monkeypatch.setattr(smt, "SOLVER_MEMORY_MB", 1)
    assert smt.decide(ops, time.monotonic() + 120).ok is None


def test_an_append_of_unknown_outcome_that_a_read_shows_took_effect() -> None:
    """An append whose worker crashed, shown by a read: placed in the order, which
    replays; a rollback of unknown outcome to an id nobody made beside it did not take
    effect. With a later read of the empty list and no rollback, no order explains both."""
    ops = [_op(0, "append", 0, INF, "u", ()), _op(1, "read", 1, 2, None, ("u",)),
           _op(2, "rollback?", 0, INF, "9")]
    out = smt.decide(ops, time.monotonic() + 60)
    assert out.ok is True and 0 in out.order and 2 not in out.order
    assert replays([ops[k] for k in out.order])
    later = [*ops[:2], _op(2, "read", 3, 4, None, ())]
    assert smt.decide(later, time.monotonic() + 60).ok is False


def test_a_rollback_that_failed_not_found_after_its_snapshot_returned_is_refuted() -> None:
    ops = [_op(0, "snapshot", 0, 1, None, "1"), _op(1, "rollback-missing", 2, 3, "1")]
    assert smt.decide(ops, time.monotonic() + 60).ok is False
    assert smt.decide(ops[1:], time.monotonic() + 60).ok is True  # no such snapshot: it fails


def test_what_the_formula_does_not_know_is_not_covered() -> None:
    """An id two snapshots returned (either kind), an append whose parent no read showed
    (a retried turn): the searches' alone."""
    for a, b in (("snapshot", "snapshot"), ("snapshot-id", "snapshot-id")):
        assert not smt.supported([_op(0, a, 0, 1, None, "1"), _op(1, b, 2, 3, None, "1")])
    assert smt.supported([_op(0, "append", 0, 1, GHOST, None)])
    assert not smt.supported([_op(0, "append", 0, 1, "t", None)])
    assert smt.available()  # the test extra installs the solver


def test_the_solver_stops_at_its_deadline() -> None:
    """``w8-rollbacks``, which the solver takes minutes to prove, given two seconds more
    than building its formula takes: it says nothing, and returns within seconds."""
    import z3

    (so,) = group_by_session(read_history(DATA / "w8-rollbacks.jsonl.zst"))[0].values()
    ops = session_ops(so, Evidence())
    start = time.monotonic()
    smt._formula(ops, z3)
    build = time.monotonic() - start
    start = time.monotonic()
    assert smt.decide(ops, start + 2 * build + 2).ok is None
    assert time.monotonic() - start < 2 * build + 30
