"""A session's rollback index (harness.checker.rollbacks.RollbackIndex) part by part, on
literal pairs with chosen times: which rollbacks it keeps (failed ones dropped, an unknown
rollback to an id no snapshot or listing can have dropped), its sorted tables, the ids and
the first unknown snapshot (``_ids``), the listed ids (``_listed``), the ok snapshots by id
(duplicates dropped), ``snapshot_of``, ``last_hi_before``, ``epoch`` and ``candidates``."""

from __future__ import annotations

from typing import Any

from harness.checker.ops import INF, NEG
from harness.checker.rollbacks import RollbackIndex
from harness.history import Event

_n = [0]


def _ev(t: int, type: str, f: str, value: Any = None) -> Event:
    _n[0] += 1
    return Event(_n[0], t, 0, type, f, "s", value)


def rb(lo: int, hi: int | None, target: Any, how: str = "ok") -> tuple[Event, Event | None]:
    """A rollback invoked at lo; completed at hi with type ``how`` (hi None: never)."""
    inv = _ev(lo, "invoke", "rollback", target)
    if hi is None:
        return inv, None
    return inv, _ev(hi, how, "rollback", target if how == "ok" else None)


def snap(lo: int, hi: int | None, sid: Any, how: str = "ok") -> tuple[Event, Event | None]:
    inv = _ev(lo, "invoke", "snapshot")
    if hi is None:
        return inv, None
    return inv, _ev(hi, how, "snapshot", sid if how == "ok" else None)


def lst(t: int, ids: Any, how: str = "ok") -> tuple[Event, Event | None]:
    return _ev(t, "invoke", "list_snapshots"), _ev(t + 1, how, "list_snapshots", ids)


def rows(rs: list) -> list[tuple[int, int, Any]]:
    return [(r[0], r[1], r[2]) for r in rs]


def test_empty() -> None:
    ix = RollbackIndex([], [])
    assert bool(ix) is False
    assert (ix.ok, ix.maybe, ix.snaps) == ([], [], {})
    assert ix.last_hi_before(100) == NEG
    assert ix.epoch(0, 100) == (0, 0, 0)
    assert ix.candidates(0, 100) == (NEG, [])


def test_kept_and_dropped_rollbacks() -> None:
    a = snap(1, 2, "a")
    ix = RollbackIndex(
        [
            rb(50, 60, "a"),
            rb(10, 20, "a"),
            rb(30, 40, "a", "fail"),      # failed: dropped
            rb(35, 45, "a", "info"),      # unknown, to a known id: maybe
            rb(25, None, "a"),            # never completed, known id: maybe
            rb(26, 27, "zz", "info"),     # unknown, to an id nothing can have: dropped
            rb(28, None, "zz"),           # the same, never completed: dropped
            rb(70, 80, ["junk"]),         # ok, target not a str: kept with None
            rb(29, None, 5),              # unknown, target not a str: kept
        ],
        [a],
    )
    assert bool(ix) is True
    assert rows(ix.ok) == [(10, 20, "a"), (50, 60, "a"), (70, 80, None)]
    assert rows(ix.maybe) == [(25, INF, "a"), (29, INF, None), (35, INF, "a")]
    assert ix.ok[0][3].time == 10 and ix.ok[0][4].time == 20
    assert ix.maybe[0][4] is None
    assert ix.maybe[2][4].type == "info"


def test_an_unknown_rollback_to_an_id_an_ok_rollback_names_is_dropped_too() -> None:
    # an ok rollback to an id no snapshot returned is kept (it returned ok), the unknown one not
    ix = RollbackIndex([rb(10, 20, "zz"), rb(30, None, "zz")], [])
    assert rows(ix.ok) == [(10, 20, "zz")]
    assert ix.maybe == []


def test_only_maybe_is_truthy() -> None:
    ix = RollbackIndex([rb(10, None, None)], [])
    assert bool(ix) is True
    assert rows(ix.maybe) == [(10, INF, None)]


def test_unknown_rollback_kept_when_a_listing_shows_its_id() -> None:
    ix = RollbackIndex([rb(10, None, "zz"), rb(12, None, "yy")], [], [lst(5, ["zz"]), lst(7, ["ww"], "fail")])
    assert rows(ix.maybe) == [(10, INF, "zz")]
    # a listing of the wrong shape, or failed, shows nothing
    ix2 = RollbackIndex([rb(10, None, "zz")], [], [lst(5, ("zz",)), lst(6, ["zz"], "info")])
    assert ix2.maybe == []


