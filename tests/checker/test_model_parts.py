"""The model of a session (harness.checker.model.step), op kind by op kind, on literal
states: every state each op can lead to given its result, and none where the result is
impossible; snapshots kept sorted by id, the content an id-only snapshot keeps, the ids an
unknown snapshot may have made, rollbacks to ids that exist or not, and an unknown kind.

States are ``(turns, ((id, turns), ...))``; ops ``ModelOp(id, kind, lo, hi, arg, out)``."""

from __future__ import annotations

from typing import Any

import pytest

from harness.checker.model import INIT, ModelOp, State, step
from harness.checker.ops import INF

S: State = (("a", "b"), (("id1", ("a",)), ("id3", ())))


def op(kind: str, arg: Any = None, out: Any = None) -> ModelOp:
    return ModelOp(0, kind, 0, INF, arg, out)


def test_append_adds_at_the_end_where_it_may() -> None:
    assert step(INIT, op("append", "a")) == [(("a",), ())]
    assert step(S, op("append", "c")) == [(("a", "b", "c"), S[1])]
    # a known state before the turn: only there
    assert step(S, op("append", "c", ("a", "b"))) == [(("a", "b", "c"), S[1])]
    assert step(S, op("append", "c", ("a",))) == []
    assert step(INIT, op("append", "a", ())) == [(("a",), ())]
    assert step(INIT, op("append", "a", ("x",))) == []


def test_read_sees_the_turns_exactly() -> None:
    assert step(S, op("read", None, ("a", "b"))) == [S]
    assert step(S, op("read", None, ("a",))) == []
    assert step(S, op("read", None, ("a", "b", "c"))) == []
    assert step(INIT, op("read", None, ())) == [INIT]


def test_snapshot_records_the_turns_under_a_new_id_kept_sorted() -> None:
    assert step(S, op("snapshot", None, "id2")) == [(S[0], (("id1", ("a",)), ("id2", ("a", "b")), ("id3", ())))]
    assert step(S, op("snapshot", None, "id0")) == [(S[0], (("id0", ("a", "b")), ("id1", ("a",)), ("id3", ())))]
    assert step(S, op("snapshot", None, "id4")) == [(S[0], (("id1", ("a",)), ("id3", ()), ("id4", ("a", "b"))))]
    assert step(S, op("snapshot", None, "id1")) == []  # ids are never reused
    assert step(S, op("snapshot", None, "id3")) == []


def test_an_id_only_snapshot_keeps_no_content() -> None:
    assert step(S, op("snapshot-id", None, "id2")) == [(S[0], (("id1", ("a",)), ("id2", ()), ("id3", ())))]
    assert step(S, op("snapshot-id", None, "id1")) == []
    assert step(S, op("snapshot-id", None, "id3")) == []


def test_an_unknown_snapshot_may_have_made_any_of_its_ids_not_taken() -> None:
    got = step(S, op("snapshot?", ("id0", "id1", "id4")))
    assert got == [
        (S[0], (("id0", ("a", "b")), ("id1", ("a",)), ("id3", ()))),
        (S[0], (("id1", ("a",)), ("id3", ()), ("id4", ("a", "b")))),
    ]
    assert step(S, op("snapshot?", ("id1", "id3"))) == []
    assert step(S, op("snapshot?", ())) == []


def test_a_listing_shows_exactly_the_ids() -> None:
    assert step(S, op("list", None, frozenset({"id1", "id3"}))) == [S]
    assert step(S, op("list", None, frozenset({"id1"}))) == []
    assert step(S, op("list", None, frozenset({"id1", "id3", "id4"}))) == []
    assert step(INIT, op("list", None, frozenset())) == [INIT]
    # the ids, not the contents
    assert step(S, op("list", None, frozenset({("a",), ()}))) == []


def test_rollbacks_restore_the_content_of_an_id_that_exists() -> None:
    for kind in ("rollback", "rollback?"):
        assert step(S, op(kind, "id1")) == [(("a",), S[1])]
        assert step(S, op(kind, "id3")) == [((), S[1])]
        assert step(S, op(kind, "id2")) == []
        assert step(INIT, op(kind, "id1")) == []


def test_a_rollback_that_failed_needs_its_id_missing() -> None:
    assert step(S, op("rollback-missing", "id2")) == [S]
    assert step(INIT, op("rollback-missing", "id1")) == [INIT]
    assert step(S, op("rollback-missing", "id1")) == []
    assert step(S, op("rollback-missing", "id3")) == []  # an id whose content is empty exists


def test_an_unknown_kind_raises() -> None:
    with pytest.raises(ValueError, match=r"^unknown op kind 'cas'$"):
        step(S, op("cas", "id1"))
