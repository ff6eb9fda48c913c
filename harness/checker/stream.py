"""The streaming checker: the fast checker fed one event at a time, a session judged and
dropped as soon as the caller retires it.

Contract (what :meth:`StreamChecker.finish` guarantees): fed a merged history in order,
with any valid calls to :meth:`~StreamChecker.retire` and
:meth:`~StreamChecker.process_ended` in between, it returns the :class:`CheckResult` of
``check(events)``: the same violations in the same order, the same totals, the same
``stats`` except ``seconds`` (and ``checker`` says ``"fast"`` in both). ``exact=True`` stays
batch-only (:func:`harness.checker.check`).

What is global and why (everything else lives and dies with its session):

- the open invoke of each process (pairing, as :func:`harness.history.pair_ops`);
- per live session its ops, and a token -> live sessions index (an owner lookup for a read
  of another session showing that turn);
- per retired session, one compact row per non-failed append
  (:mod:`~harness.checker.owner_table`, ~80 bytes per append): the only state that grows
  with the run, and what ``cross-session-bleed`` needs: a turn can bleed into a read long
  after its own session was dropped;
- per writer, the highest ``n`` of its ``w<writer>.<n>|`` turns appended so far: a turn a
  read shows that no session appended is a phantom only once nobody can append it later;
  until then the session is held (kept whole, judged at :meth:`~StreamChecker.finish`);
- the violations that can still be kept: the first ``CAP_PER_KIND`` of each kind in
  batch order (session rank, then discovery), which is a superset of what the batch
  checker keeps under both caps. Totals count everything.

A session is judged once retired and nothing of it can change: no invoke of it open on a
process that may still complete it, and its rank (batch order: the session's first op to
close) known. An invoke whose process will send nothing more (:meth:`process_ended`: it was
killed and is never reused) is final: as in the batch pairing it is an op never completed.
"""

from __future__ import annotations

import time
from collections.abc import Hashable
from dataclasses import dataclass, field
from typing import Any

from harness.checker.evidence import CAP_PER_KIND, CAP_TOTAL, Evidence
from harness.checker.exact import Prover
from harness.checker.fast import judge_session
from harness.checker.ops import INF, Pair, SessionOps
from harness.checker.owner_table import RetiredOwners, writer_of
from harness.checker.result import CheckResult, Violation
from harness.checker.setup import KIND as SETUP_RACE
from harness.checker.setup import setup_race
from harness.checker.turns import COMP, INV, index_appends
from harness.errors import HarnessError
from harness.history import Event

__all__ = ["StreamChecker", "StreamError"]

_BUCKETS = {"append": "appends", "read": "reads", "snapshot": "snapshots",
            "rollback": "rollbacks", "list_snapshots": "lists"}
#: Violations :meth:`StreamChecker.violations_so_far` holds between calls (the rest counted).
LIVE_CAP = CAP_TOTAL


#: The share of a streaming check's time its exact decisions may take beyond their first
#: 30 s (:class:`~harness.checker.exact.Prover`): a session past it keeps the fast verdict.
STREAM_SHARE = 0.25
#: A cold start's failed opens rank after every session (the batch check adds them last).
SETUP_RANK = 1 << 60


class StreamError(HarnessError):
    """The caller broke the feeding contract (an event of a session already judged)."""


@dataclass(slots=True)
class _Live:
    """One session not judged yet: its pairs by kind, in batch order."""

    name: str
    rank: int | None = None
    ops: SessionOps = field(init=False)
    #: Open invokes on processes that may still complete them.
    open: int = 0
    #: Invokes whose process ended: placed last, by index (``pair_ops`` at the end).
    final: list[Event] = field(default_factory=list)
    retired: bool = False
    held: bool = False

    def __post_init__(self) -> None:
        self.ops = SessionOps(self.name)


