"""The order tree: the tree of turns that every read of a correct store's session is a path of.

The invariant it rests on (tokens unique, appends, snapshots and rollbacks atomic): the
turns that precede turn ``t`` in *any* state that contains ``t`` are exactly the state just
before ``t`` was appended. Proof sketch: appends only add after ``t``; a rollback to a
snapshot holding ``t`` restores a state that, by induction on time, has that same prefix.
So all reads of a correct store are root paths of one tree in which each turn has one
parent, and two reads that disagree about what precedes a turn prove a violation.

The tree is built incrementally, reads in completion order. A read that is a prefix of an
already verified read costs one C-level list comparison; only turns new to the tree are
checked one by one (provenance, role, appended-after-the-read, order against real time),
so each turn is checked once however many reads show it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from operator import itemgetter
from typing import Any

from harness.checker.evidence import Evidence
from harness.checker.ops import NEG, Pair, describe, short
from harness.checker.turns import COMP, HI, INV, LO, ROLE, AppendRec, OwnerLookup, TurnIndex
from harness.history import Event

__all__ = ["BAD", "CLEAN", "CONFLICT", "Obs", "OrderTree", "read_tokens"]

_token = itemgetter(1)
#: A read with at most this many turns new to the tree skips the general slow path.
_NEW_MAX = 16

#: Status of an observed read: a verified path / disagrees with the tree / has bad turns.
CLEAN, CONFLICT, BAD = 0, 1, 2

#: ``(read invoke, read ok, value as a list of [role, token] lists)``; the value of a read
#: that is a path of the tree is rebuilt from the tree's own turn objects (equal content).
Obs = tuple[Event, Event, list[Any]]

#: ``(number of the read that defined it, position, max invoke time over its path)``.
Node = tuple[int, int, int]


def read_tokens(v: object) -> list[str] | None:
    """The tokens of a read value, or None if it is not a list of ``[role, token]`` strings."""
    if type(v) is not list and type(v) is not tuple:
        return None
    toks: list[str] = []
    for item in v:
        if (type(item) is not list and type(item) is not tuple) or len(item) != 2:
            return None
        role, tok = item
        if type(role) is not str or type(tok) is not str:
            return None
        toks.append(tok)
    return toks


def _quick_tokens(v: object) -> list[Any] | None:
    """``[item[1] for item in v]`` at C speed, unchecked (None if that is impossible)."""
    if type(v) is not list:
        return None
    try:
        return list(map(_token, v))
    except (TypeError, IndexError, KeyError):
        return None


#: How many times a turn was appended, in words (more than twice: "N times").
_TIMES = {0: "never", 1: "once", 2: "twice"}


class OrderTree:
    """Builds the session's tree from its reads (:meth:`build`) and reports what a read
    proves on its own: ``unreadable``, ``duplicate-turn``, ``phantom-turn``,
    ``cross-session-bleed`` and ``reordered-turns`` against real time. Disagreements
    between reads are kept in ``conflicts`` and reported by
    :func:`~harness.checker.conflicts.report_conflicts` after the required turns are
    checked, unless a more precise violation already blames one of the reads."""

    def __init__(self, session: str, turns: TurnIndex, owners: OwnerLookup, found: Evidence) -> None:
        self.session = session
        self.turns = turns
        self.owners = owners
        self.found = found
        self.nodes: dict[str, Node] = {}
        self.obs: list[Obs] = []
        self.status: list[int] = []
        #: ``(read number, position, token)`` where a read's path left the tree.
        self.conflicts: list[tuple[int, int, str]] = []
        #: The verified prefix :meth:`_known_prefix` found, made of the tree's own turn
        #: objects (whose tokens have their hashes cached: later set operations are cheap).
        self._prefix: list[Any] = []
        #: token -> ``(W, P, read number)`` for a turn first shown by a read that completed
        #: before its append did (see :mod:`~harness.checker.required`).
        self.read_witness: dict[str, tuple[int, int, int]] = {}

    def build(self, reads: Sequence[Pair]) -> None:
        """Grow the tree from the session's reads (in completion order)."""
        obs, status, nodes = self.obs, self.status, self.nodes
        degraded = self.turns.ambiguous
        for inv, comp in reads:
            if comp is None or comp.type != "ok":
                if comp is not None and comp.type == "fail":
                    self._unreadable(inv, comp, f"raised {comp.error or 'an error'}")
                continue
            v = comp.value
            if not degraded and type(v) is list:
                n = len(v)
                last = v[-1] if n else None
                if type(last) is list and len(last) == 2 and type(last[1]) is str:
                    node = nodes.get(last[1])
                    if node is not None and node[1] == n - 1:
                        # the whole read is a path already: one C-level comparison
                        canon = obs[node[0]][2][:n]
                        if canon == v:
                            obs.append((inv, comp, canon))
                            status.append(CLEAN)
                            continue
                k = self._known_prefix(v)
                if k == n:
                    obs.append((inv, comp, self._prefix))
                    status.append(CLEAN)
                    continue
                if k >= 0 and self._extend(inv, comp, v, k):
                    continue
            self._slow(inv, comp, v)

    def _known_prefix(self, v: list[Any]) -> int:
        """The length of ``v``'s verified prefix when it leaves at most _NEW_MAX turns new to the
        tree (the common case: a read a little after another), else -1."""
        nodes, n = self.nodes, len(v)
        for k in range(n, max(n - _NEW_MAX - 1, 0), -1):
            last = v[k - 1]
            if type(last) is not list or len(last) != 2:
                return -1
            tok = last[1]
            node = nodes.get(tok) if type(tok) is str else None
            if node is not None:
                if node[1] != k - 1:
                    return -1
                pref = self.obs[node[0]][2][:k]
                if pref != (v if k == n else v[:k]):
                    return -1
                self._prefix = pref
                return k
        self._prefix = []
        return 0 if n <= _NEW_MAX else -1

    def _extend(self, inv: Event, comp: Event, v: list[Any], k: int) -> bool:
        """Add ``v``'s new turns (after the verified prefix of length ``k``, none of them in
        the tree yet) if each is plainly fine; False to leave the read to :meth:`_slow`."""
        recs, nodes = self.turns.recs, self.nodes
        ml = nodes[v[k - 1][1]][2] if k else NEG
        hi = comp.time
        if k == len(v) - 1:  # the common case: one new turn
            item = v[k]
            if type(item) is not list or len(item) != 2:
                return False
            role, tok = item
            rec = recs.get(tok) if type(tok) is str else None
            if rec is None or rec[ROLE] != role or rec[LO] > hi or ml > rec[HI]:
                return False
            rno = len(self.obs)
            self._prefix.append(item)
            self.obs.append((inv, comp, self._prefix))
            self.status.append(CLEAN)
            nodes[tok] = (rno, k, rec[LO] if rec[LO] > ml else ml)
            if rec[HI] > hi:
                self._seen_first(tok, rec, inv, comp, rno)
            return True
        new: list[tuple[str, int]] = []
        for item in v[k:]:
            if type(item) is not list or len(item) != 2:
                return False
            role, tok = item
            rec = recs.get(tok) if type(tok) is str else None
            if rec is None or rec[ROLE] != role or rec[LO] > hi or ml > rec[HI]:
                return False
            if rec[LO] > ml:
                ml = rec[LO]
            new.append((tok, ml))
        if len(new) > 1 and len({t for t, _ in new}) != len(new):
            return False
        rno = len(self.obs)
        self._prefix.extend(v[k:])
        self.obs.append((inv, comp, self._prefix))
        self.status.append(CLEAN)
        for i, (tok, m) in enumerate(new, start=k):
            nodes[tok] = (rno, i, m)
            if recs[tok][HI] > hi:
                self._seen_first(tok, recs[tok], inv, comp, rno)
        return True

    def _seen_first(self, tok: str, rec: AppendRec, inv: Event, comp: Event, rno: int) -> None:
        """The first read showing ``tok`` completed before its append did (or the append's
        outcome is unknown): that read is the turn's witness (see :mod:`~harness.checker.required`)."""
        self.read_witness[tok] = (inv.time if inv.time > rec[LO] else rec[LO], comp.time, rno)

    # -- the slow path: a read with turns new to the tree ---------------------------------

    def _slow(self, inv: Event, comp: Event, v: Any) -> None:
        toks = _quick_tokens(v)
        k = 0
        if toks is not None:
            # only the part that is not a verified path needs its format checked
            k = 0 if self.turns.ambiguous else self._verified(v, toks)
            tail = v[k:]
            if read_tokens(tail) is None or any(type(x) is not list for x in tail):
                toks = None
        if toks is None:
            toks = read_tokens(v)
            if toks is None:
                self._unreadable(inv, comp, "returned malformed data")
                return
            v = [list(x) for x in v]
            k = 0 if self.turns.ambiguous else self._verified(v, toks)
        rno = len(self.obs)
        self.obs.append((inv, comp, v))
        self.status.append(CLEAN)
        dups = self._check_duplicates(inv, comp, toks)
        bad = self._check_turns(inv, comp, v, toks, k, dups) or bool(dups)
        if bad or self.turns.ambiguous:
            self.status[rno] = BAD
            return
        nodes = self.nodes
        for i in range(k, len(toks)):
            if toks[i] in nodes:
                self.status[rno] = CONFLICT
                self.conflicts.append((rno, i, toks[i]))
                return
        recs = self.turns.recs
        ml = nodes[toks[k - 1]][2] if k else NEG
        for i in range(k, len(toks)):
            t = toks[i]
            lo = recs[t][LO]
            if lo > ml:
                ml = lo
            nodes[t] = (rno, i, ml)
            if recs[t][HI] > comp.time:
                self._seen_first(t, recs[t], inv, comp, rno)

    def _verified(self, v: list[Any], toks: list[Any]) -> int:
        """The length of the longest prefix of ``v`` that is already a path of the tree
        (prefixes of a path are paths, so galloping then bisecting finds it)."""
        n = len(toks)
        if self._is_path(v, toks, n):
            return n
        good, bad, step = 0, n, 1
        cand = n - 1
        while cand > 0:
            if self._is_path(v, toks, cand):
                good = cand
                break
            bad = cand
            cand -= step
            step *= 2
        while bad - good > 1:
            mid = (good + bad) // 2
            if self._is_path(v, toks, mid):
                good = mid
            else:
                bad = mid
        return good

    def _is_path(self, v: list[Any], toks: list[Any], k: int) -> bool:
        if k == 0:
            return True
        tok = toks[k - 1]
        node = self.nodes.get(tok) if type(tok) is str else None
        if node is None or node[1] != k - 1:
            return False
        ref = self.obs[node[0]][2]
        return bool(ref[:k] == v[:k])

    def _check_duplicates(self, inv: Event, comp: Event, toks: list[str]) -> set[str]:
        """Report turns shown more often than appended; returns them."""
        if len(set(toks)) == len(toks):
            return set()
        bad: set[str] = set()
        for tok, n in Counter(toks).items():
            if n > 1 and n > self.turns.allowed(tok):
                bad.add(tok)
                app = self.turns.recs.get(tok)
                times = self.turns.allowed(tok)  # a retried append may show once per append
                self.found.add(
                    "duplicate-turn",
                    self.session,
                    tok,
                    f"The read by {describe(comp)} shows turn {short(tok)} {n} times, but it "
                    f"was appended {_TIMES.get(times, f'{times} times')} to session {self.session!r}.",
                    [app[INV] if app else None, app[COMP] if app else None, inv, comp],
                    blame=comp,
                )
        return bad

    def _check_turns(
        self, inv: Event, comp: Event, v: list[Any], toks: list[str], k: int, dups: set[str]
    ) -> bool:
        """Check the turns of ``v`` from position ``k`` on; True if any is bad."""
        recs = self.turns.recs
        nodes = self.nodes
        bad = False
        ml = nodes[toks[k - 1]][2] if k else NEG
        for i in range(k, len(toks)):
            t = toks[i]
            if t in dups and toks.index(t) != i:
                continue  # a repeat: duplicate-turn covers it
            rec = recs.get(t)
            if rec is None:
                self._unknown(inv, comp, t)
                bad = True
                continue
            if rec[ROLE] != v[i][0] and t not in self.turns.multi:
                self._phantom(inv, comp, t, f"with role {v[i][0]!r}, but it was appended "
                              f"with role {rec[ROLE]!r}", rec[INV])
                bad = True
            if rec[LO] > comp.time:
                self._phantom(inv, comp, t, "although its append was invoked only after that "
                              "read completed", rec[INV])
                bad = True
            if ml > rec[HI]:
                self._order(inv, comp, toks, i)
                bad = True
            if rec[LO] > ml:
                ml = rec[LO]
        return bad

    # -- reporting ------------------------------------------------------------------------

    def _unreadable(self, inv: Event, comp: Event, what: str) -> None:
        self.found.add(
            "unreadable",
            self.session,
            ("read", comp.index),
            f"The read of session {self.session!r} by {describe(comp)} {what}.",
            [inv, comp],
            blame=comp,
        )

    def _phantom(self, inv: Event, comp: Event, tok: str, why: str, *app: Event | None) -> None:
        self.found.add(
            "phantom-turn",
            self.session,
            tok,
            f"The read by {describe(comp)} shows turn {short(tok)} {why}.",
            [*app, inv, comp],
            blame=comp,
        )

    def _unknown(self, inv: Event, comp: Event, tok: str) -> None:
        if self.turns.malformed:
            return  # the turn may be that of an append whose value we could not read
        other = self.owners.of(tok)
        if other is not None:
            name, (ainv, acomp) = other
            self.found.add(
                "cross-session-bleed",
                self.session,
                tok,
                f"Turn {short(tok)} was appended to session {name!r} by {describe(ainv)}, "
                f"but the read of session {self.session!r} by {describe(comp)} shows it.",
                [ainv, acomp, inv, comp],
                blame=comp,
            )
            return
        failed = self.turns.failed.get(tok)
        if failed is not None:
            why = f"although its append by {describe(failed[0])} failed"
            self._phantom(inv, comp, tok, why, *failed)
        else:
            self._phantom(inv, comp, tok, "that nobody appended")

    def _order(self, inv: Event, comp: Event, toks: list[str], i: int) -> None:
        recs = self.turns.recs
        t = toks[i]
        hi = recs[t][HI]
        # Tokens nobody appended (phantoms, reported on their own) carry no times: skip them.
        a = next((x for x in toks[:i] if x in recs and recs[x][LO] > hi), None)
        if a is None:  # defensive: ``ml`` always comes from an appended turn before ``t``
            return
        ra, rt = recs[a], recs[t]
        self.found.add(
            "reordered-turns",
            self.session,
            (a, t),
            f"Turn {short(t)} was acknowledged at event {rt[COMP].index if rt[COMP] else '?'}"
            f" before turn {short(a)} was appended by {describe(ra[INV])}, yet the read by "
            f"{describe(comp)} shows {short(a)} before {short(t)}.",
            [rt[INV], rt[COMP], ra[INV], inv, comp],
            blame=comp,
        )
