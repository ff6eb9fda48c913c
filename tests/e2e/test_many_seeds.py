"""The checker's "no false positives" side, on real runs: the reference stores under real
concurrency give zero violations over 100 seeds of mixed scenarios (workers, sessions,
weights and payloads all drawn from the seed)."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from harness.runner.coordinator import run
from harness.scenario import PayloadSpec, Scenario


def mixed_scenario(seed: int, store: str) -> Scenario:
    rng = random.Random(seed)
    weights = {f: rng.randint(0, 4) for f in ("read", "snapshot", "rollback", "list_snapshots")}
    weights["append"] = rng.randint(1, 6)
    return Scenario(
        name=f"mixed{seed}", store=store, seed=seed, workers=rng.randint(2, 8),
        ops=rng.randint(50, 200), sessions=rng.randint(1, 4), duration=60, weights=weights,
        payload=PayloadSpec(max_bytes=rng.choice([0, 5000, 50_000]), long_rate=0.05))


@pytest.mark.parametrize("seed", range(60))
def test_reference_sqlite_is_clean(seed: int, tmp_path: Path) -> None:
    res = run(mixed_scenario(seed, "sqlite"), reports=tmp_path)
    assert res.result.violations == (), [v.message for v in res.result.violations[:3]]
    assert res.stats["completions"].get("ok", 0) > 0


@pytest.mark.parametrize("seed", range(60, 100))
def test_reference_redis_is_clean(seed: int, tmp_path: Path, redis_url: str) -> None:
    res = run(mixed_scenario(seed, "redis"), reports=tmp_path, redis_url=redis_url)
    assert res.result.violations == (), [v.message for v in res.result.violations[:3]]
    assert res.stats["completions"].get("ok", 0) > 0
