from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from harness.plan import make_plan
from harness.scenario import PayloadSpec, Scenario

SC = Scenario(workers=3, ops=300, sessions=4, payload=PayloadSpec(max_bytes=300_000, long_rate=0.05))


def test_same_seed_same_bytes_other_seed_other_plan() -> None:
    a, b, c = make_plan(SC, 7), make_plan(SC, 7), make_plan(SC, 8)
    assert a.to_json() == b.to_json()
    assert a.to_json() != c.to_json()


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**32), workers=st.integers(1, 6), ops=st.integers(0, 120))
def test_every_appended_content_is_unique(seed: int, workers: int, ops: int) -> None:
    plan = make_plan(Scenario(workers=workers, ops=ops, sessions=2), seed)
    contents = [o.content for s in plan.streams for o in s if o.f == "append"]
    assert len(contents) == len(set(contents))
    assert all(len(s) == ops for s in plan.streams)


def test_payloads_are_varied() -> None:
    contents = [o.content or "" for s in make_plan(SC, 3).streams for o in s if o.f == "append"]
    payloads = [c.split("|", 1)[1] for c in contents]
    assert "" in payloads
    assert any("\n" in p for p in payloads)
    assert any('"' in p for p in payloads)
    assert any(any(ord(ch) > 0xFFFF for ch in p) for p in payloads)  # emoji
    assert any(len(p.encode()) > 50_000 for p in payloads)
    assert max(len(p.encode()) for p in payloads) <= 300_000


def test_only_capabilities_are_planned() -> None:
    plan = make_plan(SC, 1, frozenset({"append", "read"}))
    assert {o.f for s in plan.streams for o in s} == {"append", "read"}


def test_sessions_are_retired_so_reads_stay_bounded() -> None:
    sc = Scenario(workers=2, ops=1000, sessions=2, session_lifetime=250)
    plan = make_plan(sc, 1)
    assert plan.sessions == ("s0", "s1", "s0.1", "s1.1", "s0.2", "s1.2", "s0.3", "s1.3")
    for stream in plan.streams:
        assert {o.session for o in stream[:250]} <= {"s0", "s1"}
        assert {o.session for o in stream[750:]} <= {"s0.3", "s1.3"}
    forever = make_plan(Scenario(workers=1, ops=1000, sessions=2, session_lifetime=0), 1)
    assert forever.sessions == ("s0", "s1")
