"""The checker's verdict: violations with their evidence, and the result of one check."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from harness.history import Event

__all__ = ["KINDS", "CheckResult", "Violation"]

#: Stable violation names (DESIGN.md); reports, gates and users' CI match on them.
KINDS = (
    "lost-turn",
    "vanished-checkpoint",
    "duplicate-turn",
    "phantom-turn",
    "cross-session-bleed",
    "reordered-turns",
    "bad-rollback",
    "unreadable",
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
    search ran out of budget, or the checker raised ``error``; never to be read as a pass)."""

    valid: bool | None
    violations: tuple[Violation, ...] = ()
    stats: dict[str, Any] = field(default_factory=dict)
    error: str | None = None

    def counts(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for v in self.violations:
            out[v.kind] = out.get(v.kind, 0) + 1
        return out

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {
            "valid": "unknown" if self.valid is None else self.valid,
            "counts": self.counts(),
            "violations": [v.to_dict() for v in self.violations],
            "stats": self.stats,
        }
        if self.error is not None:
            d["error"] = self.error
        return d