def test_unknown_rollback_kept_when_an_unknown_snapshot_may_have_made_its_id() -> None:
    ix = RollbackIndex([rb(10, None, "zz")], [snap(3, 4, None, "info")])
    assert rows(ix.maybe) == [(10, INF, "zz")]
    ix2 = RollbackIndex([rb(10, None, "zz")], [snap(3, None, None)])
    assert rows(ix2.maybe) == [(10, INF, "zz")]
    # a failed snapshot made nothing
    ix3 = RollbackIndex([rb(10, None, "zz")], [snap(3, 4, None, "fail")])
    assert ix3.maybe == []


def test_ids() -> None:
    ids, unknown = RollbackIndex._ids(
        [snap(5, 6, "a"), snap(7, 8, "b"), snap(9, 10, None, "fail"), snap(40, None, None),
         snap(30, 31, None, "info"), snap(50, 51, 7)]
    )
    assert ids == {"a", "b"}
    assert unknown == 30
    assert RollbackIndex._ids([snap(5, 6, "a"), snap(9, 10, None, "fail")]) == ({"a"}, INF)
    # an ok snapshot whose id is no str: its id is unknown
    assert RollbackIndex._ids([snap(20, 21, 7), snap(50, None, None)]) == (set(), 20)
    assert RollbackIndex._ids([]) == (set(), INF)


def test_listed() -> None:
    assert RollbackIndex._listed([lst(1, ["a", "b"]), lst(3, ["c"]), lst(5, ["d"], "fail"),
                                  lst(7, ("e",)), lst(9, None)]) == {"a", "b", "c"}
    # unhashable junk: what came before it is kept, the rest of that listing not
    assert RollbackIndex._listed([lst(1, ["a", ["x"], "b"]), lst(3, ["c"])]) == {"a", "c"}
    assert RollbackIndex._listed([(_ev(1, "invoke", "list_snapshots"), None)]) == set()
    assert RollbackIndex._listed([]) == set()


def test_tables() -> None:
    ix = RollbackIndex([rb(10, 100, "a"), rb(20, 30, "a"), rb(40, 50, "a"), rb(5, None, "a")], [snap(1, 2, "a")])
    assert ix._ok_lo == [10, 20, 40]
    assert ix._ok_hi == [100, 30, 50]
    assert ix._maybe_lo == [5]
    assert ix._maxdur == 90
    assert ix._his == [30, 50, 100]
    # the latest invoke among the rollbacks completed by each of those times
    assert ix._z == [20, 40, 40]


def test_snaps_ok_only_and_duplicates_dropped() -> None:
    a, b1, b2, c = snap(1, 2, "a"), snap(3, 4, "b"), snap(5, 6, "b"), snap(7, 8, "c")
    ix = RollbackIndex([], [a, b1, snap(9, 10, None, "info"), b2, snap(11, 12, 7), c, snap(13, None, None)])
    assert ix.snaps == {"a": a, "c": c}
    ix2 = RollbackIndex([], [b1, b2, snap(20, 21, "b")])
    assert ix2.snaps == {}


def test_snapshot_of() -> None:
    a = snap(1, 2, "a")
    ix = RollbackIndex([rb(10, 20, "a"), rb(30, 40, "q"), rb(50, 60, None)], [a])
    r_a, r_q, r_none = ix.ok
    assert ix.snapshot_of(r_a) == a
    assert ix.snapshot_of(r_q) is None
    assert ix.snapshot_of(r_none) is None


def test_last_hi_before() -> None:
    ix = RollbackIndex([rb(10, 20, "a"), rb(30, 40, "a"), rb(35, None, "a")], [snap(1, 2, "a")])
    assert ix.last_hi_before(20) == NEG
    assert ix.last_hi_before(21) == 20
    assert ix.last_hi_before(40) == 20
    assert ix.last_hi_before(41) == 40
    assert ix.last_hi_before(10**9) == 40


def test_epoch() -> None:
    ix = RollbackIndex([rb(10, 20, "a"), rb(30, 40, "a"), rb(25, None, "a"), rb(45, None, "a")],
                       [snap(1, 2, "a")])
    assert ix.epoch(0, 5) == (0, 0, 0)
    assert ix.epoch(20, 25) == (0, 1, 1)
    assert ix.epoch(21, 30) == (1, 2, 1)
    assert ix.epoch(41, 45) == (2, 2, 2)
    # no unknown rollbacks: the third part is 0
    ix2 = RollbackIndex([rb(10, 20, "a")], [snap(1, 2, "a")])
    assert ix2.epoch(100, 200) == (1, 1, 0)


