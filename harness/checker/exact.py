"""The exact checker: per session, search for a linearization of its ops within a budget.

Complete where the fast checker is only sound: a session is valid iff some order of its
ops that respects real time makes every result what the model (:mod:`~harness.checker.model`)
says. Partitioned per session (sessions are independent), searched by
:mod:`~harness.checker.linearize`. Past the time budget the verdict is unknown (``valid``
None), never a pass. A session that has no linearization is explained by what the fast
checker proves on it, else by one violation whose kind is read off the op the search could
not place and the state it expected there.
"""

from __future__ import annotations

import resource
import sys
import time
from bisect import bisect_right
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from harness.checker import smt
from harness.checker.chain import UNORDERED, Backward, Chain, decide
from harness.checker.checkpoints import not_found
from harness.checker.evidence import Evidence
from harness.checker.frontier import begin as begin_frontier
from harness.checker.jit import begin as begin_jit
from harness.checker.lazy import certify
from harness.checker.linearize import Outcome, Run, advance, linearize, resume, stop
from harness.checker.linearize import begin as begin_eager
from harness.checker.model import GHOST, ModelOp, new_op, replay
from harness.checker.ops import INF, NEG, SessionOps, describe, group_by_session, short
from harness.checker.plain import prove
from harness.checker.result import CheckResult
from harness.history import Event

__all__ = ["EAGER_STEPS", "JIT_STEPS", "QUICK_PER_OP", "QUICK_STEPS", "SESSION_STEPS", "Prover", "Tally",
           "Undecided", "check_exact", "complete", "judge", "replays", "session_ops"]


def check_exact(
    events: Sequence[Event], *, budget_s: float = 30.0, skip: Collection[str] = ()
) -> CheckResult:
    """Decide every session (but those in ``skip``), ``budget_s`` seconds in all, each
    session at most twice a fair share of what is left. ``valid`` is
    False if some session has no linearization (or has an unreadable read), None if some
    session could not be decided in time, else True: every session was proven."""
    t0 = time.monotonic()
    deadline = t0 + budget_s
    sessions, n_ops = group_by_session(events)
    found = Evidence()
    tally = Tally()
    todo = [name for name in sessions if name not in skip]
    for n, name in enumerate(todo):
        now = time.monotonic()
        if now > deadline:
            tally.give_up(sessions[name])
            continue
        # a fair share of what is left (twice that: easy sessions leave most of theirs),
        # so one hard session cannot starve all the others
        share = min(deadline, now + 2 * (deadline - now) / (len(todo) - n))
        judge(sessions[name], found, share, tally)
    valid: bool | None = found.count() == 0
    if valid and tally.unknown:
        valid = None
    stats: dict[str, Any] = {
        "checker": "exact",
        "ops": n_ops,
        "sessions": len(sessions),
        **tally.stats(),
        "budget_s": budget_s,
        "seconds": round(time.monotonic() - t0, 6),
        "violations_by_kind": dict(found.totals),
    }
    return CheckResult(valid=valid, violations=found.violations(), stats=stats,
                       totals=dict(found.totals))


@dataclass(slots=True)
class Tally:
    """What the exact judge did over a run's sessions: how many it proved linearizable
    (without search, or by search), refuted, and could not decide in time (by name)."""

    proven: int = 0
    by_chain: int = 0
    refuted: int = 0
    explored: int = 0
    unknown: list[str] = field(default_factory=list)
    undecided: list[Undecided] = field(default_factory=list)

    def give_up(self, so: SessionOps, ops: Sequence[ModelOp] = (), out: Outcome | None = None) -> None:
        """Name ``so`` as undecided, with how far the searches got (``out``: the one that
        placed the most of ``ops``; None when no search ran)."""
        self.unknown.append(so.session)
        self.undecided.append(Undecided.of(so, ops, out))

    def stats(self) -> dict[str, Any]:
        return {
            "sessions_proven": self.proven,
            "sessions_proven_without_search": self.by_chain,
            "sessions_refuted": self.refuted,
            "sessions_searched": self.proven - self.by_chain + self.refuted,
            "sessions_unknown": sorted(self.unknown),
            "sessions_unknown_detail": [u.to_dict() for u in sorted(
                self.undecided, key=lambda u: u.session)[:MAX_DETAIL]],
            "states_explored": self.explored,
        }


#: Undecided sessions described one by one in the stats (the others are named).
MAX_DETAIL = 20


@dataclass(frozen=True, slots=True)
class Undecided:
    """A session the exact decision did not finish within its budget, and where it stood:
    of the session's ``ops`` (as the model sees them), ``placed`` is the most that one
    search put in an order that explains every result so far (a consistent prefix; 0
    when no search ran), and the window still ambiguous runs from event ``from_event``
    (the invocation of the op that search could not place next; the session's first
    event when none ran) to ``to_event`` (the session's last)."""

    session: str
    ops: int
    placed: int
    from_event: int
    to_event: int

    @classmethod
    def of(cls, so: SessionOps, ops: Sequence[ModelOp], out: Outcome | None) -> Undecided:
        pairs = [p for ps in (so.appends, so.reads, so.snapshots, so.rollbacks, so.lists) for p in ps]
        first = min((inv.index for inv, _ in pairs), default=0)
        last = max((inv.index if comp is None else comp.index for inv, comp in pairs), default=0)
        stuck = out.stuck if out is not None else None
        start = stuck.inv.index if stuck is not None and stuck.inv is not None else first
        return cls(so.session, len(ops) or so.count(), out.depth if out is not None else 0,
                   start, last)

    def to_dict(self) -> dict[str, Any]:
        return {"session": self.session, "ops": self.ops, "ops_placed": self.placed,
                "share_placed": round(self.placed / self.ops, 3) if self.ops else 0.0,
                "window": {"from_event": self.from_event, "to_event": self.to_event}}


