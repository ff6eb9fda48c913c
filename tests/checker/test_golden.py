"""Golden histories kept as files (``tests/golden``): each tells one story, and
``expected.json`` says what the checker must find in it. Regenerate them with
``python tests/golden/make_golden.py`` only when the story itself changes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from harness.checker import check_path
from harness.checker.exact import check_exact
from harness.history import read_history

GOLDEN = Path(__file__).resolve().parents[1] / "golden"
EXPECTED: dict[str, Any] = json.loads((GOLDEN / "expected.json").read_text())


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_golden_history(name: str) -> None:
    want = EXPECTED[name]
    res = check_path(GOLDEN / name)
    assert res.valid is want["valid"], [(v.kind, v.message) for v in res.violations]
    assert res.counts() == want["kinds"]
    for v in res.violations:
        assert v.events and v.message.endswith(".")
    exact = check_exact(read_history(GOLDEN / name), budget_s=10)
    assert exact.valid is want["valid"]
    if "cross-session-bleed" not in want["kinds"]:  # one session at a time: "phantom" there
        assert exact.counts() == want["kinds"], [v.message for v in exact.violations]


def test_every_golden_file_has_an_expectation() -> None:
    files = {p.name for p in GOLDEN.glob("*.jsonl")} | {
        p.name for p in GOLDEN.iterdir() if p.is_dir() and not p.name.startswith((".", "_"))
    }
    assert files == set(EXPECTED)


def test_golden_result_serializes() -> None:
    res = check_path(GOLDEN / "lost-turn.jsonl")
    d = json.loads(json.dumps(res.to_dict()))
    assert d["valid"] is False and d["counts"] == {"lost-turn": 1}
    assert d["violations"][0]["events"][0]["f"] == "append"
