"""Collecting violations: one per distinct problem, with a cap, and the totals for the stats."""

from __future__ import annotations

from collections.abc import Hashable, Iterable

from harness.checker.result import KINDS, Violation
from harness.history import Event

__all__ = ["CAP_PER_KIND", "CAP_TOTAL", "Evidence"]

#: At most this many violations of one kind are kept (all are counted).
CAP_PER_KIND = 100
#: At most this many violations in all are kept (but the first of each kind always is).
CAP_TOTAL = 500


class Evidence:
    """The violations found so far, with their evidence: deduplicated by ``(kind, session,
    key)``, the evidence kept capped, every distinct problem counted.

    A lost turn seen missing by 10,000 later reads is one problem: its key is the turn,
    so only the first read that proves it is reported. Totals count every distinct
    problem, kept or not."""

    def __init__(self, cap_per_kind: int = CAP_PER_KIND, cap_total: int = CAP_TOTAL) -> None:
        self.cap_per_kind = cap_per_kind
        self.cap_total = cap_total
        self.kept: list[Violation] = []
        self.totals: dict[str, int] = {}
        #: Every session some problem was found in, its evidence kept or not.
        self.sessions: set[str | None] = set()
        self._keys: set[tuple[str, str | None, Hashable]] = set()
        self._kept_by_kind: dict[str, int] = {}
        #: Event indices of the reads/ops a kept or counted violation already blames.
        self.blamed: set[int] = set()

    def has(self, kind: str, session: str | None, key: Hashable) -> bool:
        return (kind, session, key) in self._keys

    def add(
        self,
        kind: str,
        session: str | None,
        key: Hashable,
        message: str,
        events: Iterable[Event | None],
        blame: Event | None = None,
    ) -> bool:
        """Record one problem; returns False if that problem was already recorded."""
        if kind not in KINDS:
            raise ValueError(f"unknown violation kind {kind!r}")
        k = (kind, session, key)
        if k in self._keys:
            return False
        self._keys.add(k)
        self.sessions.add(session)
        if blame is not None:
            self.blamed.add(blame.index)
        self.totals[kind] = self.totals.get(kind, 0) + 1
        kept = self._kept_by_kind.get(kind, 0)
        if kept < self.cap_per_kind and (kept == 0 or len(self.kept) < self.cap_total):
            self._kept_by_kind[kind] = kept + 1
            evs = {e.index: e for e in events if e is not None}
            ordered = tuple(evs[i] for i in sorted(evs))
            self.kept.append(Violation(kind, session, message, ordered))
        return True

    def reserve(self, kind: str, session: str | None, key: Hashable) -> None:
        """Mark a problem as covered by a violation already reported (not counted again)."""
        self._keys.add((kind, session, key))

    def count(self) -> int:
        return sum(self.totals.values())

    def violations(self) -> tuple[Violation, ...]:
        """Kept violations, grouped by kind in the order of KINDS, each group in history
        order of its first piece of evidence."""
        order = {k: n for n, k in enumerate(KINDS)}
        return tuple(
            sorted(
                self.kept,
                key=lambda v: (order[v.kind], v.events[0].index if v.events else -1),
            )
        )