#: The default check's budget for one session's frontier search, in each of its two
#: orders of trying (:mod:`~harness.checker.frontier`; steps: states of its
#: configurations, 10-35 microseconds each here), beside :data:`JIT_STEPS` of the
#: just-in-time search and :data:`EAGER_STEPS` of the eager one. On the recorded
#: 16-writer smoke sessions that need a search past the first slice, the first order
#: decides all but one within 41,000 steps; that one took 137,000 in the other order.
#: Counted in steps, not seconds, so that a verdict does not depend on the machine's
#: speed or load. A session the searches cannot decide within them keeps the fast rules'
#: verdict and is named as not proven (two such sessions, of 167 and 462 ops, spent 12
#: and 23 s of CPU here before that).
SESSION_STEPS = 150_000
#: The eager search's share (:mod:`~harness.checker.linearize` on the eager model; 2-4
#: microseconds a step here), run beside the others: a session whose snapshots
#: could have taken many contents, which no read tells apart (a session with no read but
#: the final one), leaves the lazy model's searches with thousands of candidate states,
#: where the eager one guesses a content and goes on (415 steps for one that the three
#: others had not decided in 1,300,000). Of 7 sessions of 120 mixed runs on Redis
#: (2026-11-27) that the searches left undecided with 500,000, the eager search alone
#: proved 2, with few reads (21 of 255 ops, 36 of 363), in 2,158,561 and 1,411,416 steps
#: (5.2 and 3.4 s here); no search alone decided the other 5 in 15 s. A session no search
#: decides costs that much more (one of 1,103 ops: 14 s of CPU, now 20 s).
EAGER_STEPS = 2_500_000
#: The first, short try: the same walk on the lazy model (it proves, never refutes), at
#: most :data:`QUICK_PER_OP` steps per op plus 256, and :data:`QUICK_STEPS` in all. Where it
#: proves a session cheaply it does so in 1-2 steps per op (most sessions of 2-4 writers,
#: many of 8); past that the frontier search is the quicker (2-4 steps per op at 8-16
#: writers, each a little dearer), so the walk is cut short there (``bench/exact.py``).
QUICK_STEPS = 10_000
QUICK_PER_OP = 2
#: The frontier search's first steps per op, alone, before the fast rules run: a session
#: they prove needs no fast rules (they would pass it). The frontier search decides most
#: sessions alone, and beside the other searches it gets only its share of the time: of
#: the sessions of 24 smoke recordings (2-16 writers) and 100 mixed runs
#: (``tests/e2e/test_many_seeds.py``, 2026-11-27) that 6 steps per op leave undecided, 12
#: in all, it decided every one alone within 7-110 steps per op (0.03-1.4 s), and another
#: search was quicker on 3, by at most 0.09 s; 11 take at most 50. A session they do not
#: decide is searched on, after the fast rules, from where they stopped (each frontier
#: search's step cap counts these); one the fast rules refute costs only these.
FRONTIER_FIRST_PER_OP = 50
#: The just-in-time search's share (:mod:`~harness.checker.jit`; model steps, 25-35
#: microseconds each here), run beside the frontier search (on those sessions it decided
#: 4 of 7 within 1,000,000 steps, one where the frontier search needs five times more).
JIT_STEPS = 300_000
#: The searches run side by side (:func:`_searches`), resumed in turn, each for its share
#: of :data:`QUANTUM_S` seconds a turn (counted over the turns, so a search that overran
#: its time waits): the frontier search trying ops earliest completion first, the
#: just-in-time one, the frontier search trying ops earliest invocation first, the eager
#: one. Shares of time, not of steps: a step of the just-in-time search costs ten times one
#: of the eager search, and a share of steps left a session the first search decides in
#: 0.5 s taking 4.8 s while the just-in-time search spent its share beside it. Which search
#: decides first depends on the machine's speed; the verdict does not (each is exact, and
#: one stops only at its step cap or the deadline).
SHARES = (2, 1, 1, 1)
QUANTUM_S = 0.01
#: What the searches of one session may add to the process's peak memory (MB), together:
#: past it they stop and the session is undecided. Without it each grows to its own
#: bound, four at once (on an undecided session of 32 writers, 2,104 ops, alone for 15 s:
#: the frontier search +358 MB, +332 MB in the other order, the just-in-time one +168 MB,
#: the eager one +508 MB), and ``--exact`` passed 1.2 GB.
SEARCH_MEMORY_MB = 400