class StreamChecker:
    """Feed events in merged order (:meth:`feed`), retire sessions when no op can touch
    them (:meth:`retire`), read new violations as they are found
    (:meth:`violations_so_far`) and the verdict at the end (:meth:`finish`)."""

    def __init__(self, owners: RetiredOwners | None = None, prover: Prover | None = None) -> None:
        self._t0 = time.perf_counter()
        #: decides each session the fast rules pass, as it is judged (the batch check's too)
        self.prover = prover if prover is not None else Prover(share=STREAM_SHARE)
        self._events = 0
        self._ops = 0
        self._rank = 0
        self._pending: dict[object, Event] = {}
        self._live: dict[str, _Live] = {}
        self._judged: set[str] = set()
        self._live_tokens: dict[str, list[str]] = {}
        self.retired_owners = owners if owners is not None else RetiredOwners()
        self._writer_max: dict[int, int] = {}
        self._totals: dict[str, int] = {}
        self._cands: dict[str, list[tuple[int, int, Violation]]] = {}
        self._seq = 0
        self._new: list[Violation] = []
        self._sessions = 0
        self._ambiguous = 0
        self._conflicts = 0
        self._finishing = False
        #: Final invokes of ended processes that belong to no session (counted as ops).
        self._final_junk: list[Event] = []

    # -- feeding ---------------------------------------------------------------------------

    def feed(self, e: Event) -> None:
        """One event of the merged history, in order (``Event.index`` = position)."""
        self._events += 1
        p = e.process
        try:
            hash(p)
        except TypeError:  # an unhashable process: junk, not an op (as pair_ops)
            return
        if e.type == "invoke":
            if isinstance(e.session, str) and e.session in self._judged:
                raise StreamError(f"event {e.index}: session {e.session!r} was already judged")
            prev = self._pending.get(p)
            self._pending[p] = e
            if prev is not None:
                self._close(prev, None)
            self._opened(e)
            return
        inv = self._pending.pop(p, None)
        if inv is not None:
            self._close(inv, e)
        elif e.f == "open":
            race = setup_race(e)
            if race is not None:  # ranked after every session, as the batch check adds it
                self._totals[SETUP_RACE] = self._totals.get(SETUP_RACE, 0) + 1
                self._candidate(SETUP_RANK + e.index, Violation(SETUP_RACE, None, race[1], (e,)))

    def retire(self, session: str) -> None:
        """No op can still touch ``session``: judge it as soon as its open ops are settled.
        A session with no event yet is not known: retiring it does nothing (it is judged
        at :meth:`finish` if events of it come after all)."""
        live = self._live.get(session)
        if live is None:
            return
        live.retired = True
        self._maybe_judge(live)

    def process_ended(self, process: int | str) -> None:
        """``process`` sends no more events (killed and never reused): its open invoke, if
        any, is an op never completed. The process id must not appear again."""
        inv = self._pending.pop(process, None)
        if inv is None:
            return
        live = self._session_of(inv)
        if live is None:
            self._final_junk.append(inv)
            return
        live.open -= 1
        live.final.append(inv)
        if inv.f == "append" and _appends((inv, None), _token(inv)):
            self._index_token(live, _token(inv))
        self._maybe_judge(live)

    def retained(self) -> dict[str, int]:
        """What the checker holds now: live (and held) sessions and their ops, the open
        invokes, the retired owner table (rows and bytes), the violations that can still
        be kept. Only ``owner_rows``/``owner_bytes`` and ``judged_sessions`` (one name
        per session) grow with the run."""
        return {
            "live_sessions": len(self._live),
            "held_sessions": sum(1 for lv in self._live.values() if lv.held),
            "live_ops": sum(lv.ops.count() + len(lv.final) for lv in self._live.values()),
            "live_tokens": len(self._live_tokens),
            "open_invokes": len(self._pending),
            "judged_sessions": len(self._judged),
            "owner_rows": len(self.retired_owners),
            "owner_whole_rows": self.retired_owners.whole,
            "owner_bytes": self.retired_owners.nbytes(),
            "candidates": sum(len(c) for c in self._cands.values()),
        }

    def violations_so_far(self) -> tuple[Violation, ...]:
        """Violations found since the last call (at most ``LIVE_CAP``; all are counted
        in :meth:`finish`), in the order found."""
        out, self._new = tuple(self._new), []
        return out

    def finish(self) -> CheckResult:
        """Judge every session left and return the verdict of ``check(all events)``."""
        self._finishing = True
        # As pair_ops: the invokes open at the end (ended processes' included) come last,
        # by index; they give a rank to a session none of whose ops had closed.
        ends = [*self._pending.values(), *self._final_junk]
        for live in self._live.values():
            ends.extend(live.final)
            live.final = []
            live.open = 0
        self._pending.clear()
        self._final_junk = []
        for inv in sorted(ends, key=lambda ev: ev.index):
            self._ops += 1
            owner = self._session_of(inv)
            if owner is not None:
                if owner.rank is None:
                    owner.rank = self._next_rank()
                self._bucket(owner, inv, None)
        for live in sorted(self._live.values(), key=lambda lv: lv.rank if lv.rank is not None else INF):
            live.retired = True
            self._judge(live)
        return self._result()

    # -- pairing -----------------------------------------------------------------------------

    def _opened(self, inv: Event) -> None:
        live = self._session_of(inv, create=True)
        if live is not None:
            live.open += 1
        v = inv.value
        if inv.f == "append" and (type(v) is list or type(v) is tuple) and len(v) == 2 \
                and type(v[1]) is str:
            wn = writer_of(v[1])
            if wn is not None:
                w, n = wn
                if n > self._writer_max.get(w, -1):
                    self._writer_max[w] = n

    def _close(self, inv: Event, comp: Event | None) -> None:
        self._ops += 1
        live = self._session_of(inv)
        if live is None:
            if isinstance(inv.session, str) and inv.session in self._judged:
                raise StreamError(f"event {inv.index}: an op of session {inv.session!r} "
                                  "completed after the session was judged")
            return
        live.open -= 1
        if live.rank is None:
            live.rank = self._next_rank()
        self._bucket(live, inv, comp)
        self._maybe_judge(live)

    def _bucket(self, live: _Live, inv: Event, comp: Event | None) -> None:
        attr = _BUCKETS.get(inv.f) if type(inv.f) is str else None
        if attr is None:
            return
        getattr(live.ops, attr).append((inv, comp))
        if attr == "appends" and _appends((inv, comp), _token(inv)):
            self._index_token(live, _token(inv))

    def _index_token(self, live: _Live, token: str) -> None:
        names = self._live_tokens.setdefault(token, [])
        if live.name not in names:
            names.append(live.name)

    def _session_of(self, inv: Event, create: bool = False) -> _Live | None:
        s = inv.session
        if not isinstance(s, str):
            return None
        live = self._live.get(s)
        if live is None and create and s not in self._judged:
            live = self._live[s] = _Live(s)
        return live

    def _next_rank(self) -> int:
        self._rank += 1
        return self._rank

    # -- judging -----------------------------------------------------------------------------

    def _maybe_judge(self, live: _Live) -> None:
        if live.retired and not live.held and live.open == 0 and live.rank is not None:
            self._judge(live)

    def _judge(self, live: _Live) -> None:
        so = live.ops
        if live.final:
            for inv in sorted(live.final, key=lambda ev: ev.index):
                self._bucket(live, inv, None)
            self._ops += len(live.final)
            live.final = []
        turns = index_appends(so.appends)
        found = Evidence(cap_per_kind=CAP_PER_KIND, cap_total=1 << 62)
        amb = conf = 0
        # proven first (raw pairs, the chain or a short search): every turn its reads show
        # is its own, and the fast rules, being sound, would pass it
        if not self.prover.prove_first(so):
            lookup = _Lookup(self, live.name)
            amb, conf = judge_session(so, turns, lookup, found)
            if lookup.unsettled and not self._finishing:
                live.held = True  # a turn nobody appended yet may still be: judge at finish
                return
            if found.count() == 0:
                self.prover.judge(so, found)
        assert live.rank is not None
        self._sessions += 1
        self._ambiguous += amb
        self._conflicts += conf
        for kind, n in found.totals.items():
            self._totals[kind] = self._totals.get(kind, 0) + n
        for v in found.kept:
            self._candidate(live.rank, v)
        del self._live[live.name]
        self._judged.add(live.name)
        sid = self.retired_owners.session(live.name, live.rank)
        for tok, rec in turns.recs.items():
            names = self._live_tokens.get(tok)
            if names is not None:
                if live.name in names:
                    names.remove(live.name)
                if not names:
                    del self._live_tokens[tok]
            self.retired_owners.add(tok, sid, (rec[INV], rec[COMP]))

    def _candidate(self, rank: int, v: Violation) -> None:
        self._seq += 1
        if len(self._new) < LIVE_CAP:
            self._new.append(v)
        cands = self._cands.setdefault(v.kind, [])
        cands.append((rank, self._seq, v))
        if len(cands) > 2 * CAP_PER_KIND:
            cands.sort(key=lambda c: (c[0], c[1]))
            del cands[CAP_PER_KIND:]

    def _result(self) -> CheckResult:
        # The batch checker's choice under both caps, replayed in batch order (rank, then
        # discovery); the first CAP_PER_KIND of each kind in that order always contain it.
        found = Evidence()
        every = sorted((c for cs in self._cands.values() for c in cs), key=lambda c: (c[0], c[1]))
        for _, _, v in every:
            found.add(v.kind, v.session, ("stream", len(found.kept), found.count()), v.message, v.events)
        found.totals = dict(self._totals)
        total = sum(self._totals.values())
        stats: dict[str, Any] = {
            "sessions": self._sessions,
            "ambiguous_sessions": self._ambiguous,
            "read_conflicts": self._conflicts,
            "violations_total": total,
            "violations_by_kind": dict(self._totals),
            "exact": self.prover.stats(),
            "checker": "fast+exact",
            "events": self._events,
            "ops": self._ops,
            "seconds": round(time.perf_counter() - self._t0, 6),
        }
        return CheckResult(valid=total == 0, violations=found.violations(), stats=stats,
                           totals=dict(self._totals))


