"""The coordinator freezes (``gc.freeze``) the heap its process held before the run, for the
run only: collections during the run skip it, and the caller's process is left as it was,
a heap it froze itself included."""

from __future__ import annotations

import gc
from pathlib import Path
from typing import Any

from harness.runner.coordinator import run
from harness.scenario import load_scenario

SCENARIOS = Path(__file__).resolve().parents[2] / "scenarios"


def test_the_heap_held_before_the_run_is_frozen_for_it_and_thawed_after(tmp_path: Path) -> None:
    sc = load_scenario(SCENARIOS / "smoke.toml").with_overrides(seed=3, ops=30)
    frozen_during: list[int] = []

    def progress(event: str, _data: dict[str, Any]) -> None:
        if event == "started":
            frozen_during.append(gc.get_freeze_count())

    assert gc.get_freeze_count() == 0
    res = run(sc, reports=tmp_path / "a", progress=progress)
    assert res.exit_code == 0
    assert frozen_during and frozen_during[0] > 0  # frozen while the workers ran
    assert gc.get_freeze_count() == 0  # and thawed after

    kept = [[i] for i in range(1000)]
    gc.freeze()  # the caller's own: left as it is
    mine = gc.get_freeze_count()
    try:
        frozen_during.clear()
        res = run(sc, reports=tmp_path / "b", progress=progress)
        assert res.exit_code == 0 and len(kept) == 1000
        # not frozen again (the run's own set-up would add to it) nor thawed: only fewer,
        # as frozen objects are freed
        assert len(frozen_during) == 1 and 0 < frozen_during[0] <= mine
        assert 0 < gc.get_freeze_count() <= mine
    finally:
        gc.unfreeze()
