"""Histories that once crashed or fooled the checker, kept so they never do again."""

from __future__ import annotations

import pytest

from harness.checker import check
from tests.checker.builder import H


@pytest.mark.parametrize("exact", [False, True])
def test_phantom_before_a_reordered_pair_is_reported_not_a_crash(exact: bool) -> None:
    # A read shows a turn nobody appended, then b before a although a was acknowledged
    # before b was invoked: _order once looked the phantom up among the appends (KeyError).
    h = H()
    h.append(0, "s0", "a")
    h.append(0, "s0", "b")
    h.read(1, "s0", ["zzz", "b", "a"])
    counts = check(h.events, exact=exact).counts()
    assert counts.get("phantom-turn") == 1
    assert counts.get("reordered-turns") == 1