#: Past this mean number of ops pending at an invocation (the op itself included), the
#: lazy walk's short try is skipped and the frontier search's first steps come at once.
#: Over the sessions of 24 smoke recordings of 2-16 writers (2026-11-28, night; each
#: session the walk and then the frontier search where it fails, against the frontier
#: search alone, the least of 3 wall times): below 1.2 the walk first is the quicker
#: (263 sessions: 194 ms against 217), from 1.2 to 1.4 the frontier search alone (103
#: sessions: 180 ms against 249), past 1.4 by far (234: 1.8 s against 1.0). (On
#: 2026-11-26, with a slower frontier search, the cut was 1.4: 4.05 s of CPU in all
#: against 5.00 s at 2.0.) The generated nightly mix of 32 processes, at 1.5-1.8, loses
#: a little by it (2.40x to 2.81x the fast rules' time, measured with the cut at 1.4).
QUICK_MAX_OVERLAP = 1.2


def _quick_walk(ops: Sequence[ModelOp], deadline: float) -> Outcome:
    """The lazy walk's short try (:data:`QUICK_STEPS`), or an undecided outcome without
    a try where ops overlap too much for it to be quick (:data:`QUICK_MAX_OVERLAP`)."""
    if _overlap(ops) > QUICK_MAX_OVERLAP:
        return Outcome(None)
    return linearize(ops, deadline, min(QUICK_STEPS, QUICK_PER_OP * len(ops) + 256), lazy=True)


