"""The lazy model's merging of states (harness.checker.lazy.merge), on its own."""

from __future__ import annotations

import itertools
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from harness.checker.lazy import merge
from tests.checker.examples import examples

TURNS = ("a", "b")


def _state(*candidates: frozenset[tuple[str, ...]] | tuple[str, ...], turns: tuple[str, ...] = TURNS) -> Any:
    """A lazy state whose snapshots x0, x1, ... hold these contents (one rollback left)."""
    contents = tuple((f"x{i}", c, 1) for i, c in enumerate(candidates))
    return (turns, frozenset(f"x{i}" for i in range(len(candidates))), contents, ())


def _choices(states: frozenset[Any]) -> set[tuple[Any, ...]]:
    """What a set of states stands for: each state's turns with one candidate of each of
    its snapshots (a fixed content is its own only choice)."""
    out = set()
    for s in states:
        pools = [sorted(c) if isinstance(c, frozenset) else [c] for _, c, _ in s[2]]
        out.update((s[0], *pick) for pick in itertools.product(*pools))
    return out


def one(*turns: str) -> frozenset[tuple[str, ...]]:
    return frozenset({turns})


def test_a_product_of_choices_becomes_one_state() -> None:
    states = frozenset(_state(one(c), one(d)) for c in "pqr" for d in "st")
    got = merge(states)
    assert got == {_state(frozenset({("p",), ("q",), ("r",)}), frozenset({("s",), ("t",)}))}


def test_states_two_snapshots_apart_stay_apart() -> None:
    """(p, s) and (q, t) are not (p, t) or (q, s): a union would stand for those too."""
    states = frozenset({_state(one("p"), one("s")), _state(one("q"), one("t"))})
    assert merge(states) is states


def test_states_with_other_turns_or_a_fixed_content_apart_stay_apart() -> None:
    by_turns = frozenset({_state(one("p")), _state(one("q"), turns=("c",))})
    assert merge(by_turns) is by_turns
    fixed = frozenset({_state(("p",), one("s")), _state(("q",), one("t"))})
    assert merge(fixed) is fixed


CANDIDATES = st.frozensets(st.sampled_from([("p",), ("q",), ("r",), ("s",)]), min_size=1, max_size=3)


@settings(max_examples=examples(300), deadline=None)
@given(rows=st.lists(st.tuples(st.sampled_from([TURNS, ("c",)]), CANDIDATES, CANDIDATES, CANDIDATES),
                     min_size=1, max_size=12))
def test_merging_keeps_exactly_the_choices_the_states_stand_for(rows: list[Any]) -> None:
    states = frozenset(_state(*cands, turns=turns) for turns, *cands in rows)
    got = merge(states)
    assert len(got) <= len(states)
    assert _choices(got) == _choices(states)


@settings(max_examples=examples(200), deadline=None)
@given(batches=st.lists(st.lists(st.tuples(st.sampled_from([TURNS, ("c",)]), CANDIDATES, CANDIDATES,
                                           CANDIDATES), min_size=1, max_size=8),
                        min_size=1, max_size=6))
def test_a_memo_shared_across_calls_changes_no_result(batches: list[list[Any]]) -> None:
    """What a search keeps across its calls: every set merges as it would alone, also the
    same contents met again under other turns (a memo hit)."""
    memo: dict[Any, Any] = {}
    for rows in batches:
        for turns in (None, ("d",)):
            states = frozenset(_state(*cands, turns=turns or t) for t, *cands in rows)
            assert merge(states, memo) == merge(states)


def test_the_same_contents_under_other_turns_are_merged_from_the_memo() -> None:
    memo: dict[Any, Any] = {}
    states = frozenset(_state(one(c), one(d)) for c in "pq" for d in "st")
    assert len(merge(states, memo)) == 1
    assert len(memo) == 1
    moved = frozenset(_state(one(c), one(d), turns=("e",)) for c in "pq" for d in "st")
    got = merge(moved, memo)
    assert len(memo) == 1  # found there, not merged again
    assert got == {_state(frozenset({("p",), ("q",)}), frozenset({("s",), ("t",)}), turns=("e",))}
    apart = frozenset({_state(one("p"), one("s")), _state(one("q"), one("t"))})
    assert merge(apart, memo) is apart
    assert memo[frozenset(s[2] for s in apart)] is None  # remembered as not merging
