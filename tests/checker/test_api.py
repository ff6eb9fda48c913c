"""The checker's public face: what ``harness.checker`` exports and how it is called."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import harness.checker as checker
from harness.checker import KINDS, CheckResult, Violation, check, check_path
from harness.checker.exact import check_exact
from harness.errors import HistoryError
from harness.history import write_history
from tests.checker.builder import H


def test_all_is_honest() -> None:
    assert set(checker.__all__) == {"KINDS", "CheckResult", "Violation", "check", "check_path"}
    for name in checker.__all__:
        assert hasattr(checker, name)


def test_init_only_reexports() -> None:
    tree = ast.parse(Path(checker.__file__).read_text())
    for node in tree.body:
        assert isinstance(node, ast.ImportFrom | ast.Assign | ast.Expr), ast.dump(node)


def test_empty_history_is_valid() -> None:
    res = check([])
    assert isinstance(res, CheckResult) and res.valid is True and res.violations == ()
    assert res.stats["ops"] == 0


def test_violation_contract() -> None:
    h = H()
    h.append(0, "s", "a")
    h.read(1, "s", [])
    (v,) = check(h.events).violations
    assert isinstance(v, Violation) and v.kind in KINDS and v.session == "s"
    assert v.to_dict()["events"][0]["index"] == 0


def test_check_path_reads_a_file_and_a_run_dir(tmp_path: Path) -> None:
    h = H()
    h.append(0, "s", "a")
    h.read(1, "s", [])
    write_history(tmp_path / "history.jsonl", h.events)
    assert check_path(tmp_path / "history.jsonl").counts() == {"lost-turn": 1}
    assert check_path(tmp_path).counts() == {"lost-turn": 1}
    with pytest.raises(HistoryError):
        check_path(tmp_path / "missing")


def test_exact_budget_exhausted_is_unknown_never_a_pass() -> None:
    h = H()
    h.append(0, "s", "a")
    h.read(1, "s", ["a"])
    assert check_exact(h.events, budget_s=0).valid is None
    res = check(h.events, exact=True, budget_s=0)
    assert res.valid is None and res.stats["exact"]["sessions_unknown"] == ["s"]
    h.read(1, "s", [])
    assert check(h.events, exact=True, budget_s=0).valid is False


def test_exact_finds_what_the_fast_checker_cannot() -> None:
    """b's append began after a's was acknowledged, so a state holding b holds a; a read
    that began before a's acknowledgment but shows b alone proves a lost turn. The fast
    checker (sound, not complete) lets it pass; the exact search does not."""
    h = H()
    h.inv(2, "read", "s")
    h.append(0, "s", "a")
    h.append(1, "s", "b")
    h.ok(2, ["b"])
    assert check(h.events).valid is True
    res = check(h.events, exact=True)
    assert res.valid is False
    (v,) = res.violations
    assert "No order of the 3 operations" in v.message


def test_stats_count_suppressed_violations() -> None:
    h = H()
    for i in range(300):
        h.append(0, "s", f"t{i}")
        h.read(1, "s", [])
    res = check(h.events)
    assert res.stats["violations_total"] == 300
    assert len(res.violations) == 100  # capped per kind
