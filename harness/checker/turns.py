"""The appends of a session indexed by token, and which session appended a token.

A turn is identified by its token (``value[1]`` of an append): the plan guarantees every
appended content is unique within a run. A session where some token was appended more than
once without failing (a retry with the same content), or where some append's value was not
``[role, token]`` (so its turn is unknown), is *ambiguous*: the checker then only checks
what stays sound there (formats, duplicate counts, and provenance only if every append of
the session is known).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Final, Protocol

from harness.checker.ops import INF, Pair, SessionOps
from harness.history import Event

__all__ = ["COMP", "HI", "INV", "LO", "ROLE", "AppendRec", "LazyIndexes", "OwnerLookup", "Owners", "TurnIndex",
           "index_appends"]

#: Fields of an :data:`AppendRec`.
LO: Final = 0
HI: Final = 1
ROLE: Final = 2
INV: Final = 3
COMP: Final = 4

#: ``(lo, hi, role, invoke, completion)`` of a non-failed append; ``hi`` is INF unless ok.
#: For a token appended more than once: the widest interval and the first role.
AppendRec = tuple[int, int, str, Event, Event | None]


@dataclass(slots=True)
class TurnIndex:
    """A session's appends: ``recs`` (non-failed, by token), ``failed`` (appends that
    definitely did not happen and whose token no other append of the session carries),
    ``multi`` (token -> number of non-failed appends, only for tokens appended twice or
    more) and the count of appends whose invoke value was not ``[role, token]``."""

    recs: dict[str, AppendRec] = field(default_factory=dict)
    failed: dict[str, Pair] = field(default_factory=dict)
    multi: dict[str, int] = field(default_factory=dict)
    malformed: int = 0

    @property
    def ambiguous(self) -> bool:
        return bool(self.multi) or self.malformed > 0

    def allowed(self, token: str) -> int:
        """How many times the token may appear in one read."""
        return self.multi.get(token, 1 if token in self.recs else 0)


def index_appends(pairs: Iterable[Pair]) -> TurnIndex:
    """Index a session's append ops by token (see :class:`TurnIndex`)."""
    ti = TurnIndex()
    recs = ti.recs
    failed: dict[str, Pair] = {}
    for inv, comp in pairs:
        v = inv.value
        if (type(v) is not list and type(v) is not tuple) or len(v) != 2:
            ti.malformed += 1
            continue
        role, tok = v
        if type(tok) is not str or type(role) is not str:
            ti.malformed += 1
            continue
        t = "info" if comp is None else comp.type
        if t == "fail":
            failed[tok] = (inv, comp)
            continue
        hi = comp.time if t == "ok" and comp is not None else INF
        old = recs.get(tok)
        if old is None:
            recs[tok] = (inv.time, hi, role, inv, comp)
        else:
            ti.multi[tok] = ti.multi.get(tok, 1) + 1
            recs[tok] = (min(old[LO], inv.time), max(old[HI], hi), old[ROLE], old[INV], old[COMP])
    ti.failed = {t: p for t, p in failed.items() if t not in recs}
    return ti


class LazyIndexes(Mapping[str, TurnIndex]):
    """Every session's :class:`TurnIndex`, each built the first time it is asked for
    (a session proven without the fast rules never needs its own, and
    :class:`Owners` asks for all of them only when some read shows a foreign token)."""

    def __init__(self, sessions: Mapping[str, SessionOps]) -> None:
        self._sessions = sessions
        self._built: dict[str, TurnIndex] = {}

    def __getitem__(self, name: str) -> TurnIndex:
        ti = self._built.get(name)
        if ti is None:
            ti = self._built[name] = index_appends(self._sessions[name].appends)
        return ti

    def __iter__(self) -> Iterator[str]:
        return iter(self._sessions)

    def __len__(self) -> int:
        return len(self._sessions)


class OwnerLookup(Protocol):
    """Which session appended a token: :class:`Owners` over a whole history, or the
    streaming checker's table (:mod:`harness.checker.stream`)."""

    def of(self, token: str) -> tuple[str, Pair] | None:
        """``(session, append op)`` of the first session (in history order) with a
        non-failed append of the token, or None."""
        ...


class Owners:
    """Which session appended a token, built only when a read shows a token its own
    session never appended (so a valid history never pays for it)."""

    def __init__(self, indexes: Mapping[str, TurnIndex]) -> None:
        self._indexes = indexes
        self._owner: dict[str, tuple[str, Pair]] | None = None

    def of(self, token: str) -> tuple[str, Pair] | None:
        """``(session, append op)`` of some non-failed append of the token, or None."""
        if self._owner is None:
            owner: dict[str, tuple[str, Pair]] = {}
            for name, ti in self._indexes.items():
                for tok, rec in ti.recs.items():
                    owner.setdefault(tok, (name, (rec[INV], rec[COMP])))
            self._owner = owner
        return self._owner.get(token)