class _Lookup:
    """The owner of a turn for one session being judged: the lowest-ranked session with a
    non-failed append of it, retired or live; ``unsettled`` when a session may still
    append it later (the answer could change)."""

    def __init__(self, sc: StreamChecker, session: str) -> None:
        self._sc = sc
        self._session = session
        self.unsettled = False

    def of(self, token: str) -> tuple[str, Pair] | None:
        sc = self._sc
        if not sc._finishing and (not _settled(sc, token) or any(
                inv.f == "append" and _appends((inv, None), token) for inv in sc._pending.values())):
            self.unsettled = True  # an append of it may still come, or still fail
        best: tuple[Hashable, str, Pair] | None = None
        old = sc.retired_owners.of(token)
        if old is not None:
            best = ((old[0], 0), old[1], old[2])
        for name in sc._live_tokens.get(token, ()):
            live = sc._live[name]
            key = (live.rank if live.rank is not None else INF, 0)
            if best is None or key < best[0]:  # type: ignore[operator]
                pair = next(p for p in [*live.ops.appends, *((i, None) for i in live.final)]
                            if _appends(p, token))
                best = (key, name, pair)
        return None if best is None else (best[1], best[2])


def _token(inv: Event) -> str:
    """The token of an append invoke, or ``""`` if its value is not ``[role, token]``."""
    v = inv.value
    if (type(v) is list or type(v) is tuple) and len(v) == 2 and type(v[1]) is str:
        return str(v[1])
    return ""


def _appends(pair: Pair, token: str) -> bool:
    """Whether the op is a non-failed, well-formed append of ``token``."""
    v = pair[0].value
    return ((type(v) is list or type(v) is tuple) and len(v) == 2 and type(v[0]) is str
            and v[1] == token and (pair[1] is None or pair[1].type != "fail"))


def _settled(sc: StreamChecker, token: str) -> bool:
    """No session can append ``token`` later: its writer already went past it."""
    wn = writer_of(token)
    return wn is not None and wn[1] <= sc._writer_max.get(wn[0], -1)