def test_candidates_without_a_preceding_rollback() -> None:
    ix = RollbackIndex([rb(10, 20, "a"), rb(30, 40, "a")], [snap(1, 2, "a")])
    # invoked before any rollback completed: every ok rollback invoked by hi
    z, out = ix.candidates(15, 35)
    assert z == NEG
    assert rows(out) == [(30, 40, "a"), (10, 20, "a")]
    z, out = ix.candidates(15, 29)
    assert (z, rows(out)) == (NEG, [(10, 20, "a")])
    z, out = ix.candidates(20, 30)
    assert (z, rows(out)) == (NEG, [(30, 40, "a"), (10, 20, "a")])
    z, out = ix.candidates(0, 9)
    assert (z, out) == (NEG, [])


def test_candidates_after_a_rollback() -> None:
    ix = RollbackIndex([rb(10, 20, "a"), rb(30, 40, "a"), rb(5, 60, "a")], [snap(1, 2, "a")])
    # invoked after 10..20 completed: 10..20 is Z's; 5..60 may still come after it
    z, out = ix.candidates(21, 25)
    assert z == 10
    assert rows(out) == [(10, 20, "a"), (5, 60, "a")]
    # after 30..40 too: 10..20 is certainly followed by 30..40, which precedes the read
    z, out = ix.candidates(41, 50)
    assert z == 30
    assert rows(out) == [(30, 40, "a"), (5, 60, "a")]
    # after all three: only the one with the latest invoke among them... and any that overlaps it
    z, out = ix.candidates(61, 70)
    assert z == 30
    assert rows(out) == [(30, 40, "a"), (5, 60, "a")]


def test_candidates_boundaries() -> None:
    ix = RollbackIndex([rb(10, 20, "a"), rb(20, 30, "a")], [snap(1, 2, "a")])
    # hi == Z: still a candidate (hi >= z)
    z, out = ix.candidates(31, 40)
    assert z == 20
    assert rows(out) == [(20, 30, "a"), (10, 20, "a")]
    # lo == a rollback's completion: it does not certainly precede
    z, out = ix.candidates(30, 40)
    assert z == 10
    assert rows(out) == [(20, 30, "a"), (10, 20, "a")]
    # a rollback invoked exactly at the observation's completion is a candidate
    z, out = ix.candidates(0, 10)
    assert (z, rows(out)) == (NEG, [(10, 20, "a")])


def test_candidates_floor_skips_long_finished_rollbacks() -> None:
    # 0..5 and 6..8 finish long before Z's rollback (100..110): the scan stops at the floor
    ix = RollbackIndex([rb(0, 5, "a"), rb(6, 8, "a"), rb(100, 110, "a")], [snap(1, 2, "a")])
    assert ix._maxdur == 10
    z, out = ix.candidates(200, 300)
    assert z == 100
    assert rows(out) == [(100, 110, "a")]
    # floor exactly at a rollback's invoke: scanned, kept if its hi >= Z
    ix2 = RollbackIndex([rb(90, 200, "a"), rb(100, 110, "a"), rb(150, 160, "a")], [snap(1, 2, "a")])
    assert ix2._maxdur == 110
    z, out = ix2.candidates(170, 180)
    assert z == 150
    assert rows(out) == [(150, 160, "a"), (90, 200, "a")]


def test_candidates_with_unknown_rollbacks() -> None:
    ix = RollbackIndex([rb(10, 20, "a"), rb(5, None, "a"), rb(25, 26, "a", "info"), rb(50, None, "a")],
                       [snap(1, 2, "a")])
    z, out = ix.candidates(21, 30)
    assert z == 10
    assert rows(out) == [(10, 20, "a"), (5, INF, "a"), (25, INF, "a")]
    z, out = ix.candidates(21, 50)
    assert rows(out) == [(10, 20, "a"), (5, INF, "a"), (25, INF, "a"), (50, INF, "a")]
    z, out = ix.candidates(0, 4)
    assert (z, out) == (NEG, [])


def test_ties_keep_the_given_order() -> None:
    # sorted by invoke time only: rollbacks invoked at the same time keep the order given
    ix = RollbackIndex([rb(10, 20, "b"), rb(10, 20, "a"), rb(5, None, "b"), rb(5, None, "a")],
                       [snap(1, 2, "a"), snap(3, 4, "b")])
    assert rows(ix.ok) == [(10, 20, "b"), (10, 20, "a")]
    assert rows(ix.maybe) == [(5, INF, "b"), (5, INF, "a")]
