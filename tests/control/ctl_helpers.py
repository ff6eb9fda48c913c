"""Small controlled scenarios for the controlled-mode tests."""

from __future__ import annotations

from typing import Any

from harness.scenario import PayloadSpec, RedisSpec, Scenario


def scenario(store: str, *, seed: int, workers: int = 3, ops: int = 20, sessions: int = 2,
             strategy: str = "pct", weights: dict[str, int] | None = None,
             **control: Any) -> Scenario:
    """A small controlled scenario (short payloads, no fsync per write)."""
    return Scenario(
        name="ctl", store=store, seed=seed, workers=workers, ops=ops, sessions=sessions,
        duration=60, weights=weights or {"append": 6, "read": 3, "snapshot": 1,
                                         "list_snapshots": 1},
        payload=PayloadSpec(max_bytes=0, long_rate=0.0), redis=RedisSpec(persistence="none"),
        control={"enabled": True, "strategy": strategy, **control})
