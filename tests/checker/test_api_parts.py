"""The public entry points (harness.checker.api) on literal histories: the budget and step
limit each mode hands the exact decision, and when an undecided session makes the verdict
unknown (only ``exact=True``, only when nothing was found), for ``check`` and
``check_path`` alike."""

from __future__ import annotations

from pathlib import Path

from harness.checker import check, check_path
from harness.checker.exact import SESSION_STEPS
from harness.history import write_history
from tests.checker.builder import H


def undecided_and_lost() -> tuple[H, H]:
    """``s`` has a rollback (only a search decides it: undecided at budget 0); ``t`` a lost turn."""
    h = H()
    h.append(0, "s", "a")
    h.read(1, "s", ["a"])
    h.snapshot(0, "s", "x")
    h.rollback(1, "s", "x")
    bad = H()
    bad.events = list(h.events)
    bad.t = h.t
    bad.append(2, "t", "b")
    bad.read(3, "t", [])
    return h, bad


def test_the_default_budget_and_steps() -> None:
    ex = check([]).stats["exact"]
    assert ex["budget_s"] == 30.0 and ex["session_steps"] == SESSION_STEPS
    ex = check([], exact=True).stats["exact"]
    assert ex["budget_s"] == 30.0 and ex["session_steps"] is None
    ex = check([], budget_s=2.5).stats["exact"]
    assert ex["budget_s"] == 2.5 and ex["session_steps"] == SESSION_STEPS


def test_check_path_hands_on_the_mode_and_the_budget(tmp_path: Path) -> None:
    h = H()
    h.append(0, "s", "a")
    write_history(tmp_path / "history.jsonl", h.events)
    ex = check_path(tmp_path).stats["exact"]
    assert ex["budget_s"] == 30.0 and ex["session_steps"] == SESSION_STEPS
    ex = check_path(tmp_path / "history.jsonl", exact=True, budget_s=4.0).stats["exact"]
    assert ex["budget_s"] == 4.0 and ex["session_steps"] is None


def test_undecided_is_unknown_only_in_the_exact_mode_and_only_without_a_violation(tmp_path: Path) -> None:
    h, bad = undecided_and_lost()
    res = check(h.events, budget_s=0)
    assert res.valid is True and res.stats["exact"]["sessions_unknown"] == ["s"]
    res = check(h.events, exact=True, budget_s=0)
    assert res.valid is None and res.stats["exact"]["sessions_unknown"] == ["s"]
    assert res.violations == () and res.error is None
    res = check(bad.events, exact=True, budget_s=0)
    assert res.valid is False and res.counts() == {"lost-turn": 1}
    assert res.stats["exact"]["sessions_unknown"] == ["s"]
    write_history(tmp_path / "history.jsonl", h.events)
    assert check_path(tmp_path, exact=True, budget_s=0).valid is None
    assert check_path(tmp_path, budget_s=0).valid is True


def test_decided_sessions_keep_their_verdict_in_the_exact_mode() -> None:
    h, bad = undecided_and_lost()
    res = check(h.events, exact=True)
    assert res.valid is True and res.stats["exact"]["sessions_unknown"] == []
    res = check(bad.events, exact=True)
    assert res.valid is False and res.stats["exact"]["sessions_unknown"] == []
