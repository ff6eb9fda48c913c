"""The session model (harness.checker.model) part by part, on literal states and ops: the
constants (``INIT``, ``GHOST``, ``OP_KINDS``), ``ModelOp``'s defaults, the snapshot table
helpers (``_get``, ``_put``) and every branch of ``step``, each with the exact list of states
it returns, including the edge cases a truthiness slip would get wrong (a snapshot or
rollback target whose turns are empty)."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from harness.checker.model import GHOST, INIT, OP_KINDS, ModelOp, _get, _put, step


def op(kind: str, arg: Any = None, out: Any = None) -> ModelOp:
    return ModelOp(1, kind, 10, 20, arg, out)


A = (("a", ("x",)), ("b", ()))  # two snapshots: "a" holds ("x",), "b" holds no turns


def test_constants() -> None:
    assert INIT == ((), ())
    assert GHOST == "\x00ghost"
    assert OP_KINDS == ("append", "read", "snapshot", "snapshot-id", "snapshot?", "rollback", "rollback?",
                        "rollback-missing", "list")


def test_model_op_defaults_and_frozen() -> None:
    o = ModelOp(3, "read", 5, 7)
    assert (o.id, o.kind, o.lo, o.hi, o.arg, o.out, o.inv, o.comp) == (3, "read", 5, 7, None, None, None, None)
    with pytest.raises(dataclasses.FrozenInstanceError):
        o.kind = "append"  # type: ignore[misc]


def test_get_finds_by_id_and_keeps_empty_turns() -> None:
    assert _get(A, "a") == ("x",)
    assert _get(A, "b") == ()
    assert _get(A, "c") is None
    assert _get((), "a") is None
    # the first entry with that id, not the last
    assert _get((("a", ("1",)), ("a", ("2",))), "a") == ("1",)


def test_put_keeps_the_table_sorted() -> None:
    assert _put((), "m", ("t",)) == (("m", ("t",)),)
    assert _put((("m", ("t",)),), "c", ()) == (("c", ()), ("m", ("t",)))
    assert _put((("c", ()), ("m", ("t",))), "z", ("u",)) == (("c", ()), ("m", ("t",)), ("z", ("u",)))


def test_append() -> None:
    assert step(INIT, op("append", "a")) == [(("a",), ())]
    assert step((("a",), A), op("append", "b")) == [(("a", "b"), A)]
    # a known prefix: applied only to it
    assert step((("a",), A), op("append", "b", ("a",))) == [(("a", "b"), A)]
    assert step((("a",), A), op("append", "b", ())) == []
    assert step(((), A), op("append", "b", ("a",))) == []
    assert step(((), ()), op("append", "b", ())) == [(("b",), ())]


def test_read() -> None:
    s = (("a", "b"), A)
    assert step(s, op("read", out=("a", "b"))) == [s]
    assert step(s, op("read", out=("a",))) == []
    assert step(s, op("read", out=("b", "a"))) == []
    assert step(INIT, op("read", out=())) == [INIT]
    assert step(INIT, op("read", out=("a",))) == []


def test_snapshot() -> None:
    s = (("t",), A)
    assert step(s, op("snapshot", out="c")) == [(("t",), (*A, ("c", ("t",))))]
    assert step(s, op("snapshot", out="0")) == [(("t",), (("0", ("t",)), *A))]
    assert step(s, op("snapshot", out="a")) == []
    # an existing id with no turns is still an existing id
    assert step(s, op("snapshot", out="b")) == []
    assert step(INIT, op("snapshot", out="c")) == [((), (("c", ()),))]


def test_snapshot_id_keeps_no_content() -> None:
    s = (("t",), A)
    assert step(s, op("snapshot-id", out="c")) == [(("t",), (*A, ("c", ())))]
    assert step(s, op("snapshot-id", out="a")) == []
    assert step(s, op("snapshot-id", out="b")) == []


def test_unknown_snapshot_offers_each_new_id() -> None:
    s = (("t",), A)
    assert step(s, op("snapshot?", ("d", "a", "c", "b"))) == [
        (("t",), (*A, ("d", ("t",)))),
        (("t",), (*A, ("c", ("t",)))),
    ]
    assert step(s, op("snapshot?", ("a", "b"))) == []
    assert step(s, op("snapshot?", ())) == []


def test_list() -> None:
    s = (("t",), A)
    assert step(s, op("list", out=frozenset({"a", "b"}))) == [s]
    assert step(s, op("list", out=frozenset({"a"}))) == []
    assert step(s, op("list", out=frozenset({"a", "b", "c"}))) == []
    assert step(INIT, op("list", out=frozenset())) == [INIT]


@pytest.mark.parametrize("kind", ["rollback", "rollback?"])
def test_rollback(kind: str) -> None:
    s = (("t", "u"), A)
    assert step(s, op(kind, "a")) == [(("x",), A)]
    # to a snapshot of no turns: the turns become empty (not "no such snapshot")
    assert step(s, op(kind, "b")) == [((), A)]
    assert step(s, op(kind, "c")) == []
    assert step(INIT, op(kind, "a")) == []


def test_rollback_missing() -> None:
    s = (("t",), A)
    assert step(s, op("rollback-missing", "c")) == [s]
    assert step(s, op("rollback-missing", "a")) == []
    assert step(s, op("rollback-missing", "b")) == []
    assert step(INIT, op("rollback-missing", "a")) == [INIT]


def test_unknown_kind_raises() -> None:
    with pytest.raises(ValueError) as e:
        step(INIT, op("frobnicate", "a"))
    assert str(e.value) == "unknown op kind 'frobnicate'"