def _overlap(ops: Sequence[ModelOp]) -> float:
    """The mean number of ops pending at an op's invocation, itself included (an op that
    returns at the instant another is invoked does not count): the ops invoked by then
    (1, 2, ..., n over the ops in order of invocation) less those returned by then."""
    n = len(ops)
    his = sorted([o.hi for o in ops if o.hi != INF])
    returned = sum([bisect_right(his, o.lo) for o in ops])
    return (n * (n + 1) // 2 - returned) / max(n, 1)


@dataclass(frozen=True, slots=True)
class _Tried:
    """What :meth:`Prover.prove_first` built for a session it could not prove: its ops,
    the short lazy search's outcome (None: not run) and the frontier search it began
    (None: not begun; else to be resumed where it stopped)."""

    ops: list[ModelOp]
    quick: Outcome | None
    frontier: Run | None = None


@dataclass(slots=True)
class Prover:
    """Exact decisions, one session at a time, within a budget: ``session_steps`` search
    steps at most for one (None: no limit but time), ``total_s`` seconds spent deciding in
    all, plus ``share`` of the time since the first decision (a streaming run decides its
    sessions while its workers run: a share of the run's time, so that a long run keeps
    deciding sessions without the checker taking the machine from the workers). What it
    did is in ``tally``; ``stats()`` goes into a check's stats as ``"exact"``."""

    total_s: float = 30.0
    session_steps: int | None = SESSION_STEPS
    share: float = 0.0
    tally: Tally = field(default_factory=lambda: Tally())
    _start: float = 0.0
    _spent: float = 0.0
    _tried: tuple[str, _Tried] | None = None

    def judge(self, so: SessionOps, found: Evidence) -> bool | None:
        """:func:`judge` one session the fast rules passed, within its share of the budget
        (reusing what :meth:`prove_first` built for it)."""
        now = self._begin()
        tried = self._tried[1] if self._tried is not None and self._tried[0] == so.session else None
        self._tried = None
        try:
            return judge(so, found, self._deadline(now), self.tally, self.session_steps,
                         tried=tried)
        finally:
            self._spent += time.monotonic() - now

    def prove_first(self, so: SessionOps) -> bool:
        """Try to prove a session before the fast rules run on it: one without rollbacks on
        its raw pairs (:func:`harness.checker.plain.prove`), one with rollbacks by the chain
        or a short search (the lazy walk, :func:`_quick_walk`), its proof checked as
        :func:`judge` checks it. True when proven: the fast rules, being sound, would pass
        it, so they need not run. False leaves it to the fast rules (they say in words what
        is wrong) and then :meth:`judge`, which reuses the ops and the search built here."""
        now = self._begin()
        try:
            if not so.rollbacks:
                ok = prove(so)
                if ok:
                    self.tally.proven += 1
                    self.tally.by_chain += 1
                return ok
            return self._quick(so, self._deadline(now))
        finally:
            self._spent += time.monotonic() - now

    def _quick(self, so: SessionOps, deadline: float) -> bool:
        scratch = Evidence()  # what is wrong is for the fast rules to say, then judge()
        try:
            ops = session_ops(so, scratch)
        except _Unmodelled:
            return False
        if scratch.count():
            return False
        decided = decide(ops, deadline)
        if isinstance(decided, Chain):
            _certified_chain(so.session, decided, ops)
            self.tally.proven += 1
            self.tally.by_chain += 1
            return True
        out = run = None
        if decided is None and time.monotonic() <= deadline:  # no time left: no search
            out = _quick_walk(ops, deadline)
            if out.ok is None:
                # the frontier search's first steps, which decide most sessions the walk
                # does not (most within 3 steps per op); kept, to be resumed, if they do not
                run = begin_frontier(ops)
                got = advance(run, deadline, min(FRONTIER_FIRST_PER_OP * len(ops) + 256,
                                                 self.session_steps or 1 << 62))
                if got is not None:
                    out, run = got, None
            if out.ok:
                _certified(so.session, ops, out)
                self.tally.proven += 1
                self.tally.explored += out.explored
                return True
        self._tried = (so.session, _Tried(ops, out, run))
        return False

    def _begin(self) -> float:
        now = time.monotonic()
        if not self._start:
            self._start = now
        return now

    def _deadline(self, now: float) -> float:
        left = self.total_s + self.share * (now - self._start) - self._spent
        if self.session_steps is None:  # time only: one hard session leaves the rest half
            left = max(min(left, 1.0), left / 2)
        return now + max(left, 0.0)

    def stats(self) -> dict[str, Any]:
        return {**self.tally.stats(), "budget_s": self.total_s,
                "session_steps": self.session_steps}


def judge(so: SessionOps, found: Evidence, deadline: float, tally: Tally,
          steps: int | None = None, tried: _Tried | None = None) -> bool | None:
    """Decide one session by ``deadline`` (a ``time.monotonic()`` value) and within
    ``steps`` steps of the frontier search (None: no limit but time): True when it is
    proven linearizable (its linearization replayed through the model), False when it has
    none (its violations added to ``found``), None when undecided (named in ``tally``). A
    session without a rollback that must take effect is decided without search
    (:mod:`~harness.checker.chain`); the others by the searches of :func:`_searches`.
    ``tried``: what :meth:`Prover.prove_first` built for it (its ops, its short search)."""
    if tried is not None:
        ops = tried.ops
    else:
        before = found.count()
        try:
            ops = session_ops(so, found)
        except _Unmodelled:
            tally.give_up(so)
            return None
        if found.count() > before:
            tally.refuted += 1
            return False  # an unreadable read or listing: reported by session_ops
    decided = decide(ops, deadline)
    if isinstance(decided, Chain):
        _certified_chain(so.session, decided, ops)
        tally.proven += 1
        tally.by_chain += 1
        return True
    if decided is None:
        if time.monotonic() > deadline:  # no time left for a search
            tally.give_up(so, ops)
            return None
        tries = _searches(ops, deadline, steps, tried.quick if tried is not None else None,
                          tried.frontier if tried is not None else None)
        out = tries[-1]
        tally.explored += sum(t.explored for t in tries)
        if out.ok is None:
            tally.give_up(so, ops, max(tries, key=lambda t: t.depth))
            return None
        if out.ok:
            _certified(so.session, ops, out)
            tally.proven += 1
            return True
        _explain(so, ops, out, found)
    else:
        _explain(so, ops, decided, found)
    tally.refuted += 1
    return False


def _searches(ops: Sequence[ModelOp], deadline: float, steps: int | None,
              quick: Outcome | None, frontier: Run | None = None) -> list[Outcome]:
    """The searches one session gets, in order, until one decides it (the last outcome
    is the verdict; ``ok`` None: undecided). First a short walk on the lazy model
    (``quick``, if :meth:`Prover.prove_first` ran it; proofs only, the quickest on most
    sessions). Then four searches run side by side, resumed in turn: the depth-first
    frontier search (many writers, long rollbacks) trying ops earliest completion first,
    one slice ahead; the just-in-time one (it walks the events in order: no backtracking
    across hundreds of ops when the other loses its way); the frontier search trying ops
    earliest invocation first (where an op that ran for long belongs decides its steps),
    looking ahead from its first step at the reads only a rollback explains (finding them
    costs more than most sessions' whole search, but a session that gets here is not one
    of those);
    and the eager Wing-Gong search (snapshot contents guessed where a snapshot is placed:
    quick where the lazy model's candidates pile up, and often the quicker to refute).
    Each gets its share of the time (:data:`SHARES`, :data:`QUANTUM_S`), the first
    search twice the others'. Which one a session needs cannot be told beforehand (each
    decides some sessions in a small part of the steps the others take), and so no budget
    is spent in one go on a session another decides cheaply. The default check stops each
    at its share (``steps`` for each frontier search, :data:`JIT_STEPS`, :data:`EAGER_STEPS`);
    all stop, undecided, once they have added :data:`SEARCH_MEMORY_MB` to the peak;
    ``check --exact`` (``steps`` None) goes on until the deadline, or, for a session the
    solver covers (:mod:`~harness.checker.smt`, the ``smt`` extra), until half of the time
    is gone, and hands the session to the solver for the rest. ``frontier``: the
    first search, begun by :meth:`Prover.prove_first`, which it did not decide (resumed
    here where it stopped; ``quick`` is then the walk's outcome)."""
    out = quick if quick is not None else _quick_walk(ops, deadline)
    tries = [out]
    if out.ok is not None:
        return tries
    caps = (steps, JIT_STEPS, EAGER_STEPS) if steps is not None else (1 << 62,) * 3
    limit = _peak_mb() + SEARCH_MEMORY_MB
    # ``check --exact`` with the solver installed, on a session with rollbacks it covers:
    # the searches get half the time, the solver what they leave (:mod:`~harness.checker.smt`;
    # the default check, with its step caps, leaves an undecided session to the searches)
    last = (steps is None and any(o.kind in ("rollback", "rollback?") for o in ops)
            and smt.available() and smt.supported(ops))
    end, deadline = deadline, (deadline + time.monotonic()) / 2 if last else deadline
    # [run, share of the time, step cap, seconds used]
    runs: list[list[Any]] = [
        [frontier if frontier is not None else begin_frontier(ops), SHARES[0], caps[0], 0.0],
        [begin_jit(ops), SHARES[1], caps[1], 0.0],
        [begin_frontier(ops, early=True, ahead=0), SHARES[2], caps[0], 0.0],
        [begin_eager(ops), SHARES[3], caps[2], 0.0],
    ]
    turn = 0
    while runs:
        turn += 1
        for entry in list(runs):
            run, share, cap, used = entry
            start = time.monotonic()
            got, capped = resume(run, min(deadline, start + turn * share * QUANTUM_S - used), cap)
            entry[3] = used + time.monotonic() - start
            if got is None and not capped and time.monotonic() <= deadline:
                if _peak_mb() <= limit:
                    continue  # its time is used up: the others' turn
                for other in runs:  # out of memory: all stop, undecided but for the solver
                    tries.append(stop(other[0]))
                runs = []
                break
            runs.remove(entry)
            got = got if got is not None else stop(run)
            tries.append(got)
            if got.ok is not None:
                for other in runs:
                    other[0].close()
                return tries
    if last:
        tries.append(_solved(ops, end, max(tries, key=lambda t: t.depth)))
    return tries


def _solved(ops: Sequence[ModelOp], deadline: float, deepest: Outcome) -> Outcome:
    """The solver's verdict on a session the searches left undecided; a refutation is
    explained by the deepest dead end a search reached (the op it could not place there)."""
    got = smt.decide(ops, deadline)
    if got.ok is False:
        return replace(deepest, ok=False, explored=0)
    return got


def _peak_mb() -> float:
    """The process's peak resident memory so far, in MB (``ru_maxrss``: bytes on macOS,
    KB elsewhere)."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / (1 << 20 if sys.platform == "darwin" else 1 << 10)


def _certified_chain(session: str, chain: Chain, ops: Sequence[ModelOp]) -> None:
    """A chain is a proof only if its orders replay and hold every completed op."""
    if (not replays(chain.order) or not replays(chain.ids)
            or not complete([*chain.order, *chain.ids], ops)):
        raise AssertionError(f"session {session!r}: a chain that does not replay")


def _certified(session: str, ops: Sequence[ModelOp], out: Outcome) -> None:
    """A search's linearization is a proof only if it replays through the eager model
    (independently of the search) and holds every completed op."""
    order = [ops[k] for k in out.order]
    if not complete(order, ops) or not replays(certify(order, out.path) if out.path else order):
        raise AssertionError(f"session {session!r}: a linearization that does not replay")


def complete(order: Sequence[ModelOp], ops: Sequence[ModelOp]) -> bool:
    """Whether ``order`` holds every op of ``ops`` that completed (an op of unknown
    outcome may be left out: it need not have taken effect), each once."""
    placed = {o.id for o in order}
    return len(placed) == len(order) and placed.issuperset([o.id for o in ops if o.hi != INF])


def replays(order: Sequence[ModelOp]) -> bool:
    """Whether ``order`` is a linearization, checked independently of the search that
    found it: no op in it completed before an op placed earlier was invoked, and the model
    (:func:`~harness.checker.model.replay`, the same as folding
    :func:`~harness.checker.model.step`) explains every result in that order."""
    latest = NEG
    for op in order:
        if op.hi < latest:
            return False
        if op.lo > latest:
            latest = op.lo
    return bool(replay(order))


def session_ops(so: SessionOps, found: Evidence) -> list[ModelOp]:
    """The session's ops as the search sees them; unreadable reads and listings are
    reported to ``found`` and left out. Raises ``_Unmodelled`` for an op that may have taken
    effect but whose value breaks the history's format (the verdict is then unknown)."""
    # one string per appended turn, shared by every read that shows it: reads compare and
    # hash turns that are the same objects (a role changed by the store makes another turn)
    roles: dict[str, str] = {}  # token -> role, turn
    turns: dict[str, str] = {}
    appends: list[_Append] = []
    once: set[str] = set()
    twice: set[str] = set()  # turns appended more than once (retries)
    unknown: set[str] = set()  # turns of appends of unknown outcome
    for inv, comp in so.appends:
        if comp is not None and comp.type == "fail":
            continue
        v = inv.value
        if ((type(v) is not list and type(v) is not tuple) or len(v) != 2
                or type(v[0]) is not str or type(v[1]) is not str):
            raise _Unmodelled(f"append with value {v!r}")
        role, tok = v
        turn = f"{role}{_SEP}{tok}"  # the turn as the model holds it
        if tok not in turns:
            roles[tok], turns[tok] = role, turn
        if turn in once:
            twice.add(turn)
        once.add(turn)
        if comp is not None and comp.type == "ok":
            appends.append((inv, comp, turn, comp.time))
        else:
            unknown.add(turn)
            appends.append((inv, comp, turn, INF))
    reads: list[_Read] = []
    last: Any = ()  # the last read's items and turns: most reads extend the one before
    last_out: tuple[str, ...] = ()
    for inv, comp in so.reads:
        if comp is not None and comp.type in ("ok", "fail"):
            out = None
            if comp.type == "ok":
                items, k = comp.value, len(last)
                if k and type(items) is list and items[:k] == last:  # equal items, same turns
                    tail = _turns(items[k:], roles, turns)
                    out = None if tail is None else last_out + tail
                else:
                    k, out = 0, _turns(items, roles, turns)
                if out is not None:
                    last, last_out = items, out
            if out is None:
                _unreadable(so.session, "read", inv, comp, found)
            else:
                reads.append((inv, comp, k, out))  # k: as the read before
    rest: list[_Raw] = []  # snapshots, rollbacks and listings

    def add(kind: str, inv: Event, comp: Event | None, hi: int, arg: Any = None,
            out: Any = None) -> None:
        rest.append((kind, inv.time, hi, arg, out, inv, comp))

    created = _snapshot_ops(so, add)
    referenced = _rollback_ops(so, add)
    targeted = set(referenced)  # ids a rollback may restore: only their content matters
    # the last listing's ids, as returned and as a set: about half the listings return
    # what the one before did, and then share its set (checked, and compared, once)
    last_v: Any = None
    listed: frozenset[str] = frozenset()
    for inv, comp in so.lists:
        if comp is not None and comp.type in ("ok", "fail"):
            v = comp.value
            if comp.type == "ok" and last_v is not None and v == last_v:
                add("list", inv, comp, comp.time, out=listed)
                continue
            ok = comp.type == "ok" and type(v) is list and set(map(type, v)) <= _STR
            if not ok:
                _unreadable(so.session, "list_snapshots", inv, comp, found)
            else:
                referenced.update(v)
                last_v, listed = v, frozenset(v)
                add("list", inv, comp, comp.time, out=listed)
    return _tighten(appends, reads, rest, twice, unknown, tuple(sorted(referenced - created)),
                    frozenset(targeted))


def _tighten(appends: list[_Append], reads: list[_Read], rest: list[_Raw], twice: set[str],
             unknown: set[str], unexplained: tuple[str, ...],
             targeted: frozenset[str]) -> list[ModelOp]:
    """The ops (the appends, the reads, then the rest, in that order) as equivalent ops
    that are cheaper to search. ``twice``: the turns appended more than once; ``unknown``:
    those of appends of unknown outcome; ``unexplained``: the ids referred to that no
    snapshot is known to have created; ``targeted``: the ids a rollback may restore.

    An unknown-outcome append whose turn no read shows may as well never have happened
    (drop it: every state differs only by that turn, which no read shows); one whose turn
    a read shows must have taken effect before that read completed (that is its return).
    An append whose turn a read shows can only have taken effect on the state that read
    shows before the turn (:mod:`~harness.checker.order_tree` proves why): that is its ``out``;
    and it took effect before that read returned, which, where the read returned first,
    is its return (every linearization places it before the read, so before every op
    invoked after the read returned: no linearization is lost).
    An unknown-outcome snapshot can only have created a fresh id when no id lacks its
    creator, which no later op can observe but a listing would contradict: drop it. A
    snapshot whose id no rollback targets keeps no content (``snapshot-id``): only a
    rollback reads a snapshot's content, so the states it would tell apart are the same
    to every op, and the search merges them. An acknowledged append no read shows appends
    :data:`~harness.checker.model.GHOST`, the same turn for all of them: no op tells two
    such turns apart (no read shows one, no append's parent holds one), so states that
    differ only in which of them they hold, or in their order, are one for the search."""
    # the first read showing t: its turns, t's place, its return
    where: dict[str, tuple[tuple[str, ...], int, int]] = {}
    # the earliest return of a read showing t, for the turns of unknown-outcome appends
    # (it is their return): a few, so each read is intersected with them (an acknowledged
    # append is bounded by the return of the first read showing its turn, ``where``)
    first_seen: dict[str, int] = {}
    for _, shown, k, out_ in reads:
        # the turns a read shows first: not among the first k, which the read before
        # it (in this order, so looked at already) showed too; most reads show few more
        # (4 at most in 5,771 of the 8,078 reads of ten recorded 16-writer runs,
        # 2026-11-29), looked up one by one, cheaper than making a set of them
        if len(out_) - k <= 4:
            for i in range(k, len(out_)):
                if out_[i] not in where:  # a turn shown twice: its first place
                    where[out_[i]] = (out_, i, shown.time)
        else:  # many: which are new, found at C speed first
            new = set(out_[k:] if k else out_).difference(where)
            if len(new) > 4:
                for i, t in enumerate(out_[k:], k):
                    if t in new and t not in where:
                        where[t] = (out_, i, shown.time)
            else:
                for t in new:
                    where[t] = (out_, out_.index(t), shown.time)
        if unknown:
            at = shown.time
            for t in unknown.intersection(out_):
                if at < first_seen.get(t, INF):
                    first_seen[t] = at
    out: list[ModelOp] = []
    for inv, comp, turn, hi in appends:
        arg, got = turn, None
        # a turn appended twice (a retry): which of the two a read shows is not known
        if turn not in twice:
            if hi == INF:
                seen = first_seen.get(turn)
                if seen is None:
                    continue
                hi = max(seen, inv.time)
            src = where.get(turn)
            if src is None:  # acknowledged, and no read shows it: one ghost like any other
                arg = GHOST
            else:
                got = src[0][:src[1]]
                if src[2] < hi:  # a read that shows it returned first: it took effect by then
                    hi = max(src[2], inv.time)
        out.append(new_op(len(out), "append", inv.time, hi, arg, got, inv, comp))
    for r_inv, r_comp, _, got in reads:
        out.append(new_op(len(out), "read", r_inv.time, r_comp.time, None, got, r_inv, r_comp))
    for kind, lo, hi, what, got, inv, comp in rest:
        if kind == "snapshot?":
            if not unexplained:
                continue
            what = unexplained
        elif kind == "snapshot" and got not in targeted:
            kind = "snapshot-id"
        out.append(new_op(len(out), kind, lo, hi, what, got, inv, comp))
    return out


#: An append before :func:`_tighten`: (inv, comp, turn, hi).
_Append = tuple[Event, "Event | None", str, int]
#: A read before :func:`_tighten`: (inv, comp, k, turns; the first k as the read before's).
_Read = tuple[Event, Event, int, tuple[str, ...]]
#: Another op before :func:`_tighten`: (kind, lo, hi, arg, out, inv, comp).
_Raw = tuple[str, int, int, Any, Any, Event, "Event | None"]


def _turns(items: Any, roles: dict[str, str], turns: dict[str, str]) -> tuple[str, ...] | None:
    """A read's turns as the model holds them, the appended turns' own strings reused
    (``roles`` and ``turns`` by token); None if the read is not a list of ``[role, token]``
    strings. This runs on every item of every read. (A plain loop: the same checks made in
    passes at C speed, ``map`` and sets over the items, took 1.3-1.5x its time at every
    length from 3 items to 50, 2026-11-29.)"""
    if type(items) is not list and type(items) is not tuple:
        return None
    out = []
    for item in items:
        if (type(item) is not list and type(item) is not tuple) or len(item) != 2:
            return None
        role, tok = item
        if type(role) is not str or type(tok) is not str:
            return None
        turn = turns.get(tok)
        out.append(turn if turn is not None and roles[tok] == role else f"{role}{_SEP}{tok}")
    return tuple(out)


_STR = {str}


#: Between a turn's role and token in the one string the model holds (a role changed by
#: the store makes another turn).
_SEP = "\x1f"


class _Unmodelled(Exception):
    """An op that may have taken effect but whose effect the model cannot know (a value
    that breaks the history's format): the session's verdict is unknown."""


def _snapshot_ops(so: SessionOps, add: Any) -> set[str]:
    created: set[str] = set()
    for inv, comp in so.snapshots:
        if comp is not None and comp.type == "fail":
            continue
        if comp is not None and comp.type == "ok" and type(comp.value) is str:
            created.add(comp.value)
            add("snapshot", inv, comp, comp.time, out=comp.value)
        else:
            add("snapshot?", inv, comp, INF)
    return created


def _rollback_ops(so: SessionOps, add: Any) -> set[str]:
    referenced: set[str] = set()
    for inv, comp in so.rollbacks:
        sid = inv.value
        if type(sid) is not str:
            if comp is None or comp.type != "fail":
                raise _Unmodelled(f"rollback to {sid!r}")
            continue
        if comp is None or comp.type not in ("ok", "fail"):
            referenced.add(sid)
            add("rollback?", inv, comp, INF, arg=sid)
        elif comp.type == "ok":
            referenced.add(sid)
            add("rollback", inv, comp, comp.time, arg=sid)
        elif not_found(comp.error):
            add("rollback-missing", inv, comp, comp.time, arg=sid)
    return referenced


def _unreadable(session: str, what: str, inv: Event, comp: Event, found: Evidence) -> None:
    how = f"raised {comp.error or 'an error'}" if comp.type == "fail" else "returned malformed data"
    found.add(
        "unreadable",
        session,
        (what, comp.index),
        f"The {what} of session {session!r} by {describe(comp)} {how}.",
        [inv, comp],
        blame=comp,
    )


def _explain(so: SessionOps, ops: list[ModelOp], why: Outcome | Backward | str,
             found: Evidence) -> None:
    """Report why the session has no linearization. What the fast checker proves on the
    session (a few ops that show the violation, named by its precise kind) comes first;
    then the pair of ops the chain found in the wrong order; then the search's deepest
    dead end, which only shows where the search gave up."""
    from harness.checker.fast import check_sessions

    fast = Evidence()
    check_sessions({so.session: so}, fast)
    for v in fast.violations():
        if v.kind != "unreadable":  # session_ops reported those already
            found.add(v.kind, v.session, ("fast", v.message), v.message, v.events)
    if any(k != "unreadable" for k in fast.totals):
        return
    if isinstance(why, Backward):
        x = why.later
        if x.kind == "read" or (x.comp is not None and x.comp.type == "ok"):
            _backward(so.session, why, found)
            return
        why = UNORDERED  # an unknown append's place comes from a read: let the search say
    session = so.session
    if isinstance(why, Outcome) and why.stuck is None:  # a refutation naming no op
        why = UNORDERED
    if isinstance(why, str):  # UNORDERED or "ids": where does a search get stuck?
        why = linearize(ops, time.monotonic() + 5.0)
        if why.ok is not False:  # pragma: no cover - the chain proved there is no order
            evs = [e for o in ops[:2] for e in (o.inv, o.comp)]
            found.add("incompatible-order", session, ("exact", "chain"),
                      f"No order of the {len(ops)} operations on session {session!r} that "
                      f"respects real time explains their results.", evs, blame=None)
            return
    op = why.stuck
    assert op is not None and why.state is not None
    turns = why.state[0]
    ids = why.state[1] if len(why.state) == 4 else {k for k, _ in why.state[1]}  # lazy or eager
    kind, detail = _kind(op, turns, set(ids), ops)
    who = describe(op.comp) if op.comp is not None else f"op {op.id}"
    found.add(
        kind,
        session,
        ("exact", op.id),
        f"No order of the {len(ops)} operations on session {session!r} that respects real "
        f"time explains their results: after placing {why.depth} of them the search could "
        f"not place the {op.kind.rstrip('?')} by {who}, which {detail}.",
        [op.inv, op.comp],
        blame=op.comp,
    )


def _backward(session: str, why: Backward, found: Evidence) -> None:
    """The sentence for two ops in the wrong order (:class:`~harness.checker.chain.Backward`):
    ``later`` (a read, or an acknowledged append) completed before ``earlier`` was
    invoked, yet the reads put it after."""
    x, y, w = why.later, why.earlier, why.witness
    x_inv, x_ok, y_inv = _ev(x.inv), _ev(x.comp), _ev(y.inv)
    evs = [x_inv, x_ok, y_inv, y.comp]
    if x.kind == "append":
        xt = short(_token(x))
        if y.kind == "read":
            kind = "lost-turn"
            msg = (f"Turn {xt} was acknowledged ({describe(x_ok)}) before the read by "
                   f"{describe(_ev(y.comp))} was invoked (event {y_inv.index}), yet that read "
                   f"does not contain it, and no rollback can explain it.")
        else:
            yt = short(_token(y))
            w_inv, w_ok = _ev(w.inv if w else None), _ev(w.comp if w else None)
            evs += [w_inv, w_ok]
            if w is not None and x.arg in w.out:
                kind = "reordered-turns"
                msg = (f"Turn {xt} was acknowledged ({describe(x_ok)}) before the append of "
                       f"turn {yt} was invoked ({describe(y_inv)}), yet the read by "
                       f"{describe(w_ok)} shows {yt} before {xt}.")
            else:
                kind = "lost-turn"
                msg = (f"Turn {xt} was acknowledged ({describe(x_ok)}) before the append of "
                       f"turn {yt} was invoked ({describe(y_inv)}), yet the read by "
                       f"{describe(w_ok)} shows {yt} and does not contain {xt}, and no "
                       f"rollback can explain it.")
    elif y.kind == "read":
        lost = short(_bare(x.out[len(y.out)]))  # y shows a prefix of what x showed
        kind = "lost-turn"
        msg = (f"Turn {lost} was shown by the read by {describe(x_ok)}, which completed before "
               f"the read by {describe(_ev(y.comp))} was invoked (event {y_inv.index}), yet "
               f"that later read does not contain it, and no rollback can explain it.")
    else:
        kind = "phantom-turn"
        msg = (f"Turn {short(_token(y))} is shown by the read by {describe(x_ok)}, which "
               f"completed before that turn's append was invoked ({describe(y_inv)}).")
    found.add(kind, session, ("chain", x.id, y.id), msg, evs, blame=x_ok)


def _token(append: ModelOp) -> str:
    """The token an append op appended (its turn may be the ghost)."""
    return str(_ev(append.inv).value[1])


def _ev(e: Event | None) -> Event:
    """An event the op must have (an acknowledged op's completion, any op's invocation)."""
    assert e is not None
    return e


def _bare(turn: str) -> str:
    """The token of a model turn (role and token joined by :data:`_SEP`)."""
    return turn.split(_SEP)[-1]


def _kind(op: ModelOp, turns: tuple[str, ...], ids: set[str], ops: list[ModelOp]) -> tuple[str, str]:
    if op.kind == "read":
        got = op.out
        missing = [t for t in turns if t not in got]
        extra = [t for t in got if t not in turns]
        detail = f"returned {_seq(got)} where the model holds {_seq(turns)}"
        rb = any(o.kind.startswith("rollback") and o.kind != "rollback-missing" for o in ops)
        if not missing and not extra:
            return "reordered-turns", detail
        if missing:
            return ("bad-rollback" if rb else "lost-turn"), detail
        return ("bad-rollback" if rb else "phantom-turn"), detail
    if op.kind in ("list", "rollback-missing", "snapshot", "snapshot-id"):
        return "vanished-checkpoint", f"is inconsistent with the snapshots {_seq(sorted(ids))}"
    if op.kind == "rollback":
        return "bad-rollback", f"targets {short(op.arg)}, which the model does not hold"
    return "lost-turn", "cannot precede the results that followed it"


def _seq(xs: Any, limit: int = 6) -> str:
    xs = list(xs)
    body = ", ".join("<a turn no read shows>" if x == GHOST
                     else short(x.split(_SEP)[-1] if isinstance(x, str) else x, 24)
                     for x in xs[:limit])
    return f"[{body}{', …' if len(xs) > limit else ''}] ({len(xs)} item{'s' * (len(xs) != 1)})"
