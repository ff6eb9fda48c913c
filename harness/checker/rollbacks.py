"""A session's rollbacks indexed by time, and which rollbacks can matter to an observation.

For an observation ``X`` (a read, or a snapshot, which observes the state just the same)
the rollbacks that can be *the last rollback taking effect before X* are the candidates:
not failed, invoked no later than X completed (``lo <= X.hi``), and not certainly
followed by another rollback that certainly precedes X. With ``Z`` the latest invoke time
of an ok rollback completed before X was invoked, that last condition is ``hi >= Z``.
Whatever X saw is the state after one of the candidates (or, when ``Z`` is NEG, possibly
after none of them).
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Sequence
from contextlib import suppress

from harness.checker.ops import INF, NEG, Pair
from harness.history import Event

__all__ = ["Rollback", "RollbackIndex"]

#: ``(lo, hi, target id or None, invoke, completion)`` of a rollback that did not fail;
#: ``hi`` is INF unless it completed ok.
Rollback = tuple[int, int, str | None, Event, Event | None]


class RollbackIndex:
    """The non-failed rollbacks and the ok snapshots of one session (its listings tell
    which ids exist: a rollback to an id that cannot exist did nothing)."""

    def __init__(
        self, rollbacks: Sequence[Pair], snapshots: Sequence[Pair], lists: Sequence[Pair] = ()
    ) -> None:
        ok: list[Rollback] = []
        maybe: list[Rollback] = []
        ids, unknown_from = self._ids(snapshots)
        listed: set[object] | None = None
        for inv, comp in rollbacks:
            if comp is not None and comp.type == "fail":
                continue
            target = inv.value if type(inv.value) is str else None
            is_ok = comp is not None and comp.type == "ok"
            if not is_ok and target is not None and target not in ids and unknown_from == INF:
                if listed is None:
                    listed = self._listed(lists)
                if target not in listed:
                    continue  # no snapshot can have that id: the rollback did nothing
            if comp is not None and comp.type == "ok":
                ok.append((inv.time, comp.time, target, inv, comp))
            else:
                maybe.append((inv.time, INF, target, inv, comp))
        ok.sort(key=lambda r: r[0])
        maybe.sort(key=lambda r: r[0])
        self.ok = ok
        self.maybe = maybe
        self._ok_lo = [r[0] for r in ok]
        self._ok_hi = [r[1] for r in ok]
        self._maybe_lo = [r[0] for r in maybe]
        self._maxdur = max((r[1] - r[0] for r in ok), default=0)
        by_hi = sorted(ok, key=lambda r: r[1])
        self._his = [r[1] for r in by_hi]
        self._z: list[int] = []
        z = NEG
        for r in by_hi:
            z = max(z, r[0])
            self._z.append(z)
        self.snaps: dict[str, Pair] = {}
        dup: set[str] = set()
        for inv, comp in snapshots:
            if comp is not None and comp.type == "ok" and type(comp.value) is str:
                if comp.value in self.snaps:
                    dup.add(comp.value)
                self.snaps[comp.value] = (inv, comp)
        for sid in dup:
            del self.snaps[sid]

    @staticmethod
    def _ids(snapshots: Sequence[Pair]) -> tuple[set[str], int]:
        """Ids ok snapshot ops returned, and the earliest invoke of a snapshot op whose id is
        unknown (not failed, not ok), which may have created any id (INF: none)."""
        ids: set[str] = set()
        unknown_from = INF
        for inv, comp in snapshots:
            if comp is not None and comp.type == "ok" and type(comp.value) is str:
                ids.add(comp.value)
            elif comp is None or comp.type != "fail":
                unknown_from = min(unknown_from, inv.time)
        return ids, unknown_from

    @staticmethod
    def _listed(lists: Sequence[Pair]) -> set[object]:
        out: set[object] = set()
        for _, comp in lists:
            if comp is not None and comp.type == "ok" and type(comp.value) is list:
                with suppress(TypeError):  # unhashable junk: an unreadable listing
                    out.update(comp.value)
        return out

    def __bool__(self) -> bool:
        return bool(self.ok or self.maybe)

    def snapshot_of(self, rb: Rollback) -> Pair | None:
        """The one ok snapshot op that created the rollback's target, if there is one."""
        return None if rb[2] is None else self.snaps.get(rb[2])

    def last_hi_before(self, t: int) -> int:
        """The latest completion before ``t`` of an ok rollback (NEG if none)."""
        k = bisect_left(self._his, t)
        return self._his[k - 1] if k else NEG

    def epoch(self, lo: int, hi: int) -> tuple[int, int, int]:
        """A key such that observations with equal keys have equal :meth:`candidates`."""
        return (
            bisect_left(self._his, lo),
            bisect_right(self._ok_lo, hi),
            bisect_right(self._maybe_lo, hi) if self.maybe else 0,
        )

    def candidates(self, lo: int, hi: int) -> tuple[int, list[Rollback]]:
        """``(Z, candidates)`` for an observation invoked at ``lo`` and completed at ``hi``
        (see the module docstring). ``Z`` is NEG when no rollback certainly precedes it."""
        k = bisect_left(self._his, lo)
        z = self._z[k - 1] if k else NEG
        out: list[Rollback] = []
        ok_lo, ok_hi = self._ok_lo, self._ok_hi
        floor = z - self._maxdur if k else NEG
        i = bisect_right(ok_lo, hi) - 1
        while i >= 0 and ok_lo[i] >= floor:
            if ok_hi[i] >= z:
                out.append(self.ok[i])
            i -= 1
        if self.maybe:
            out.extend(self.maybe[: bisect_right(self._maybe_lo, hi)])
        return z, out
