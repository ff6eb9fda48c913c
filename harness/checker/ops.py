"""Pairing: one pass over a merged history that groups each session's operations by kind.

An operation is a pair ``(invoke, completion)`` (:func:`harness.history.pair_ops`); the
completion is ``None`` when the process never completed it (it was killed), which means the
same as ``info``.

Times follow one rule everywhere in the checker: op X *must precede* op Y iff X completed
``ok`` strictly before Y was invoked (``X.hi < Y.lo``); otherwise they may take effect in
either order. An op without an ``ok`` completion has ``hi == INF``: it may take effect at
any time after its invocation, or never.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from harness.history import Event, Pair, pair_ops

__all__ = [
    "INF",
    "NEG",
    "Pair",
    "SessionOps",
    "describe",
    "group_by_session",
    "hi_of",
    "is_listish",
    "short",
]

#: Completion time of an op that may take effect at any time (info, no completion).
INF = 1 << 62
#: Earlier than every event.
NEG = -(1 << 62)

@dataclass(slots=True)
class SessionOps:
    """The operations of one session, each list in completion order (pending ones last)."""

    session: str
    appends: list[Pair] = field(default_factory=list)
    reads: list[Pair] = field(default_factory=list)
    snapshots: list[Pair] = field(default_factory=list)
    rollbacks: list[Pair] = field(default_factory=list)
    lists: list[Pair] = field(default_factory=list)

    def count(self) -> int:
        return (
            len(self.appends)
            + len(self.reads)
            + len(self.snapshots)
            + len(self.rollbacks)
            + len(self.lists)
        )


_BUCKETS = {
    "append": "appends",
    "read": "reads",
    "snapshot": "snapshots",
    "rollback": "rollbacks",
    "list_snapshots": "lists",
}


def group_by_session(events: Sequence[Event]) -> tuple[dict[str, SessionOps], int]:
    """Pair invokes with completions (:func:`harness.history.pair_ops`, whose order each
    list keeps) and group them per session and kind.

    Returns the sessions (by name, in order of first completion) and the number of
    operations paired, faults and unknown kinds included. Events of ``nemesis`` never pair
    with anything (faults are never invoked by a worker process), and ops without a session
    or with an unknown ``f`` are counted but not modelled."""
    buckets: dict[object, dict[str, list[Pair]]] = {}
    n = 0
    for pair in pair_ops(events):
        n += 1
        inv = pair[0]
        try:  # free unless raised: an unhashable session or f is junk, skipped
            b = buckets.get(inv.session)
            if b is None:
                b = buckets[inv.session] = {}
            lst = b.get(inv.f)
            if lst is None:
                lst = b[inv.f] = []
            lst.append(pair)
        except TypeError:
            continue
    out: dict[str, SessionOps] = {}
    for name, by_f in buckets.items():
        if not isinstance(name, str):
            continue
        so = SessionOps(name)
        for f, attr in _BUCKETS.items():
            if f in by_f:
                setattr(so, attr, by_f[f])
        out[name] = so
    return out, n


def hi_of(comp: Event | None) -> int:
    """The time by which an op certainly took effect: its ok completion, else ``INF``."""
    if comp is not None and comp.type == "ok":
        return comp.time
    return INF


def is_listish(v: object) -> bool:
    return type(v) is list or type(v) is tuple


def short(token: object, width: int = 40) -> str:
    """A token or id as a short quoted string for a message."""
    s = token if isinstance(token, str) else repr(token)
    if len(s) > width:
        s = s[: width - 1] + "…"
    return repr(s)


def describe(e: Event) -> str:
    """``'process 2 at event 40'``: how a sentence names one event."""
    return f"process {e.process} at event {e.index}"
