"""The checker's verdict: violations with their evidence, and the result of one check."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from harness.history import Event

__all__ = ["KINDS", "CheckResult", "Violation"]

#: Stable violation names (docs/design.md); reports, gates and users' CI match on them. Each names the
#: shape its evidence proves, nothing more:
#:
#: - ``lost-turn``: an acknowledged turn (or one a read showed) that a read invoked later
#:   lacks, with no rollback to explain it.
#: - ``back-dated-turn``: a turn a read shows *before* turn ``t``, although an earlier read
#:   (completed before this one began) showed ``t`` without it: the turn was put behind
#:   turns already visible, as a store does that orders turns by a timestamp or id drawn
#:   before its commit. Nothing is lost; the order of the session's history changed after
#:   the fact. (Elle's ``incompatible-order`` is the general name; "back-dated" says which
#:   way the evidence points, which is what a user needs to find the bug.)
#: - ``incompatible-order``: two reads that overlap in time disagree about which turns
#:   precede a turn, one showing a turn there that the other lacks altogether; no single
#:   order of the session gives both, but the evidence cannot tell a back-dated turn from a
#:   lost one (Elle's name, kept for exactly the case it names).
#: - ``vanished-checkpoint``: an acknowledged snapshot id missing from a later listing, or
#:   unknown to a later rollback.
#: - ``reused-snapshot-id``: two snapshot ops that both succeeded returned the same id.
#: - ``setup-race``: on a cold start, a worker could not open the store (its set-up code
#:   raced another process's); see :mod:`harness.checker.setup`.
KINDS = (
    "lost-turn",
    "back-dated-turn",
    "incompatible-order",
    "vanished-checkpoint",
    "reused-snapshot-id",
    "duplicate-turn",
    "phantom-turn",
    "cross-session-bleed",
    "reordered-turns",
    "bad-rollback",
    "unreadable",
    "setup-race",
)


@dataclass(frozen=True, slots=True)
class Violation:
    """One broken invariant: its kind, the session, one sentence a person can follow, and
    the smallest set of events that proves it (in history order)."""

    kind: str
    session: str | None
    message: str
    events: tuple[Event, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "session": self.session,
            "message": self.message,
            "events": [e.to_dict() for e in self.events],
        }


@dataclass(frozen=True, slots=True)
class CheckResult:
    """``valid`` is True (no violation), False (at least one) or None (unknown: the exact
    search ran out of budget, or the checker raised ``error``; never to be read as a pass).

    ``violations`` is the evidence kept, capped per kind (see
    :mod:`harness.checker.evidence`); ``totals`` counts every distinct problem found, kept
    or not, by kind. A result built without ``totals`` counts its violations."""

    valid: bool | None
    violations: tuple[Violation, ...] = ()
    stats: dict[str, Any] = field(default_factory=dict)
    totals: dict[str, int] | None = None
    error: str | None = None

    def counts(self) -> dict[str, int]:
        """The true number of problems per kind (not only those whose evidence was kept)."""
        if self.totals is not None:
            return {k: n for k, n in self.totals.items() if n}
        return self.shown()

    def shown(self) -> dict[str, int]:
        """How many violations of each kind carry their evidence in ``violations``."""
        out: dict[str, int] = {}
        for v in self.violations:
            out[v.kind] = out.get(v.kind, 0) + 1
        return out

    def total(self) -> int:
        """Every problem found, of every kind."""
        return sum(self.counts().values())

    def proof(self) -> dict[str, Any] | None:
        """What the exact decision established (None: it did not run): ``proven`` (every
        session was proven linearizable, each proof replayed through the model),
        ``sessions``, ``sessions_proven`` (of which ``sessions_proven_without_search``),
        and the sessions it could not decide within its budget (the first 20 by name and
        how many, and for those 20 how far the searches got: ``ops``, ``ops_placed`` in an
        order that explains every result so far, ``share_placed``, and the ``window`` of
        events still ambiguous); sessions with a violation are not counted as decided."""
        ex = self.stats.get("exact")
        if not isinstance(ex, dict):
            return None
        unknown = list(ex.get("sessions_unknown", ()))
        n = int(self.stats.get("sessions", 0))
        proven = int(ex.get("sessions_proven", 0))
        return {
            "proven": self.valid is True and not unknown and proven == n,
            "sessions": n,
            "sessions_proven": proven,
            "sessions_proven_without_search": int(ex.get("sessions_proven_without_search", 0)),
            "sessions_unknown": unknown[:20],
            "sessions_unknown_count": len(unknown),
            "sessions_unknown_detail": list(ex.get("sessions_unknown_detail", ()))[:20],
        }

    def to_dict(self) -> dict[str, Any]:
        """``counts`` are true totals; ``shown`` says how many of each kind have their
        evidence in ``violations``, and ``truncated`` whether any evidence was left out;
        ``proof`` is :meth:`proof`."""
        counts, shown = self.counts(), self.shown()
        d: dict[str, Any] = {
            "valid": "unknown" if self.valid is None else self.valid,
            "counts": counts,
            "shown": shown,
            "violations_total": sum(counts.values()),
            "violations_shown": len(self.violations),
            "truncated": shown != counts,
            "violations": [v.to_dict() for v in self.violations],
            "proof": self.proof(),
            "stats": self.stats,
        }
        if self.error is not None:
            d["error"] = self.error
        return d
