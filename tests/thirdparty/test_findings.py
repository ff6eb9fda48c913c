"""The findings in third-party stores, as regression tests: each ``repros/<store>-<kind>.toml``
is the smallest controlled run ``harness shrink`` found that shows the violation on the
library's version in the README's findings table (or, where a controlled schedule cannot
show it, the smallest free run found that shows it in every try; its header says which).
The test asserts the violation is still there: when a new version of the library fixes it,
this test fails, and the findings table and this repro are to be updated (the fix is news,
not noise). Each repro also passes on
the reference store of its backend, so the violation is the library's, not the harness's."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.replay import run_repro
from harness.scenario import load_scenario

REPROS = sorted((Path(__file__).parent / "repros").glob("*.toml"))
#: kinds that may name a repro's violation instead of the one its name says
SAME = {"back-dated-turn": {"incompatible-order"}}


def _kind(repro: Path) -> str:
    return load_scenario(repro).name.removeprefix("repro-")


@pytest.mark.parametrize("repro", REPROS, ids=[p.stem for p in REPROS])
def test_the_library_still_shows_it(repro: Path, tmp_path: Path) -> None:
    res = run_repro(repro, tmp_path / "reports")
    kind = _kind(repro)
    # a back-dated turn whose reads overlap in time is an incompatible order: the evidence
    # cannot say which way it went (as the zoo's declarations say of theirs)
    assert ({kind} | SAME.get(kind, set())) & set(res.result.counts()), (
        f"{res.store.spec} no longer shows {kind} on {repro.name} ({res.result.counts() or 'no violation'}): "
        "a fixed library? update the README's findings table and this repro")


@pytest.mark.parametrize("repro", REPROS, ids=[p.stem for p in REPROS])
def test_the_reference_store_passes_it(repro: Path, tmp_path: Path) -> None:
    store = load_scenario(repro).store
    backend = next((b for b in ("redis", "postgres") if store.endswith(f".{b}")), "sqlite")
    res = run_repro(repro, tmp_path / "reports", store=backend)
    assert res.verdict == "pass", (res.result.counts(), res.problems)


def test_there_are_repros() -> None:
    assert len(REPROS) >= 1
