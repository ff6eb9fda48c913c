"""The streaming checker gives exactly the batch checker's verdict: on every golden history,
on generated valid and damaged histories (sessions retired and processes ended at random
valid points, or only at the end), and on long ones whose sessions retire as they go."""

from __future__ import annotations

import json
import random
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from harness.checker.stream import StreamChecker, StreamError
from harness.history import Event, read_history
from tests.checker.examples import examples
from tests.checker.mutate import MUTATIONS, scramble
from tests.checker.simulate import Params, simulate
from tests.checker.streaming import assert_same, bleed_across, chain, stream
from tests.checker.test_properties import _JUNK, params

GOLDEN = Path(__file__).resolve().parents[1] / "golden"
HISTORIES = sorted([p.name for p in GOLDEN.glob("*.jsonl")]
                   + [p.name for p in GOLDEN.iterdir() if p.is_dir() and not p.name.startswith((".", "_"))])
EXPECTED: dict[str, Any] = json.loads((GOLDEN / "expected.json").read_text())
SETTINGS = settings(max_examples=examples(200), deadline=None, suppress_health_check=[HealthCheck.too_slow])


@pytest.mark.parametrize("name", HISTORIES)
def test_golden_histories_stream_to_the_batch_verdict(name: str) -> None:
    events = read_history(GOLDEN / name)
    want = assert_same(events)
    for seed in range(8):
        assert_same(events, random.Random(seed))
    assert want.counts() == EXPECTED[name]["kinds"]


@SETTINGS
@given(seed=st.integers(0, 2**32 - 1), prm=params(max_steps=150), retire=st.booleans())
def test_valid_and_scrambled_histories(seed: int, prm: Params, retire: bool) -> None:
    events = simulate(seed, prm)
    rng = random.Random(seed) if retire else None
    assert assert_same(events, rng).valid
    assert_same(scramble(events, random.Random(seed)), random.Random(seed + 1) if retire else None)


@SETTINGS
@given(seed=st.integers(0, 2**32 - 1), prm=params(), mutation=st.sampled_from(sorted(MUTATIONS)))
def test_each_mutation_streams_to_the_batch_verdict(seed: int, prm: Params, mutation: str) -> None:
    got = MUTATIONS[mutation](simulate(seed, prm), random.Random(seed))
    assume(got is not None)
    assert got is not None
    res = assert_same(got[0], random.Random(seed))
    assert got[1] in res.counts()


@settings(max_examples=examples(120), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32 - 1), prm=params(max_steps=120), k=st.integers(2, 5),
       damage=st.sampled_from(["none", "scramble", "bleed-across", *sorted(MUTATIONS)]))
def test_long_histories_whose_sessions_retire(seed: int, prm: Params, k: int, damage: str) -> None:
    """Several histories in a row: early sessions are judged and dropped long before the
    end, and a turn of a dropped session can still bleed into a later read."""
    events = chain([simulate(seed + i, prm) for i in range(k)])
    rng = random.Random(seed)
    if damage == "scramble":
        events = scramble(events, rng)
    elif damage == "bleed-across":
        damaged = bleed_across(events, rng)
        assume(damaged is not None)
        assert damaged is not None
        events = damaged
    elif damage != "none":
        got = MUTATIONS[damage](events, rng)
        assume(got is not None)
        assert got is not None
        events = got[0]
    res = assert_same(events, random.Random(seed + 1))
    if damage == "bleed-across":
        assert "cross-session-bleed" in res.counts()


@settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32 - 1), prm=params(max_steps=60), n=st.integers(1, 6))
def test_junk_values_stream_to_the_batch_verdict(seed: int, prm: Params, n: int) -> None:
    events = chain([simulate(seed, prm), simulate(seed + 1, prm)])
    rng = random.Random(seed)
    for _ in range(n):
        i = rng.randrange(len(events))
        field = rng.choice(["value", "value", "value", "session", "error", "type", "f", "process"])
        junk: object = rng.choice(_JUNK)
        if field in ("type", "f"):
            junk = rng.choice(["ok", "fail", "info", "invoke", "read", "append", "zzz"])
        events[i] = replace(events[i], **{field: junk})
    assert_same(events, random.Random(seed))


def test_a_bleed_from_a_dropped_session_is_proved_with_its_append() -> None:
    events = chain([simulate(s, Params(procs=2, sessions=2, steps=60)) for s in range(3)])
    events = bleed_across(events, random.Random(1)) or []
    sc = StreamChecker()
    retire_at = {e.session: e.index for e in events if isinstance(e.session, str)}
    dropped = 0
    for e in events:
        sc.feed(e)
        for s, i in retire_at.items():
            if i == e.index:
                sc.retire(s)
        dropped = max(dropped, len(sc.retired_owners))
    assert dropped > 0  # the owner was judged and dropped before the bleeding read came
    bleed = [v for v in sc.finish().violations if v.kind == "cross-session-bleed"]
    assert len(bleed) == 1 and bleed[0].events[0].f == "append"


def test_an_event_of_a_judged_session_is_refused() -> None:
    sc = StreamChecker()
    sc.feed(Event(0, 1, 0, "invoke", "read", "s"))
    sc.feed(Event(1, 2, 0, "ok", "read", "s", []))
    sc.retire("s")
    with pytest.raises(StreamError, match="already judged"):
        sc.feed(Event(2, 3, 0, "invoke", "read", "s"))


def test_violations_are_shown_as_their_session_is_judged() -> None:
    events = read_history(GOLDEN / "lost-turn.jsonl")
    sc = StreamChecker()
    for e in events:
        sc.feed(e)
    assert sc.violations_so_far() == ()
    for s in {e.session for e in events if isinstance(e.session, str)}:
        sc.retire(s)
    shown = sc.violations_so_far()
    assert [v.kind for v in shown] == ["lost-turn"]
    assert sc.violations_so_far() == ()
    assert sc.finish().violations == shown


def test_stream_helper_counts_live_violations() -> None:
    res, live = stream(read_history(GOLDEN / "phantom-turn.jsonl"), random.Random(0))
    assert live == res.total() and live > 0
