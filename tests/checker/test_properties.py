"""Properties over generated histories (:mod:`tests.checker.simulate`, :mod:`tests.checker.mutate`).

- A history a correct store produced under random concurrency, crashes, unknown outcomes
  and rollbacks has no violation, for the fast and the exact checker alike.
- One mutation (drop an acknowledged turn, duplicate one, swap two, move one to another
  session, drop a snapshot id from a listing, corrupt a read) is reported with the right
  kind by the fast checker, and found invalid by the exact one.
"""

from __future__ import annotations

import random
from dataclasses import replace

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from harness.checker import check
from harness.checker.exact import check_exact
from tests.checker.examples import examples
from tests.checker.mutate import MUTATIONS, scramble
from tests.checker.simulate import Params, simulate

SETTINGS = settings(max_examples=examples(400), deadline=None, suppress_health_check=[HealthCheck.too_slow])
EXACT_BUDGET_S = 5.0


@st.composite
def params(draw: st.DrawFn, max_steps: int = 120) -> Params:
    return Params(
        procs=draw(st.integers(1, 5)),
        sessions=draw(st.integers(1, 3)),
        steps=draw(st.integers(0, max_steps)),
        p_crash=draw(st.sampled_from([0.0, 0.03, 0.1])),
        p_info=draw(st.sampled_from([0.0, 0.05, 0.15])),
        p_fail=draw(st.sampled_from([0.0, 0.05])),
        ties=draw(st.booleans()),
    )


@SETTINGS
@given(seed=st.integers(0, 2**32 - 1), prm=params(max_steps=200))
def test_fast_checker_passes_every_valid_history(seed: int, prm: Params) -> None:
    res = check(simulate(seed, prm))
    assert res.valid, [(v.kind, v.message) for v in res.violations]


@SETTINGS
@given(seed=st.integers(0, 2**32 - 1), prm=params())
def test_exact_checker_agrees_on_valid_histories(seed: int, prm: Params) -> None:
    events = simulate(seed, prm)
    assert check(events).valid
    exact = check_exact(events, budget_s=EXACT_BUDGET_S)
    assert exact.valid is not False, [(v.kind, v.message) for v in exact.violations]
    both = check(events, exact=True, budget_s=EXACT_BUDGET_S)
    assert both.valid is not False


@settings(max_examples=examples(400), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 2**32 - 1),
    prm=params(),
    mutation=st.sampled_from(sorted(MUTATIONS)),
)
def test_each_mutation_is_reported_with_its_kind(seed: int, prm: Params, mutation: str) -> None:
    got = MUTATIONS[mutation](simulate(seed, prm), random.Random(seed))
    assume(got is not None)
    assert got is not None
    events, kind = got
    res = check(events)
    assert kind in res.counts(), (kind, [(v.kind, v.message) for v in res.violations])
    assert set(res.counts()) == {kind}, [(v.kind, v.message) for v in res.violations]
    assert check_exact(events, budget_s=EXACT_BUDGET_S).valid is not True


@settings(max_examples=examples(300), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32 - 1), prm=params(max_steps=80))
def test_fast_checker_is_never_stricter_than_the_exact_one(seed: int, prm: Params) -> None:
    """On arbitrary damaged histories: whatever the exact search can linearize, the fast
    checker passes too (the fast checker's soundness, checked against the oracle)."""
    events = scramble(simulate(seed, prm), random.Random(seed))
    exact = check_exact(events, budget_s=EXACT_BUDGET_S)
    if exact.valid is True:
        res = check(events)
        assert res.valid, [(v.kind, v.message) for v in res.violations]


@settings(max_examples=examples(40), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32 - 1))
def test_fast_checker_on_larger_busier_histories(seed: int) -> None:
    prm = Params(procs=8, sessions=2, steps=1500, p_crash=0.01, p_info=0.03, p_fail=0.03)
    # 5 s of exact decision per history, not 30: about one in six has a session no search
    # decides within its steps, and a pass is what this asserts, not a proof
    res = check(simulate(seed, prm), budget_s=5.0)
    assert res.valid, [(v.kind, v.message) for v in res.violations]


_JUNK: list[object] = [None, 0, 1.5, "x", "", [], [[]], [["a"]], [[1, 2]], {"k": [1]}, [{"a": 1}],
                       [["user", ["nested"]]], ["user", "t", "extra"], [None, None], [[None, "a"]]]


@settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32 - 1), prm=params(max_steps=60), n=st.integers(1, 6))
def test_junk_values_never_crash_the_checkers(seed: int, prm: Params, n: int) -> None:
    """Whatever garbage a store returns (or a worker logs), the checkers return a verdict."""
    events = simulate(seed, prm)
    rng = random.Random(seed)
    for _ in range(n):
        i = rng.randrange(len(events))
        field = rng.choice(["value", "value", "value", "session", "error", "type", "f"])
        junk = rng.choice(_JUNK)
        if field in ("type", "f"):
            junk = rng.choice(["ok", "fail", "info", "invoke", "read", "append", "zzz"])
        events[i] = replace(events[i], **{field: junk})
    res = check(events)
    assert res.valid in (True, False)
    assert check_exact(events, budget_s=EXACT_BUDGET_S).valid in (True, False, None)
