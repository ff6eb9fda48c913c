"""The model's replay of an order (harness.checker.model.replay) against folding its step."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.checker.model import GHOST, INIT, OP_KINDS, ModelOp, State, replay, step
from harness.checker.ops import INF
from tests.checker.examples import examples

TURNS = ("a", "b", "c", GHOST)
IDS = ("x", "y", "z")


def fold(ops: list[ModelOp], state: State) -> list[State]:
    """What ``replay`` must return: ``step`` from every state so far, equal states merged
    (the first kept first)."""
    states = [state]
    for op in ops:
        states = list(dict.fromkeys(s2 for s in states for s2 in step(s, op)))
    return states


@st.composite
def orders(draw: st.DrawFn) -> tuple[State, list[ModelOp]]:
    """A start and ops of every kind (now and then one the model does not know), most
    results what a state the ops before lead to allows (so that most orders go on for a
    while), the others any (so that some stop, anywhere)."""
    start = draw(st.sampled_from([INIT, (("a",), (("x", ("a",)),)), (("b",), (("y", ()),))]))
    ops: list[ModelOp] = []
    for n in range(draw(st.integers(0, 25))):
        states = fold(ops, start)
        turns, snaps = states[0] if states else INIT
        taken = [sid for sid, _ in snaps]
        free = [sid for sid in IDS if sid not in taken]
        right = draw(st.integers(0, 15)) > 0
        kind = draw(st.sampled_from([*OP_KINDS, *("append", "read") * 3, "bogus"]))
        if draw(st.integers(0, 20)) > 0 and kind == "bogus":
            kind = "read"
        some_turns = st.lists(st.sampled_from(TURNS), max_size=3).map(tuple)
        arg: Any = None
        out: Any = None
        if kind == "append":
            arg = draw(st.sampled_from(TURNS))
            out = draw(st.sampled_from([None, turns])) if right else draw(some_turns)
        elif kind == "read":
            out = turns if right else draw(some_turns)
        elif kind in ("snapshot", "snapshot-id"):
            out = draw(st.sampled_from(free if right and free else IDS))
        elif kind == "snapshot?":
            arg = tuple(draw(st.lists(st.sampled_from(IDS), max_size=4)))  # repeats too
        elif kind == "list":
            out = frozenset(taken) if right else draw(st.frozensets(st.sampled_from(IDS)))
        else:
            pool = free if kind == "rollback-missing" else taken
            arg = draw(st.sampled_from(pool if right and pool else IDS))
        ops.append(ModelOp(n, kind, n, INF, arg, out))
        if kind == "bogus":  # the last: folding past it raises
            break
    return start, ops


@settings(max_examples=examples(1000), deadline=None)
@given(case=orders())
def test_replay_is_folding_step(case: tuple[State, list[ModelOp]]) -> None:
    start, ops = case
    try:
        want = fold(ops, start)
    except ValueError:
        with pytest.raises(ValueError):
            replay(ops, start)
        return
    assert replay(ops, start) == want
    assert replay(iter(ops), start) == want  # any iterable


def test_replay_follows_every_state_an_unknown_snapshot_may_leave() -> None:
    """An unknown snapshot may have made either id: both states go on, and a rollback
    or a listing later tells them apart (or not)."""
    ops = [ModelOp(0, "append", 0, 1, "a"), ModelOp(1, "snapshot?", 1, INF, ("x", "y")),
           ModelOp(2, "append", 2, 3, "b")]
    both = [(("a", "b"), (("x", ("a",)),)), (("a", "b"), (("y", ("a",)),))]
    assert replay(ops) == fold(ops, INIT) == both
    to_y = [*ops, ModelOp(3, "rollback", 3, 4, "y")]
    assert replay(to_y) == fold(to_y, INIT) == [(("a",), (("y", ("a",)),))]
    listed = [*ops, ModelOp(3, "list", 3, 4, None, frozenset({"z"}))]
    assert replay(listed) == fold(listed, INIT) == []
    twice = [ModelOp(0, "snapshot?", 0, INF, ("x", "x"))]  # one id named twice: one state
    assert replay(twice) == fold(twice, INIT) == [((), (("x", ()),))]


def op(n: int, kind: str, arg: Any = None, out: Any = None) -> ModelOp:
    return ModelOp(n, kind, n, n + 1, arg, out)


#: (ops, what each result allows) for every kind the replay makes without a step: the
#: order as it is, then with its last op's result one the state does not allow
KNOWN = [
    ([op(0, "append", "a", ())], [op(0, "append", "a", ("b",))]),
    ([op(0, "append", "a"), op(1, "read", None, ("a",))], [op(0, "append", "a"), op(1, "read", None, ())]),
    ([op(0, "snapshot", None, "x")], [op(0, "snapshot", None, "x"), op(1, "snapshot", None, "x")]),
    ([op(0, "snapshot-id", None, "x")], [op(0, "snapshot", None, "x"), op(1, "snapshot-id", None, "x")]),
    # a listing of as many ids, other ones; and of the same ids and one more
    ([op(0, "snapshot", None, "x"), op(1, "list", None, frozenset({"x"}))],
     [op(0, "snapshot", None, "x"), op(1, "list", None, frozenset({"y"}))]),
    ([op(0, "snapshot", None, "x"), op(1, "list", None, frozenset({"x"}))],
     [op(0, "snapshot", None, "x"), op(1, "list", None, frozenset({"x", "y"}))]),
    ([op(0, "snapshot", None, "x"), op(1, "rollback", "x")], [op(0, "snapshot", None, "x"), op(1, "rollback", "y")]),
    ([op(0, "snapshot", None, "x"), op(1, "rollback?", "x")], [op(0, "snapshot", None, "x"), op(1, "rollback?", "y")]),
    ([op(0, "rollback-missing", "x")], [op(0, "snapshot", None, "x"), op(1, "rollback-missing", "x")]),
]


@pytest.mark.parametrize(("good", "bad"), KNOWN)
def test_replay_makes_each_known_kind_without_a_step(good: list[ModelOp], bad: list[ModelOp],
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """Until an op that may lead to several states, the replay makes each op itself (the
    cheaper way its docstring gives) and agrees with the step on what each result allows:
    the step is not called at all."""
    want_good, want_bad = fold(good, INIT), fold(bad, INIT)
    assert want_good and not want_bad

    def no_step(*_: Any) -> Any:
        raise AssertionError("stepped")

    monkeypatch.setattr("harness.checker.model.step", no_step)
    assert replay(good) == want_good
    assert replay(bad) == []
