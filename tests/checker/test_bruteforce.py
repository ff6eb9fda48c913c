"""The exact checker against brute force on tiny histories.

An independent, deliberately naive oracle: try every order of every subset of a session's
ops (ops that completed ok must be in it, ops with an unknown outcome may be, failed ops
may not), keep the orders that respect real time, replay each on a plain model and accept
if one explains every result. The exact checker must agree with it, and the fast checker
must never reject what it accepts.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st

from harness.checker import check
from harness.checker.checkpoints import not_found
from harness.checker.evidence import Evidence
from harness.checker.exact import check_exact, replays, session_ops
from harness.checker.frontier import search
from harness.checker.jit import search_jit
from harness.checker.lazy import certify
from harness.checker.linearize import Outcome, linearize
from harness.checker.model import ModelOp
from harness.checker.ops import group_by_session
from harness.checker.plain import prove
from harness.history import Event, iter_ops
from tests.checker.examples import examples
from tests.checker.mutate import MUTATIONS, scramble
from tests.checker.simulate import BUGGY_MIX, BUGS, MORE_BUGS, Params, buggy_params, simulate

INF = float("inf")
Op = tuple[str, str, float, float, Any, Any]  # kind, status, lo, hi, arg, out


def _ops(events: list[Event], session: str) -> list[Op]:
    out: list[Op] = []
    for inv, comp in iter_ops(events):
        if inv.session != session:
            continue
        status = "info" if comp is None or comp.type not in ("ok", "fail") else comp.type
        hi = comp.time if comp is not None and status == "ok" else INF
        res = comp.value if comp is not None else None
        if status == "fail":
            assert comp is not None
            if inv.f == "rollback" and not_found(comp.error):
                out.append(("missing", "ok", inv.time, comp.time, inv.value, None))
            continue
        if inv.f in ("read", "list_snapshots") and status != "ok":
            continue
        out.append((inv.f, status, inv.time, hi, inv.value, res))
    return out


class TooBig(Exception):
    """The oracle gave up: more than its budget of orders to try (an invalid history with
    many ops of unknown outcome can need millions)."""


def brute_force(events: list[Event], budget: int = 1 << 62) -> bool:
    """True iff every session has a linearization; raises TooBig past ``budget`` nodes."""
    sessions = {e.session for e in events if e.session is not None}
    left = [budget]
    return all(_session_ok(_ops(events, s), left) for s in sessions)


def _session_ok(ops: list[Op], left: list[int]) -> bool:
    referenced = {o[4] for o in ops if o[0] == "rollback"} | {
        x for o in ops if o[0] == "list_snapshots" for x in o[5]}
    return _extend(ops, [], {}, sorted(referenced), left)


def _extend(rest: list[Op], turns: list[list[str]], snaps: dict[str, Any],
            ids: list[str], left: list[int]) -> bool:
    """Depth first: place one more op (any op no remaining op must precede), or stop
    when only ops with unknown outcomes remain (they never took effect)."""
    left[0] -= 1
    if left[0] < 0:
        raise TooBig
    if all(o[1] != "ok" for o in rest):
        return True
    for i, op in enumerate(rest):
        if any(b[3] < op[2] for b in rest if b is not op):
            continue  # some remaining op completed before this one began
        others = rest[:i] + rest[i + 1:]
        for nturns, nsnaps in _apply(op, turns, snaps, ids):
            if _extend(others, nturns, nsnaps, ids, left):
                return True
    return False


def _apply(op: Op, turns: list[list[str]], snaps: dict[str, Any], ids: list[str]) -> list[Any]:
    f, status, _, _, arg, out = op
    if f == "append":
        return [([*turns, list(arg)], snaps)]
    if f == "read":
        return [(turns, snaps)] if [list(x) for x in out] == turns else []
    if f == "snapshot":
        names = [out] if status == "ok" else [*ids, f"fresh{id(op)}"]
        return [(turns, {**snaps, n: turns}) for n in names if n not in snaps]
    if f == "rollback":
        if arg in snaps:
            return [(snaps[arg], snaps)]
        return [] if status == "ok" else [(turns, snaps)]
    if f == "missing":
        return [] if arg in snaps else [(turns, snaps)]
    return [(turns, snaps)] if set(out) == set(snaps) else []


@settings(max_examples=examples(300), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32 - 1), damage=st.booleans())
def test_exact_agrees_with_brute_force(seed: int, damage: bool) -> None:
    rng = random.Random(seed)
    prm = Params(procs=rng.randint(1, 4), sessions=1, steps=rng.randint(2, 24),
                 p_crash=0.1, p_info=0.15, p_fail=0.1, p_retry=0.3, p_any_id=0.3)
    events = simulate(seed, prm)
    if damage:
        events = scramble(events, rng)
    try:
        truth = brute_force(events, budget=2_000_000)
    except TooBig:  # retries and unknown outcomes: rarely more orders than it can try
        assume(False)
    assert check_exact(events, budget_s=10).valid is truth
    res = check(events)  # the default verdict: the fast rules, then every session decided
    assert not res.stats["exact"]["sessions_unknown"]
    assert res.valid is truth


@settings(max_examples=examples(300), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32 - 1), damage=st.booleans())
def test_sessions_without_rollback_are_decided_without_search(seed: int, damage: bool) -> None:
    """No rollback: the chain of the reads decides the session (harness.checker.chain), on
    longer histories than with rollbacks, and agrees with brute force both ways."""
    rng = random.Random(seed)
    prm = Params(procs=rng.randint(1, 5), sessions=1, steps=rng.randint(2, 30),
                 p_crash=0.1, p_info=0.15, p_fail=0.1,
                 weights={"append": 40, "read": 30, "snapshot": 8, "rollback": 0,
                          "list_snapshots": 8})
    events = simulate(seed, prm)
    if damage:
        events = scramble(events, rng)
    truth = brute_force(events)
    res = check(events, exact=True)
    assert res.valid is truth
    exact = res.stats["exact"]
    if truth:
        assert exact["sessions_proven_without_search"] == exact["sessions_proven"] == 1


@settings(max_examples=examples(300), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32 - 1), how=st.sampled_from(["none", "scramble", *sorted(MUTATIONS)]))
def test_a_session_without_rollback_is_proven_on_its_pairs_only_when_linearizable(
    seed: int, how: str
) -> None:
    """harness.checker.plain proves a session before any other rule: never one brute force
    refutes (a damaged history of any kind), and every valid one of these (so the fast
    rules and the search are left the sessions with a violation, or a rollback)."""
    rng = random.Random(seed)
    prm = Params(procs=rng.randint(1, 5), sessions=rng.randint(1, 2), steps=rng.randint(2, 30),
                 p_crash=0.1, p_info=0.15, p_fail=0.1,
                 weights={"append": 40, "read": 30, "snapshot": 8, "rollback": 0,
                          "list_snapshots": 8})
    events = simulate(seed, prm)
    truth: bool | None = None
    if how == "scramble":
        events = scramble(events, rng)
    elif how != "none":  # a mutation always makes a violation (test_properties.py)
        got = MUTATIONS[how](events, rng)
        if got is not None:
            events, truth = got[0], False
    if truth is None:
        truth = brute_force(events)
    sessions, _ = group_by_session(events)
    proven = all(prove(so) for so in sessions.values())
    assert not proven or truth
    if how == "none":
        assert proven


@pytest.mark.parametrize("bug", BUGS + MORE_BUGS)
@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32 - 1))
def test_the_default_verdict_is_exact_on_buggy_stores(bug: str, seed: int) -> None:
    """Histories of a store with one of the zoo's bugs (simulate.BUGS), long enough for
    the bug to show in some of them: the default verdict is the brute force's, both ways
    (no false positive, nothing the exact search finds is missed). The fast rules alone
    miss some (bench/exact.py counts them)."""
    events = simulate(seed, buggy_params(random.Random(seed), bug))
    try:
        truth = brute_force(events, budget=50_000)
    except TooBig:  # the oracle cannot say (rare: an invalid history, many unknown ops)
        assume(False)
    res = check(events)
    assert not res.stats["exact"]["sessions_unknown"]
    assert res.valid is truth


def _longer(seed: int, low: int, high: int) -> tuple[list[Event], bool]:
    """A history longer than brute force can take (``low``-``high`` steps, up to 8
    processes): of a buggy store, scrambled, or valid (then the flag is True)."""
    rng = random.Random(seed)
    bug = rng.choice([None, None, *BUGS])
    prm = Params(procs=rng.randint(2, 8), sessions=1, steps=rng.randint(low, high),
                 p_crash=0.02, p_info=0.05, p_fail=0.03, bug=bug,
                 weights=BUGGY_MIX if rng.random() < 0.5 else Params().weights)
    events = simulate(seed, prm)
    valid = bug is None and rng.random() >= 0.3
    if not valid and bug is None:
        events = scramble(events, rng)
    return events, valid


@settings(max_examples=examples(40), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32 - 1))
def test_the_search_agrees_with_the_eager_search(seed: int) -> None:
    """Longer histories than brute force can take (50-300 steps, up to 8 processes, buggy
    stores, scrambled ones): where the eager Wing-Gong search (the model of model.py, no
    lazy content, no sets of states) decides a session, the search of frontier.py decides
    it the same way, and a valid history is never refuted. (A wrong greedy step, placing a
    read that only some of the states allow, once refuted a valid 240-op session here.)"""
    events, valid = _longer(seed, 50, 300)
    sessions, _ = group_by_session(events)
    for so in sessions.values():
        try:
            ops = session_ops(so, Evidence())
        except Exception:  # an op the model cannot know: the verdict is unknown anyway
            continue
        now = time.monotonic()
        eager, frontier = linearize(ops, now + 2).ok, search(ops, now + 10).ok
        assert not (valid and frontier is False)
        assert eager is None or frontier is None or eager is frontier


@settings(max_examples=examples(200), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32 - 1), buggy=st.booleans())
@example(seed=4646, buggy=True)  # pass 1 lets a join through; the walk refutes it
def test_the_just_in_time_search_agrees_with_brute_force(seed: int, buggy: bool) -> None:
    """harness.checker.jit on its own (the joined sweep, the guided walk): linearizable
    exactly when brute force says so, on tiny histories with rollbacks (valid, scrambled,
    or of a buggy store), and every proof it gives replays through the eager model."""
    _alone_agrees_with_brute_force(_tiny(seed, buggy), search_jit)


@settings(max_examples=examples(200), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32 - 1), buggy=st.booleans(), early=st.booleans())
def test_the_frontier_search_agrees_with_brute_force(seed: int, buggy: bool, early: bool) -> None:
    """harness.checker.frontier on its own, trying ops earliest completion or earliest
    invocation first (merged sets of states, failed configurations covering others, the
    path built back through merged sets): linearizable exactly when brute force says so,
    on the tiny histories of the test above, and every proof it gives replays through
    the eager model."""
    _alone_agrees_with_brute_force(
        _tiny(seed, buggy), lambda ops, deadline: search(ops, deadline, early=early))


@settings(max_examples=examples(200), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32 - 1), buggy=st.booleans(), early=st.booleans())
# valid; the search backs up at once past depths that cannot explain a read, and the
# configuration before them must keep that read's reasons among its own (dropped, its
# failure covers one that has a way on, and the search refutes it)
@example(seed=5448, buggy=True, early=True)
def test_the_frontier_search_looking_ahead_from_the_start_agrees_with_brute_force(
        seed: int, buggy: bool, early: bool) -> None:
    """The test above with the search's look-ahead (a read or an append whose turns only a
    rollback can set ends a configuration where no state can still get them) on from
    the first step, not only once the search has backed up a lot, as it is by default:
    it must never refute what brute force accepts, nor pass what it rejects."""
    _alone_agrees_with_brute_force(
        _tiny(seed, buggy), lambda ops, deadline: search(ops, deadline, early=early, ahead=0))


def _alone_agrees_with_brute_force(events: list[Event],
                                   decide: Callable[[list[ModelOp], float], Outcome]) -> None:
    """One search on its own (``decide(ops, deadline)``) says linearizable exactly when
    brute force does (a history too big for brute force is not drawn), decides every
    session, and each proof it gives replays through the eager model."""
    try:
        truth = brute_force(events, budget=50_000)
    except TooBig:
        assume(False)
    got = True
    for so in group_by_session(events)[0].values():
        found = Evidence()
        ops = session_ops(so, found)
        if found.count():
            got = False
            break
        out = decide(ops, time.monotonic() + 10)
        assert out.ok is not None
        if not out.ok:
            got = False
            break
        assert replays(certify([ops[k] for k in out.order], out.path))
    assert got is truth


def _tiny(seed: int, buggy: bool) -> list[Event]:
    """A tiny history with rollbacks: of a buggy store, or valid, scrambled half the time."""
    rng = random.Random(seed)
    if buggy:
        return simulate(seed, buggy_params(rng, rng.choice(BUGS)))
    prm = Params(procs=rng.randint(1, 4), sessions=1, steps=rng.randint(2, 24),
                 p_crash=0.1, p_info=0.15, p_fail=0.1, p_retry=0.3, p_any_id=0.3)
    events = simulate(seed, prm)
    return scramble(events, rng) if rng.random() < 0.5 else events


@settings(max_examples=examples(20), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32 - 1))
def test_the_just_in_time_search_agrees_with_the_other_searches(seed: int) -> None:
    """Longer histories (30-120 steps, up to 8 processes, buggy stores, scrambled ones):
    where the depth-first searches decide a session, the just-in-time one decides it the
    same way, never refutes a valid one, and its proofs replay."""
    events, valid = _longer(seed, 30, 120)
    for so in group_by_session(events)[0].values():
        try:
            ops = session_ops(so, Evidence())
        except Exception:  # an op the model cannot know: the verdict is unknown anyway
            continue
        now = time.monotonic()
        jit = search_jit(ops, now + 10)
        other = search(ops, now + 10).ok
        if other is None:
            other = linearize(ops, time.monotonic() + 5).ok
        assert not (valid and jit.ok is False)
        assert jit.ok is None or other is None or jit.ok is other
        if jit.ok:
            assert replays(certify([ops[k] for k in jit.order], jit.path))


def test_the_frontier_search_never_refutes_a_valid_session_of_a_fixed_sample() -> None:
    """The frontier search on its own, in both orders of trying (and with its look-ahead
    from the start), on 150 valid histories
    that are seeded, not drawn (the same ones under mutation testing, whatever
    $HARNESS_EXAMPLES says; 3-8 processes, 40-160 steps, crashes, unknown outcomes,
    retries, rollbacks to any id):
    it proves nearly every session, never refutes one, and its proofs replay. (Its
    observer shortcut taken for any op that leaves the states as they were refuted one of
    these.)"""
    proven = 0
    for seed in range(150):
        rng = random.Random(seed)
        prm = Params(procs=rng.randint(3, 8), sessions=1, steps=rng.randint(40, 160),
                     p_crash=0.05, p_info=0.1, p_fail=0.05, p_retry=0.2, p_any_id=0.2)
        for so in group_by_session(simulate(seed, prm))[0].values():
            ops = session_ops(so, Evidence())
            for early, ahead in ((False, None), (True, None), (False, 0)):
                out = search(ops, time.monotonic() + 10, 20_000, early=early, ahead=ahead)
                assert out.ok is not False, seed
                if out.ok:
                    proven += 1
                    assert replays(certify([ops[k] for k in out.order], out.path)), seed
    assert proven >= 420
