"""Both race stores of the zoo are found on purpose, within a bounded number of
schedules, and the same seed finds the same failure every time."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from ctl_helpers import scenario

from harness.replay import search

RACES = ["zoo.redis-rmw-append", "zoo.sqlite-max-turn-race"]


@pytest.mark.parametrize("store", RACES)
@pytest.mark.parametrize("strategy", ["pct", "random", "rr"])
def test_race_found_within_bounded_schedules(store: str, strategy: str, tmp_path: Path) -> None:
    sc = scenario(store, seed=100, workers=4, ops=30, strategy=strategy,
                  weights={"append": 6, "read": 3})
    runs: list[Any] = []
    res = search(sc, schedules=8, reports=tmp_path,
                 on_attempt=lambda _i, r: runs.append(r))
    assert "lost-turn" in res.result.counts(), [r.result.counts() for r in runs]
    again = search(sc, schedules=8, reports=tmp_path / "again")
    assert again.seed == res.seed
    assert again.result.counts() == res.result.counts()


@pytest.mark.parametrize("store", ["sqlite", "redis"])
def test_reference_stores_survive_the_same_search(store: str, tmp_path: Path) -> None:
    sc = scenario(store, seed=100, workers=4, ops=30, strategy="random",
                  weights={"append": 6, "read": 3})
    res = search(sc, schedules=3, reports=tmp_path)
    assert res.result.valid is True, res.result.counts()
