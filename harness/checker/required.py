"""Required turns: the turns each read must contain, and those it must not.

A turn ``t`` has a *witness*: its append's ok, or the first read that showed it, whichever
completed first. ``P(t)`` is when the witness completed (t was in the session by then) and
``W(t)`` the earliest moment after which its presence is proven (the append's invoke, or
the later of that read's invoke and the append's invoke).

A read R must contain ``t`` when ``P(t) < R.lo`` and every rollback that can be the last
before R (:mod:`harness.checker.rollbacks`) either completed before ``W(t)`` (then it ran
before t was there: the *post* set, checked with one slice of the turns sorted by ``W``)
or restores a snapshot that certainly holds ``t``. Since a snapshot observes the state as a
read does, "certainly holds" is the same rule applied to the snapshot op (``K``).
A miss of the first kind is a ``lost-turn``, of the second a ``bad-rollback``.

After a rollback that is certainly the last before R and completed before R began, the
turns appended after its snapshot and before it are *doomed*: R showing one is a
``bad-rollback`` too.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Collection, Iterable
from operator import itemgetter

from harness.checker.evidence import Evidence
from harness.checker.ops import INF, NEG, describe, short
from harness.checker.order_tree import BAD, OrderTree
from harness.checker.rollbacks import Rollback, RollbackIndex
from harness.checker.turns import COMP, INV, LO
from harness.history import Event

__all__ = ["RequiredTurns"]

_token = itemgetter(1)
#: See :meth:`RequiredTurns._plan`.
_Plan = tuple[int, list[Rollback], int, "frozenset[str] | None", "set[str] | None"]
#: A read missing more turns than this is reported once, for the read.
_PER_TOKEN = 3


class RequiredTurns:
    """The required-turns check of one session (after its :class:`OrderTree` is built);
    :meth:`check` reports what it finds."""

    def __init__(
        self, session: str, tree: OrderTree, rbi: RollbackIndex | None, found: Evidence
    ) -> None:
        self.session = session
        self.tree = tree
        self.recs = tree.turns.recs
        self.rbi = rbi if rbi else None
        self.found = found
        self.P: dict[str, int] = {}
        self.W: dict[str, int] = {}
        self.seen_by: dict[str, int] = {}
        self._witnesses()
        self._kept: dict[str, frozenset[str]] = {}
        self._doomed: dict[int, set[str]] = {}
        self._plans: dict[tuple[int, int, int], _Plan] = {}
        self._atok: list[str] = []
        self._alo: list[int] = []
        if self.rbi is not None:
            self._compute_kept()

    def _witnesses(self) -> None:
        recs = self.recs
        P = self.P = {t: r[1] for t, r in recs.items() if r[1] != INF}
        W = self.W = {t: r[0] for t, r in recs.items() if r[1] != INF}
        for t, (w, p, rno) in self.tree.read_witness.items():
            W[t] = w
            P[t] = p
            self.seen_by[t] = rno
        self.wtok = sorted(W, key=W.__getitem__)
        self.wlo = list(map(W.__getitem__, self.wtok))

    # -- what a snapshot certainly holds ----------------------------------------------------

    def _compute_kept(self) -> None:
        """``K`` for every snapshot some rollback targets, in completion order (a snapshot
        whose ``K`` is needed before it is known counts as holding nothing)."""
        assert self.rbi is not None
        ids = {rb[2] for rb in self.rbi.ok + self.rbi.maybe if rb[2] in self.rbi.snaps}
        snaps = sorted(
            ((sid, self.rbi.snaps[sid]) for sid in ids if sid is not None),
            key=lambda x: x[1][1].time if x[1][1] is not None else INF,
        )
        for sid, (inv, comp) in snaps:
            assert comp is not None
            self._kept[sid] = frozenset(self._must_hold(inv.time, comp.time))

    def _must_hold(self, lo: int, hi: int) -> set[str]:
        z, cands = self.rbi.candidates(lo, hi) if self.rbi else (NEG, [])
        f = max((c[1] for c in cands), default=NEG)
        P = self.P
        out: set[str] = set()
        if f < lo:
            i = bisect_right(self.wlo, f)
            j = bisect_left(self.wlo, lo)
            out = {t for t in self.wtok[i:j] if P[t] < lo}
        kept = self._kept_by(cands)
        if kept:
            out.update(kept if z != NEG else (t for t in kept if P[t] < lo))
        return out

    def _kept_by(self, cands: list[Rollback]) -> frozenset[str] | None:
        """Turns every candidate's snapshot certainly holds (None: nothing is certain)."""
        if len(cands) == 1:
            sid = cands[0][2]
            return (self._kept.get(sid) or None) if sid is not None else None
        if not cands:
            return None
        acc: frozenset[str] | None = None
        for c in cands:
            k = self._kept.get(c[2]) if c[2] is not None else None
            if not k:
                return None
            acc = k if acc is None else acc & k
            if not acc:
                return None
        return acc

    # -- the reads --------------------------------------------------------------------------

    def check(self) -> None:
        """Check every read of the session that the order tree did not already reject."""
        if self.rbi is None:
            self._check_without_rollbacks()
            return
        status, P, wlo, wtok = self.tree.status, self.P, self.wlo, self.wtok
        plan = self._plan
        for rno, (inv, comp, v) in enumerate(self.tree.obs):
            if status[rno] == BAD:
                continue
            lo = inv.time
            z, cands, f, kept, doomed = plan(lo, comp.time)
            vset = set(map(_token, v))
            if f < lo:
                i = bisect_right(wlo, f)
                j = bisect_left(wlo, lo)
                if j > i and not vset.issuperset(wtok[i:j]):
                    # usually only appends still in flight when the read began
                    miss = [t for t in set(wtok[i:j]).difference(vset) if P[t] < lo]
                    if miss:
                        self._lost(rno, miss, max(cands, key=itemgetter(1)) if cands else None)
                if doomed and not vset.isdisjoint(doomed):
                    self._zombie(rno, cands[0], sorted(doomed & vset, key=self._first_witnessed))
            if kept and not vset.issuperset(kept):
                miss = [t for t in kept - vset if z != NEG or P[t] < lo]
                self._bad_rollback(rno, sorted(miss, key=self._first_witnessed), cands)

    def _check_without_rollbacks(self) -> None:
        status, P, wlo, wtok = self.tree.status, self.P, self.wlo, self.wtok
        for rno, (inv, _, v) in enumerate(self.tree.obs):
            if status[rno] == BAD:
                continue
            lo = inv.time
            j = bisect_left(wlo, lo)
            if j:
                vset = set(map(_token, v))
                if not vset.issuperset(wtok[:j]):
                    miss = [t for t in set(wtok[:j]).difference(vset) if P[t] < lo]
                    if miss:
                        self._lost(rno, miss, None)

    def _plan(self, lo: int, hi: int) -> _Plan:
        """What the rollbacks mean for an observation over ``[lo, hi]``: ``(Z, candidates,
        their latest completion, turns they all keep, turns the one candidate dooms)``.
        Observations between the same rollback events share one plan."""
        assert self.rbi is not None
        key = self.rbi.epoch(lo, hi)
        got = self._plans.get(key)
        if got is None:
            z, cands = self.rbi.candidates(lo, hi)
            f = max((c[1] for c in cands), default=NEG)
            doomed = self._doomed_by(cands[0]) if len(cands) == 1 else None
            got = self._plans[key] = (z, cands, f, self._kept_by(cands), doomed or None)
        return got

    def _doomed_by(self, rb: Rollback) -> set[str]:
        """Turns appended after rb's snapshot and before rb, and after every ok rollback
        that completed before rb began: gone once rb took effect. (Older turns appended
        after the snapshot are gone too, but an earlier rollback already removed them;
        leaving them out keeps this linear.)"""
        key = rb[3].index
        d = self._doomed.get(key)
        if d is None:
            d = set()
            rbi = self.rbi
            snap = rbi.snapshot_of(rb) if rbi is not None else None
            if rbi is not None and snap is not None and snap[1] is not None:
                if not self._alo:
                    lo_of = {t: self.recs[t][LO] for t in self.P}
                    self._atok = sorted(lo_of, key=lo_of.__getitem__)
                    self._alo = list(map(lo_of.__getitem__, self._atok))
                rlo, P = rb[0], self.P
                i = bisect_right(self._alo, max(snap[1].time, rbi.last_hi_before(rlo)))
                j = bisect_left(self._alo, rlo)
                d = {t for t in self._atok[i:j] if P[t] < rlo}
            self._doomed[key] = d
        return d

    # -- reporting --------------------------------------------------------------------------

    def _witness_events(self, t: str) -> tuple[list[Event | None], str]:
        rno = self.seen_by.get(t)
        if rno is not None:
            inv, comp, _ = self.tree.obs[rno]
            return [inv, comp], f"was seen by the read of {describe(comp)}"
        rec = self.recs[t]
        comp2 = rec[COMP]
        return [rec[INV], comp2], f"was acknowledged by {describe(comp2 or rec[INV])}"

    def _lost(self, rno: int, miss: list[str], last: Rollback | None) -> None:
        miss = [t for t in miss if not self.found.has("lost-turn", self.session, t)]
        if not miss:
            return
        miss.sort(key=self._first_witnessed)
        inv, comp, _ = self.tree.obs[rno]
        why = (
            f"no rollback on session {self.session!r} could run in between"
            if last is None
            else f"the last rollback that could precede the read ({describe(last[3])}) "
            f"completed before the turn was there"
        )
        rb_events = [] if last is None else [last[3], last[4]]
        report = miss if len(miss) <= _PER_TOKEN else miss[:1]
        for t in report:
            wev, wsay = self._witness_events(t)
            more = f" (nor {len(miss) - 1} other such turns)" if len(report) < len(miss) else ""
            self.found.add(
                "lost-turn",
                self.session,
                t,
                f"Turn {short(t)} {wsay}, but the read by {describe(comp)} (invoked after "
                f"that, at event {inv.index}) does not contain it{more}, and {why}.",
                [*wev, inv, comp, *rb_events],
                blame=comp,
            )
        for t in miss[len(report):]:
            self.found.reserve("lost-turn", self.session, t)

    def _first_witnessed(self, t: str) -> tuple[int, str]:
        """A sort key of turns: the earliest witnessed first, ties by the turn, so that the
        order is the same on every run (the turns come from sets, whose order follows the
        process's string hashing)."""
        return self.W[t], t

    def _bad_rollback(self, rno: int, miss: Collection[str], cands: list[Rollback]) -> None:
        """One violation per turn first found missing this way; a turn already reported
        lost (missing before the rollback was involved) is that problem, not a new one."""
        found, s = self.found, self.session
        miss = [t for t in miss
                if not found.has("lost-turn", s, t) and not found.has("bad-rollback", s, ("turn", t))]
        if not miss:
            return
        inv, comp, _ = self.tree.obs[rno]
        t = miss[0]
        for other in miss[1:]:
            found.reserve("bad-rollback", s, ("turn", other))
        wev, wsay = self._witness_events(t)
        rbs = "; ".join(self._say_rollback(c) for c in cands[:3])
        more = f" (and {len(miss) - 1} more turns)" if len(miss) > 1 else ""
        evs: list[Event | None] = [*wev, inv, comp]
        for c in cands[:3]:
            evs += [c[3], c[4], *self._snap_events(c)]
        self.found.add(
            "bad-rollback",
            self.session,
            ("turn", t),
            f"The read by {describe(comp)} lacks turn {short(t)}{more}, which {wsay}, "
            f"although every rollback that can be the last before that read restores a "
            f"snapshot holding the turn ({rbs}).",
            evs,
            blame=comp,
        )

    def _zombie(self, rno: int, rb: Rollback, shown: list[str]) -> None:
        inv, comp, _ = self.tree.obs[rno]
        t = shown[0]
        snap = self.rbi.snapshot_of(rb) if self.rbi else None
        rec = self.recs[t]
        sev = snap[1] if snap is not None else None
        self.found.add(
            "bad-rollback",
            self.session,
            ("read", comp.index),
            f"Turn {short(t)} was appended ({describe(rec[INV])}) after snapshot {short(rb[2])} "
            f"was taken (event {sev.index if sev else '?'}) and before the rollback to it by "
            f"{describe(rb[3])} completed, so the rollback should have removed it, yet the "
            f"later read by {describe(comp)} still shows it.",
            [rec[INV], rec[COMP], *self._snap_events(rb), rb[3], rb[4], inv, comp],
            blame=comp,
        )

    def _snap_events(self, rb: Rollback) -> Iterable[Event | None]:
        snap = self.rbi.snapshot_of(rb) if self.rbi else None
        return snap if snap is not None else ()

    def _say_rollback(self, rb: Rollback) -> str:
        snap = self.rbi.snapshot_of(rb) if self.rbi else None
        taken = f", taken at event {snap[1].index}" if snap and snap[1] else ""
        return f"the rollback by {describe(rb[3])} to snapshot {short(rb[2])}{taken}"
