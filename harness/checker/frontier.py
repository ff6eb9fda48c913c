"""The search for sessions whose rollbacks take effect: earliest deadline first, on sets of states.

A configuration is the set of ops placed so far and the set of lazy-model states they can
leave (:mod:`~harness.checker.lazy`: which content each rollback restored stays open until
a result rules it out). From a configuration, the ops that may come next are the pending
ones that no pending op must precede: invoked no later than the earliest completion among
the pending ops. The search tries them earliest completion first, so an op that runs for
a long time (a rollback that took 20 ms among hundreds of short ops) is placed where the
results need it, not tried at every point on the way. A snapshot whose content a rollback
may restore is tried first, so that its window (the states it may have captured) opens as
early as it can. A listing, which ends the open windows, is tried in its place: tried
last while a window was open, it let ops that had run for hundreds of milliseconds (a
rollback among them) be placed before it on recorded 16-writer sessions, which the
results refuted only hundreds of ops on. That is an order of trying, not a
restriction: every candidate is tried before the configuration is given up, and each
configuration is explored once (a visited set on the placed ops and the states, Lowe's
memoization). An op whose outcome is unknown never
has to be placed: the search succeeds when only such ops are left.

Six reductions, each exact:

- what the listings and failed rollbacks say about the snapshot ids orders some ops before
  others in every linearization (:func:`_id_order`); an op is tried only once those are
  placed;
- an observer (a read, a listing, a failed rollback to a missing id) that *every* state
  of the set allows is placed at once with no alternative, when no snapshot window is
  open: every op that must precede it is placed, so in any linearization from here it can
  move to the front, where it sees the same state (one that only some of the states allow
  may belong after ops that turn the others into it; with a window open, placing it
  could end the window early: both are tried like any op);
- the states are a set, so the search branches on the order of the ops only, and states
  one snapshot's candidates apart are one (:func:`~harness.checker.lazy.merge`: rollbacks
  whose restored contents no read has told apart yet make a product of choices, 182-364
  states per configuration on a recorded 16-writer session, one or two merged);
- states apart only in lists no op left can show are one (:func:`_unseen_as_one`: a
  rollback's choice that snapshots copy and rollbacks restore but no read shows);
- a configuration whose states are each covered by those of a failed configuration with
  the same ops placed (the same but for fewer candidate contents, and for any content of
  a snapshot no rollback tried on the way from the failed one restores) is not explored
  (:func:`_covered`);
- a read (or an append whose parent a read showed) that only a rollback can explain,
  since no append that may be the last op to set the turns before it adds its last turn,
  needs the snapshot such a rollback restores to hold its list: a configuration in whose
  every state those snapshots' windows have closed without it is not explored
  (:func:`_unexplained`; a snapshot not taken yet, or whose window is open, may still
  take a list only if one of the ops that may set what it takes does, :func:`_takers`; a
  rollback that must be the last op to set the turns before one read is none of a read
  it cannot be the last before as well, :func:`_pinned`; turns that show the list already
  explain it only once nothing is left to come between, :func:`_may_explain`;
  looked at once the search has backed up a tenth of a time per
  op or 20 times, :data:`LOOKAHEAD_AFTER`, and from the start by the search the default
  check begins for a session its first steps did not decide; where it turns on, every
  such read is looked at on the path built until then, :func:`_stranded`); the search
  then backs up at once to the first configuration on its path that could not explain
  it either (:func:`_dead_from`; where several are lost, the first to be).

A proof's path (:func:`exact_path`) is built from the merged sets, keeping on the way
back the contents that later rollbacks restore.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Callable, Collection, Sequence
from itertools import accumulate, chain, compress
from operator import attrgetter, is_not, itemgetter, or_
from typing import Any

from harness.checker.lazy import LAZY_INIT, ROLLBACKS, entry_index, make_step, merge, rank
from harness.checker.linearize import OBSERVERS, Budget, Outcome, Run, drive
from harness.checker.model import GHOST, OP_KINDS, ModelOp
from harness.checker.ops import INF, NEG

__all__ = ["MAX_CONFIGURATIONS", "MAX_STATES", "begin", "exact_path", "search"]

#: Configurations the search remembers at most, whatever its budget: past them the
#: session is undecided (memory, not time, is then what would run out).
MAX_CONFIGURATIONS = 150_000
#: The fewest states a step must leave for those apart only in lists no op left can show
#: to be looked for (:func:`_unseen_as_one`): two or three are carried as cheaply, and a
#: read soon tells most apart. Over the sessions of 24 smoke recordings of 16 writers
#: (2026-11-29), the frontier search 0.97x the CPU it took looking at every set, 0.1% more
#: steps.
JOIN_FROM = 4
#: States one configuration may hold at most (choices no result has ruled out yet): one
#: with more is not explored, and the search goes on to prove the session another way, but
#: can then no longer refute it by trying every way (undecided where it would have said
#: no; the look-ahead still refutes it where the start itself cannot explain a read, which
#: no configuration explored or not changes), and no longer remembers failed
#: configurations to cover others with (one with fewer candidates may hold fewer states).
MAX_STATES = 20_000
#: Failed configurations remembered for each set of placed ops, turns, ids and open
#: windows, to be compared with by candidate contents (:func:`_covered`): the latest
#: ones (2 or 4 leave 10-40% more steps on the hard generated sessions; 64, no fewer steps than 16).
MAX_COVERING = 16

#: Backups per op after which the search looks ahead at the reads (and appends) whose
#: turns only a rollback can have set (:func:`_restoring`, :func:`_unexplained`); 0:
#: from the start. Where the search backs up, it cuts off the ways that cannot explain
#: them where a window closes, and backs up at once to where none could
#: (:func:`_dead_from`), not one op at a time; but finding them, and the look at every
#: step, cost the smoke recordings of 8-16 writers 10-60% more CPU from the start
#: (2026-11-28), where most sessions back up a few times at most. After a tenth of a
#: backup per op, on the recorded sessions of ``tests/checker/data`` (2026-11-28):
#: ``w8-restored`` 11,009 steps (67,996-73,433 after two per op, with the process's
#: string hashing), ``w16-s1-c`` 3,385 (9,665), ``w4-listing`` 8,911 (14,250), none
#: more; the default check of the 24 smoke recordings, 0.95-1.03x the CPU it took after
#: two per op (all 24 together, 1.00x).
LOOKAHEAD_AFTER = 0.1
#: ... or after this many backups, whichever comes first (the default only; an ``ahead``
#: given is per op alone). Sessions of a thousand ops and more waited for a hundred
#: backups: on the 12 smoke recordings of 16 writers of 2026-11-29, two sessions of 1,331
#: and 1,369 ops took 17,597 and 19,503 steps (0.11-0.13 s each) that way, 5,468 and 7,715
#: looking ahead after 20 backups; the frontier search of every session of those
#: recordings together, 0.84-0.89x the CPU over three runs (after 5, 10 or 20 backups:
#: within 2% of each other; after 50, 0.95x), of the 12 recordings of 8 writers 0.97x. On
#: ``tests/checker/data``: ``w8-restored`` 6,726 steps (11,009 after a tenth per op),
#: ``w16-s1-c`` 2,610 (3,385), ``w16-s1-a`` 2,957 (3,990), none more. By default a
#: backup counts only where the configuration given up had entered one (2026-11-29,
#: seventh session): the frontier search of the sessions with rollbacks of eight W16 N200
#: recordings and six hard ones of ``tests/checker/data`` 0.94x the CPU, of the 24 smoke
#: recordings of 2-16 writers 0.99x (W16 N200 0.87-0.89x); ``w16-s1-a`` 3,386 steps
#: (2,957), ``w8-restored`` 6,519 (6,622), ``w16-s0-late`` 3,466 (3,573).
LOOKAHEAD_MAX = 20

#: A configuration's states: one state as a 1-tuple (most configurations: putting a state
#: in a set hashes its turns, hundreds of them), several as a frozenset.
States = tuple[Any, ...] | frozenset[Any]


def search(ops: Sequence[ModelOp], deadline: float, max_steps: int = 1 << 62,
           early: bool = False, ahead: float | None = None, join_unseen: bool = True) -> Outcome:
    """Decide whether ``ops`` (one session) have a linearization, by ``deadline`` (a
    ``time.monotonic()`` value) and within ``max_steps`` steps (each configuration counts
    the states in its set: a budget that does not depend on the machine's speed), with at
    most :data:`MAX_CONFIGURATIONS` remembered. When they do, the outcome's ``order`` and ``path`` (one
    run of the lazy model along it) are what :func:`~harness.checker.lazy.certify` needs.
    ``early``, ``ahead``, ``join_unseen``: see :func:`begin`."""
    return drive(begin(ops, early, ahead, join_unseen), deadline, max_steps)


def begin(ops: Sequence[ModelOp], early: bool = False, ahead: float | None = None,
          join_unseen: bool = True) -> Run:
    """The search as a resumable run: it yields its step count from time to time (every
    256 steps), returns its outcome, and when
    :class:`~harness.checker.linearize.Budget` is thrown into it returns an undecided one
    (see :func:`~harness.checker.linearize.drive`).

    ``early``: try the candidates of a kind earliest *invocation* first, not earliest
    completion first: an op that ran for long is then tried where it began, not where it
    had to be over. Only the order of trying differs (the verdict is the same), but where
    a long op belongs decides the steps: on recorded 16-writer sessions each order
    decides some in a small part of the steps the other takes (a rollback that ran for
    12 ms, whose content the next rollback overwrote at once: 136,000 steps this way,
    281,000 the other; another session: 13,000 the other way, not 300,000 this way).

    ``ahead``: backups per op after which it looks ahead (0: from the start; None, the
    default: :data:`LOOKAHEAD_AFTER` per op or :data:`LOOKAHEAD_MAX` in all, the fewer).

    ``join_unseen``: where a step leaves several states, keep those apart only in lists no
    op left can show as one (:func:`_unseen_as_one`); False keeps them all (the same
    verdict: tests of the other reductions turn it off to see theirs alone)."""
    step = make_step(ops)
    # the ops' fields as lists, each made in one pass at C speed (a session has thousands)
    kinds, lo, hi = ([*map(get, ops)] for get in _FIELDS[:3])
    # by invocation (ops invoked at one instant are walked in either order: the set
    # walked and its earliest completion are the same)
    by_lo = sorted(range(len(ops)), key=lo.__getitem__)
    observer = [*map(OBSERVERS.__contains__, kinds)]
    # a read, a listing, an append whose parent a read showed (a ghost's no read shows):
    # a set of states steps through it by a filter (:func:`_shown`)
    filtered = [o.kind in ("read", "list") or (o.kind == "append" and o.out is not None) for o in ops]
    # observers first (placed at once); then snapshots a rollback may restore, so that
    # their windows open as early as they can; then the rest, earliest completion first
    tier = [*map(_TIER.__getitem__, kinds)]
    first, then = (lo, hi) if early else (hi, lo)
    # the order of trying, as each op's rank in it, made once (candidates are sorted by
    # it at every step: one int compared, not a tuple)
    # (tuples sorted with the op's number last: the same order as a stable sort on the
    # rest, with no key function called per op)
    try_rank = _inverse([x[3] for x in sorted(zip(tier, first, then, range(len(ops)), strict=True))])
    must = len(hi) - hi.count(INF)  # ops that have to be placed
    role = [_GHOST if o.kind == "append" and o.arg == GHOST else _ROLLBACK if o.kind in ROLLBACKS else 0
            for o in ops]
    listing = [*map("list".__eq__, kinds)]
    listings = any(listing)
    # the ops that change the turns and may be tried before a listing (one of unknown
    # outcome never is: it has no return before the listing's)
    changer = [*map(_CHANGERS.__contains__, kinds)]
    needs = _id_order(ops)
    # the ops that show each list (reads, appends whose parent a read showed), by its last
    # turn, and the appends whose parent is not known and whose turn a read may show (a
    # retried turn: while one is left, any list may yet be shown with its turn added):
    # made once a step first leaves :data:`JOIN_FROM` states (:func:`_unseen_as_one`)
    shows: dict[str, list[int]] | None = None
    retries: list[int] = []

    def unseen_as_one(nxt: frozenset[Any], lin: int) -> States:
        """:func:`_unseen_as_one` of the states a step left (``lin`` placed then)."""
        nonlocal shows
        if not join_unseen or len(nxt) < JOIN_FROM:
            return nxt
        if shows is None:
            shows = {}
            for k, o in enumerate(ops):
                if o.out is not None and (o.kind == "read" or o.kind == "append"):
                    shows.setdefault(o.out[-1] if o.out else "", []).append(k)
                elif o.kind == "append" and o.arg != GHOST:
                    retries.append(k)
        if retries and any(not lin >> r & 1 for r in retries):
            return nxt
        return _unseen_as_one(nxt, shows, lin)
    # the configurations given up, by ops placed (Lowe's memoization): one is remembered
    # when the search backs up from it, not when it enters it, since one still on the
    # stack cannot be met again (each step places one more op); a search that never backs
    # up hashes no set of states
    visited: dict[int, dict[States, int]] = {}
    merged: dict[Any, Any] = {}  # :func:`~harness.checker.lazy.merge`'s memo
    entered = 0
    failed: dict[int, dict[Any, list[Any]]] = {}
    # what a failure depends on: the snapshots whose content a rollback tried below it
    # read (a bit each, :func:`_covered`); ``cons``, the configuration's so far
    bit = {sid: 1 << k for k, sid in enumerate(sorted({o.arg for o in ops if o.kind in ROLLBACKS}))}
    reads = [bit[o.arg] if o.kind in ROLLBACKS else 0 for o in ops]
    read_at: dict[tuple[int, int], tuple[Any, list[int]]] = {}  # :func:`_failed`'s memo
    # the reads (and appends) only a rollback can explain, by the snapshots it may
    # restore: looked for once the search has backed up often enough (``ahead``)
    backups = 0
    look_at = min(LOOKAHEAD_AFTER * len(ops), LOOKAHEAD_MAX) if ahead is None else ahead * len(ops)
    restoring = _restoring(ops, bit) if look_at <= 0 else None
    cons = 0
    start: States = (LAZY_INIT,)
    # the DFS stack: (placed bitset, states, candidates left to try, number placed that
    # must be, what its failure depends on so far)
    placed_order: list[int] = []
    stack: list[tuple[int, States, list[int], int, int]] = []
    # the ops not placed, in order of invocation: a doubly linked list over by_lo's
    # positions (``end`` heads it and ends it), from which a placed op is unlinked and
    # relinked when the search backs up (in the reverse order: dancing links), so that
    # finding the candidates walks only ops not placed (ops of unknown outcome, never
    # placed, would otherwise make every walk start at the first of them)
    end = len(ops)
    pos = _inverse(by_lo)
    # by position in by_lo, for the walk over the ops not placed
    lo_at, hi_at, needs_at, role_at = ([*map(x.__getitem__, by_lo)] for x in (lo, hi, needs, role))
    nxt_of = [*range(1, end + 1), 0]
    prv_of = [end, *range(end)]
    # the deepest dead end so far: (number of ops placed, those ops, its states); made
    # an Outcome only at the end (the op it could not place is looked for among the ops
    # left, hundreds, and picking one state of a set is costly)
    best: tuple[int, int, States] = (-1, 0, start)
    steps = 0
    skipped = False  # a configuration was too big to explore: no refutation

    def outcome(ok: bool | None) -> Outcome:
        depth, placed, states = best
        if depth < 0:
            return Outcome(ok, explored=steps)
        # the op it could not place: the earliest completion among those left
        left = [n for n in range(len(ops)) if hi[n] != INF and not placed >> n & 1]
        stuck = ops[min(left, key=lambda n: (hi[n], n))] if left else None
        return Outcome(ok, stuck, _one(states), depth, steps)

    def candidates(lin: int) -> list[int]:
        """The pending ops no pending op must precede, earliest completion first."""
        # every op walked was invoked by the earliest completion among them (``m`` only
        # falls to a completion, which is no earlier than its own invocation, and that no
        # earlier than the invocation of any op walked before it)
        m = INF
        out = []
        roles = 0  # the roles among them, or-ed
        k = nxt_of[end]
        while k != end:
            if lo_at[k] > m:
                break
            nk = needs_at[k]
            if not nk or nk & lin == nk:  # (most need nothing: no AND with a long int)
                out.append(by_lo[k])
                roles |= role_at[k]
            if hi_at[k] < m:
                m = hi_at[k]
            k = nxt_of[k]
        if len(out) > 1:
            out.sort(key=try_rank.__getitem__)
            if roles == _GHOST | _ROLLBACK:
                out = _ghosts_first(out, list(map(role.__getitem__, out)))
        return out

    lin, states, done = 0, start, 0
    leaf = True  # no configuration entered from this one yet
    todo = candidates(lin)
    jump: tuple[int, int] | None = None  # (depth, reasons): back up there at once
    mark = 256  # the next yield: steps go up by a configuration's states, not by one
    while True:
        steps += 1
        if steps >= mark:
            mark = steps + 256
            try:
                yield steps
            except Budget:
                return outcome(None)
        if done == must:
            order = tuple(placed_order)
            # the sets of states along the order are the stack's: no need to step again
            path = exact_path(step, [ops[n] for n in order], [*map(itemgetter(1), stack), states])
            return Outcome(True, explored=steps, order=order, path=path)
        moved = False
        while todo:
            n = todo.pop(0)
            cons |= reads[n]
            nxt: States
            if len(states) == 1 and (restoring is None or not (reads[n] or states[0][3])):  # type: ignore[index]
                # one state, and no look-ahead or none this step needs (most steps): what
                # the steps below come to
                s0 = states[0]  # type: ignore[index]
                got = step(s0, ops[n])
                if len(got) == 1:
                    s1 = got[0]
                    # an observer its state allows: the very states (one object for
                    # both, which the visited set keeps one copy of)
                    same = observer[n] and (s1 is s0 or s1 == s0)
                    nxt = states if same else (s1,)
                    sure = same and not s0[3]  # ... with no window open
                    work = 1
                else:
                    if not got:
                        continue
                    nxt = frozenset(got)  # distinct states
                    if len(nxt) > MAX_STATES:
                        skipped = True
                        steps += len(nxt)
                        continue
                    work, sure = len(nxt), False
                    nxt = unseen_as_one(nxt, lin | 1 << n)
            else:
                shown = False
                if len(states) == 1:  # then a 1-tuple
                    got = step(states[0], ops[n])  # type: ignore[index]  # distinct states
                    nxt = tuple(got) if len(got) < 2 else unseen_as_one(frozenset(got), lin | 1 << n)
                elif filtered[n] and not any([x[3] for x in states]):
                    # a read, a listing, or an append whose parent a read showed, with no
                    # window open: the lazy step keeps the states whose turns (or ids) it
                    # shows (an observer: those very states; an append: each with the one
                    # list it makes), so the set is a subset of one merged already, or its
                    # image, and merges no further
                    nxt, shown = _shown(states, ops[n]), True
                else:
                    nxt = frozenset(s2 for s1 in states for s2 in step(s1, ops[n]))
                    if role[n] == _ROLLBACK and len(nxt) > 1:
                        # a rollback from several states branches each on its candidates:
                        # those apart only in lists no op left shows are one here too
                        # (states a rollback's choice set apart, snapshots copied and
                        # no read is left to tell apart, carried for hundreds of ops:
                        # ``w16-s1-carried``, 9,178 steps, 4,318 with this; looked for
                        # after every step from several states, the same steps on the 51
                        # sessions measured, 3% more CPU)
                        nxt = unseen_as_one(nxt, lin | 1 << n)
                if not nxt:
                    continue
                if len(nxt) > MAX_STATES:
                    # too many to carry: not explored, so the search can still prove the
                    # session another way, but no longer refute it by exhaustion
                    skipped = True
                    steps += len(nxt)
                    continue
                work = len(nxt)
                if work > 1 and len(states) > 1 and not shown:
                    # one state per snapshot's choices, not one per combination (the states
                    # one state steps to differ in their turns or their ids: none merge);
                    # the very states again (an observer all of them allow, about a third
                    # of these steps on 16-writer sessions) are merged as they are
                    nxt = states if nxt == states else merge(nxt, merged)  # type: ignore[arg-type]
                if len(nxt) == 1 and nxt.__class__ is frozenset:  # one state: as a 1-tuple
                    nxt = tuple(nxt)
                # (only a rollback, or a window that may close, changes what may explain a
                # read: most steps have neither)
                if restoring and (reads[n] or (states[0][3] if len(states) == 1 else True)):  # type: ignore[index]
                    lost = _unexplained(restoring, ops[n], states, nxt, lin | 1 << n, listing[n])
                    if lost is not None:
                        cons |= lost[3]
                        if not _explains(states, lost, lin):  # it was lost before this op
                            jump = _dead_from(stack, lost), lost[3]
                            break
                        continue
                # an observer every state allows (it rules none out); other ops seldom leave
                # the states as they were, and comparing sets on every step costs
                same = observer[n] and (nxt is states or nxt == states)
                if same:
                    nxt = states  # one object for both: the visited set keeps one copy
                sure = same and not any(x[3] for x in states)  # ... with no window open
            key = (lin | 1 << n, nxt)
            why = None
            if visited:  # else nothing was given up yet: nothing to compare with
                seen = visited.get(key[0])
                if seen is not None:  # (a failed one is visited: none with these ops placed)
                    why = seen.get(nxt)
                    if why is None:
                        why = _covered(failed, key[0], nxt)
            if why is not None:  # it fails, for reasons ``why`` holds: so may this one
                cons |= why
                if sure:
                    todo = []  # placing it now is no loss, and that failed: so does this
                    break
                continue
            entered += 1
            steps += work  # the work of a configuration: its states, before merging
            if entered > MAX_CONFIGURATIONS:
                return outcome(None)
            stack.append((lin, states, [] if sure else todo, done, cons))
            placed_order.append(n)
            k = pos[n]
            nxt_of[prv_of[k]] = nxt_of[k]
            prv_of[nxt_of[k]] = prv_of[k]
            lin, states = key
            leaf = True
            cons = 0
            done += hi[n] != INF
            todo = candidates(lin)
            if listings and len(todo) > 1:
                for n in todo:  # observers come first: a listing is among them, if any
                    if not observer[n]:
                        break
                    if listing[n]:
                        todo = _listings_last(todo, listing, changer, lo, hi, observer, states)
                        break
            moved = True
            break
        if moved:
            continue
        if len(placed_order) >= best[0]:
            best = (len(placed_order), lin, states)
        if jump is not None:
            # a read no configuration from depth ``to`` on can explain: back up to the
            # one before it at once, each on the way failed for that read's reasons
            to, cons = jump
            jump = None
            while len(stack) >= to:
                _failed(failed, lin, states, cons, bit, read_at)
                visited.setdefault(lin, {})[states] = cons
                if not stack:
                    return outcome(False)
                lin, states, todo, done, up = stack.pop()
                k = pos[placed_order.pop()]
                nxt_of[prv_of[k]] = k
                prv_of[nxt_of[k]] = k
            cons |= up
            leaf = False
            continue
        if not stack:
            return outcome(None if skipped else False)
        if not skipped:  # every way on from it was tried (one skipped is not a failure:
            _failed(failed, lin, states, cons, bit, read_at)  # fewer candidates, fewer states)
        visited.setdefault(lin, {})[states] = cons
        if not leaf or ahead is not None:
            # (by default a configuration that entered none is not counted: such failures
            # come cheap and in runs, an op that ran for long tried at each depth on the
            # way back and failing at once, and the look-ahead has nothing to find there)
            backups += 1
        fresh = restoring is None and backups >= look_at
        if fresh:
            restoring = _restoring(ops, bit, set(placed_order))
        lin, states, todo, done, up = stack.pop()
        leaf = False
        cons |= up
        k = pos[placed_order.pop()]
        nxt_of[prv_of[k]] = k
        prv_of[nxt_of[k]] = k
        if fresh:
            # the path was built without looking ahead: the reads it already left no way
            # to explain send the search back at once, to the first depth that lost one
            jump = _stranded(restoring, stack, states, lin)  # type: ignore[arg-type]
            if jump is not None:
                todo = []


def _covered(failed: dict[int, dict[Any, list[Any]]], lin: int, states: States) -> int | None:
    """Whether configuration ``(lin, states)`` can only fail, by what ``failed`` holds
    (:func:`_failed`): None if not; if so, what that depends on (the snapshots whose
    contents the failures that cover it read, a bit each).

    ``failed`` holds the states of the configurations that failed, by ops placed, turns,
    ids and open windows. A set of states has a way to the end iff one of its states has,
    and a state whose candidate contents are each within a failed state's (the rest
    equal) has no way the failed one lacks: the lazy step branches on each candidate
    alike. So a configuration whose every state is so covered fails too. (On a recorded
    16-writer session, the orders of the ops before a dead end left hundreds of
    configurations with the same ops placed, differing only in which states a window had
    passed through: 150,000 configurations without this, 24,000 steps with it.)

    Only the contents the failure read need be within: a snapshot's content (its
    candidates, its rollbacks left) is read by a rollback to it and by no other op, so
    where no rollback to it was tried on the way from the failed configuration (nor on
    the way from those whose failure cut that search short), the failure is the same
    whatever its content. (The same 16-writer sessions: most of the configurations met
    again after a dead end differ only in the candidates of snapshots no rollback after
    the dead end's cause restores.)"""
    got = failed.get(lin)  # most configurations: no failed one with these ops placed
    if got is None:
        return None
    why = 0
    for s in states:
        one = _one_covered(got.get((s[0], s[1], s[3])), s[2])
        if one is None:
            return None
        why |= one
    return why


def _failed(failed: dict[int, dict[Any, list[Any]]], lin: int, states: States, why: int,
            bit: dict[str, int], memo: dict[tuple[int, int], tuple[Any, list[int]]] | None = None) -> None:
    """Remember that configuration ``(lin, states)`` failed (the last
    :data:`MAX_COVERING` per key), for reasons that read the contents of the snapshots
    in ``why`` (``bit``: each snapshot id's). Only when it fails: one the search is still
    on has fewer ops placed than any it meets on the way (placed ops only grow along the
    path), so it could not cover them, and a search that never backs up remembers nothing.

    ``memo``: the places read, by the contents' identity and ``why``, kept by the caller
    across calls (states stepped from one share their contents object, and failures
    come in runs: a walk over dozens of entries each time was most of this function)."""
    by_key = failed.setdefault(lin, {})
    if memo is None:
        memo = {}
    for s in states:
        got = by_key.setdefault((s[0], s[1], s[3]), [])
        if len(got) >= MAX_COVERING:
            del got[0]
        contents = s[2]
        if not why:
            got.append((contents, [], why))
            continue
        known = memo.get((id(contents), why))
        if known is None:  # (the memo holds the contents: their id stays theirs)
            known = memo[id(contents), why] = (
                contents, [p for p, e in enumerate(contents) if bit.get(e[0], 0) & why])
        got.append((contents, known[1], why))


def _one_covered(got: list[tuple[Any, list[int], int]] | None, contents: Any) -> int | None:
    """Whether one of the failed states ``got`` holds (contents, the places whose content
    its failure read, what it read) holds each of those entries of ``contents`` (same id
    and rollbacks left; a fixed content equal, candidates a superset): what it read, or
    None."""
    if got is None:
        return None
    for c, at, why in got:
        if c is contents:
            return why
        if len(c) != len(contents):
            continue
        for p in at:
            a, b = c[p], contents[p]
            if a is b:
                continue
            if a[0] != b[0] or a[2] != b[2]:
                break
            x, y = a[1], b[1]
            if x.__class__ is frozenset and y.__class__ is frozenset:
                if not x >= y:
                    break
            elif x != y:
                break
        else:
            return why
    return None


def _id_order(ops: Sequence[ModelOp]) -> list[int]:
    """For each op, the ops (a bitset) that must precede it in every linearization, by what
    the listings and the snapshot ids say: snapshot ids are never removed, so a snapshot
    that created id x comes after every listing without x and every failed rollback to x
    ("not found"), and before every listing with x and every acknowledged rollback to x.
    The search only tries an op once those are placed: a snapshot placed before a listing
    that lacks its id fails only at that listing, possibly far on.

    A listing looks at the snapshots that returned after it was invoked (for ids it
    shows) and at those invoked before it returned (for ids it lacks): a snapshot outside
    both is ordered by real time already (the search tries no op while an op that
    returned before it was invoked is pending). In a valid history only snapshots that
    overlap the listing get a bit; a bit for one that does not (an id shown before its
    snapshot began, an id missing after its snapshot returned) stops the search there at
    once."""
    creator: dict[str, int] = {}
    for n, o in enumerate(ops):
        if o.kind in ("snapshot", "snapshot-id"):
            creator.setdefault(o.out, n)
    needs = [0] * len(ops)
    by_lo = sorted(creator.items(), key=lambda x: ops[x[1]].lo)
    ids_by_lo = [sid for sid, _ in by_lo]
    los = [ops[c].lo for _, c in by_lo]
    by_hi = sorted(creator.items(), key=lambda x: ops[x[1]].hi)
    his = [ops[c].hi for _, c in by_hi]
    ids_by_hi = [sid for sid, _ in by_hi]
    # the snapshots' ids by the time each listing returned, grown along the listings in
    # order of return
    invoked: set[str] = set()
    for n in sorted((n for n, o in enumerate(ops) if o.kind == "list"), key=lambda n: ops[n].hi):
        o = ops[n]
        # the ids it shows whose snapshot had not returned when it was invoked (a few
        # of the dozens either side: the sets are intersected at C speed)
        for sid in o.out.intersection(ids_by_hi[bisect_left(his, o.lo):]):
            needs[n] |= 1 << creator[sid]
        # the ids it lacks whose snapshot was invoked before it returned
        invoked.update(ids_by_lo[len(invoked):bisect_right(los, o.hi)])
        for sid in invoked.difference(o.out):
            needs[creator[sid]] |= 1 << n
    for n, o in enumerate(ops):
        if o.kind == "rollback-missing" and o.arg in creator:
            needs[creator[o.arg]] |= 1 << n
        elif o.kind == "rollback" and o.arg in creator:
            needs[n] |= 1 << creator[o.arg]
    return needs


#: A read only a rollback can explain: (its op, its list, the rollbacks that may be the
#: last op to set the turns before it as (op, snapshot id), the bits of the snapshots
#: whose contents say whether it still can be (those ids, and the targets of the
#: rollbacks among ``takers``), ``takers``: for each of those rollbacks, in order, the ops
#: that may set the turns its snapshot takes, if that snapshot is taken or its window open
#: from here on, as (op, the snapshot a rollback restores; None for an append of the
#: list's last turn); None where that is not known (:func:`_takers`); the bits of the ops
#: that set the turns and returned before it was invoked, placed before it in every
#: linearization).
Taker = tuple[int, "str | None"]
Restored = tuple[int, Any, tuple[tuple[int, str], ...], int, tuple["tuple[Taker, ...] | None", ...], int]


def _restoring(ops: Sequence[ModelOp], bit: dict[str, int],
               skip: Collection[int] = ()) -> dict[str, list[Restored]]:
    """The reads whose list only a rollback can have set, by the snapshots it may restore;
    with them the appends whose parent a read showed (an append is placed only where the
    turns are its parent: to the search, a read of it).

    The turns a read shows were set by the last append or rollback before it. That op was
    invoked before the read returned, and no acknowledged append or rollback lies wholly
    between the two in real time (it would come after it). When none of the appends so
    placed adds the read's last turn, the turns were set by one of the rollbacks so
    placed, and the snapshot it restored held the read's list (:func:`_unexplained`); a
    rollback that must be the last such op before another read is none of those of a
    read it cannot be the last before as well (:func:`_pinned`).
    A read of an empty list is left out where no append or rollback returned before it
    began (the start of the session holds one too, with no op before it to set it); where
    one did, the last op before it set the turns, and no append leaves them empty. Left
    out too are those in ``skip`` (placed on the search's path when it begins to look ahead: only a
    backup past them would look at them again, and a read not looked at is one the
    search does not cut short for, never one it gives up wrongly)."""
    kind, lo, hi, arg, outs = ([*map(get, ops)] for get in _FIELDS)
    setters = [n for n, k in enumerate(kind) if k in _SETTERS]
    done = sorted([(hi[n], lo[n], n) for n in setters if hi[n] != INF])
    # the acknowledged setters that returned before each point of ``his``, a bit each
    before = [0, *accumulate([1 << n for _, _, n in done], or_)]
    his = [h for h, _, _ in done]
    # the latest invocation among the acknowledged setters so far, by return
    latest = list(accumulate([x for _, x, _ in done], max))
    # the append of each turn appended once (most reads show the turn appended just
    # before: that append may have set them, which is settled without looking further)
    appender: dict[str, int] = {}
    for n in setters:
        if kind[n] == "append":
            appender[arg[n]] = -1 if arg[n] in appender else n
    # a sweep over the reads by invocation, along which ``after`` (below) only grows
    # (sorts are stable: ties stay in the order of the ops)
    by_lo = sorted(setters, key=lo.__getitem__)
    takers = _takers(ops, by_lo, his, latest)
    around = _setters_near(by_lo, [*map(lo.__getitem__, by_lo)], hi)
    out: dict[str, list[Restored]] = {}
    found: list[Found] = []
    showing = [n for n, k in enumerate(kind) if (k == "read" or k == "append") and outs[n] is not None]
    for r in sorted(showing, key=lo.__getitem__):
        if r in skip:
            continue
        want = ops[r].out
        j = bisect_left(his, lo[r])  # the setters that returned before the read began
        if not want and not j:
            continue  # the start may have its empty list
        after = latest[j - 1] if j else NEG  # a setter returning before this is hidden
        # (the empty list's is no turn: no append leaves the turns empty)
        last = want[-1] if want else ""
        a = appender.get(last, -1)
        if a >= 0 and lo[a] <= hi[r] and hi[a] >= after:
            continue  # the append of its last turn may have set them
        # those that may still set the turns and were invoked by the time it returned
        near = around(after, hi[r])
        if r in near:
            near.remove(r)
        if any(kind[n] == "append" and arg[n] == last for n in near):
            continue  # an append may have set it
        back = tuple((n, arg[n]) for n in near if kind[n] in ROLLBACKS)
        if back:  # (else nothing explains it: the search finds that out on its own)
            found.append((r, back, j, after))
    for r, back, j, _ in _pinned(found, hi, outs):
        if not back:
            continue
        want = outs[r]
        last = want[-1] if want else ""
        mask = 0
        ways: list[tuple[Taker, ...] | None] = []
        for _, sid in back:
            mask |= bit[sid]
            can = takers.get(sid)
            if can is not None:  # an append sets ``want`` only if it adds its last turn
                can = tuple([(m, z) for m, z in can if z is not None or arg[m] == last])
                for _, z in can:
                    if z is not None:
                        mask |= bit[z]
            ways.append(can)
        entry = (r, want, back, mask, tuple(ways), before[j])
        for sid in {sid for _, sid in back}:
            out.setdefault(sid, []).append(entry)
    return out


#: A read (or append) only a rollback can explain, as :func:`_restoring` finds it: (its op,
#: the rollbacks that may be the last op to set the turns before it, as (op, snapshot id);
#: its place among the acknowledged setters by return; the latest invocation among those
#: that returned before it began).
Found = tuple[int, tuple[tuple[int, str], ...], int, int]


def _pinned(found: list[Found], hi: list[int], outs: list[Any]) -> list[Found]:
    """``found`` with each rollback dropped from the reads it cannot be the last op to set
    the turns before, as the one rollback another read may follow (``hi``, ``outs``: the
    ops' returns and results; an append's result is its parent, the turns it sees).

    The last op to set the turns before such a read q is one of its rollbacks
    (:func:`_restoring`); where q has one, R, R is that op in every linearization. So
    every op that set the turns and returned before q began comes before R, and no such
    op comes between R and q. For R to be the last before another read r as well, r must
    show q's list (both see the turns R set, nothing set between) and can come after
    those ops (r returned no earlier than the latest of them was invoked), and the same
    with q and r swapped. Where not, R is dropped from r's rollbacks, and r, left with one,
    may pin that one in turn (to a fixed point: each round drops one at least). A
    rollback that ran for 232 ms was the one that may explain an append at its very end,
    and seemed to explain dozens of reads of the same list 125 ops before, each of which
    a closed window then failed only once the search had placed it: a recorded 16-writer
    session took 8,393 steps, 2,385 with this."""
    while True:
        pins: dict[int, list[tuple[int, int]]] = {}
        for q, back, _, after in found:
            if len(back) == 1:
                pins.setdefault(back[0][0], []).append((q, after))
        if not pins:
            return found
        kept: list[Found] = []
        changed = False
        for entry in found:
            r, back, j, after = entry
            drop = [n for n, _ in back if n in pins and any(
                q != r and not (outs[q] == outs[r] and hi[r] >= a and hi[q] >= after)
                for q, a in pins[n])]
            if drop:
                entry = (r, tuple([x for x in back if x[0] not in drop]), j, after)
                changed = True
            kept.append(entry)
        if not changed:
            return found
        found = kept


def _takers(ops: Sequence[ModelOp], by_lo: list[int], his: list[int],
            latest: list[int]) -> dict[str, tuple[Taker, ...]]:
    """For each snapshot a rollback may restore, taken by a known op (one of unknown
    outcome may have taken any id no op is known to take: it gets none), the appends and
    rollbacks that may be the last op to set the turns before the point whose state it
    takes, as (op, the id a rollback restores; None for an append); ``by_lo``: the
    appends and rollbacks in order of invocation; ``his`` and ``latest``: the returns of the acknowledged ones,
    sorted, and the latest invocation among those returned by each (:func:`_restoring`).

    The content a snapshot Y takes is the turns at some point of its window, which closes
    at the first op invoked after Y returned (:mod:`~harness.checker.lazy`): they were set
    by the last append or rollback X placed before that point. X was invoked by the time Y
    returned (one invoked later would have closed the window first), and no acknowledged
    append or rollback S returned before Y was invoked after X returned (S would come
    after X and before Y). So a list can be a content Y takes from here on only if one of
    these sets it: an append of its last turn, or a rollback to a snapshot that holds it
    or may yet take it (:func:`_may_explain`)."""
    out: dict[str, tuple[Taker, ...]] = {}
    targeted = {o.arg for o in ops if o.kind in ROLLBACKS}
    twice = set()
    # a sweep over the snapshots by invocation, along which ``after`` only grows
    around = _setters_near(by_lo, [ops[n].lo for n in by_lo], [o.hi for o in ops])
    snaps = sorted((o for o in ops if o.kind == "snapshot" and o.out in targeted), key=lambda o: o.lo)
    for o in snaps:
        if o.out in out:  # an id two snapshots returned (a broken store): not known which
            twice.add(o.out)
        j = bisect_left(his, o.lo)
        after = latest[j - 1] if j else NEG  # a setter returning before this is hidden
        near = sorted(around(after, o.hi))
        out[o.out] = tuple((n, ops[n].arg if ops[n].kind in ROLLBACKS else None) for n in near)
    for sid in twice:
        del out[sid]
    return out


def _setters_near(by_lo: list[int], los: list[int], hi: Sequence[int]) -> Callable[[int, int], list[int]]:
    """For a sweep along which the bound ``after`` only grows (:func:`_restoring` over the
    reads, :func:`_takers` over the snapshots, each by invocation): a function of
    ``(after, until)`` giving the setters (``by_lo``, in order of invocation; ``los``,
    their invocations; ``hi``, every op's return) that return no earlier than ``after``
    and were invoked by ``until``, in order of invocation. Those invoked before ``after``
    and returning no earlier are kept (``spanning``), those returning earlier dropped for
    good; the rest are a slice of ``by_lo``: each call looks at the few ops around its
    bound, not at every op of the session."""
    spanning: list[int] = []  # in order of invocation, as by_lo
    entered = 0  # by_lo[:entered] were looked at for ``spanning``
    cut = NEG  # the ``after`` spanning was last cut to

    def near(after: int, until: int) -> list[int]:
        nonlocal spanning, entered, cut
        start = bisect_left(los, after)
        if after > cut:
            spanning.extend(by_lo[entered:start])
            entered = start
            spanning = [n for n in spanning if hi[n] >= after]
            cut = after
        return spanning + by_lo[start:bisect_right(los, until, start)]
    return near


def _unexplained(restoring: dict[str, list[Restored]], op: ModelOp, before: States,
                 after: States, lin: int, listing: bool) -> Restored | None:
    """A read in ``restoring`` that placing ``op`` (from states ``before`` to ``after``,
    ``lin`` placed then) leaves no way to explain (its entry: the bits of the snapshots it
    may have had restored are its last), else None.

    Such a read (or append), not placed yet, needs its list to be the turns when it is
    placed, or else a rollback still to be placed to set them: one of its rollbacks
    (:func:`_restoring`) to a snapshot not taken yet, whose window is open, or whose
    content is or may be that list. A snapshot's candidates only grow while its window is
    open, and only shrink once it is closed, so where every state fails this for some
    read, no linearization goes on from here. Looked at when a window closes (an op
    invoked after the snapshot returned, a listing) or a rollback chooses a content: only
    then does the answer change."""
    lo = op.lo
    changed = {sid for s in before for sid, hi in s[3] if listing or hi < lo}
    if op.kind in ROLLBACKS:
        changed.add(op.arg)
    if not changed:
        return None
    return _lost(restoring, changed, after, lin)


def _stranded(restoring: dict[str, list[Restored]], stack: Sequence[tuple[int, States, Any, Any, Any]],
              states: States, lin: int) -> tuple[int, int] | None:
    """Where a configuration reached without looking (``states``, ``lin`` placed, at the
    end of the path ``stack``) must back up to: the least depth from which some read of
    ``restoring`` not placed has no way to be explained (:func:`_dead_from`), with what
    that read depends on (its entry's bits); None if every such read may still be
    (:func:`_explains`). :func:`_unexplained` over every read.

    Each such read's depth is one from which every configuration on the path fails, so
    the least of them is too. The first read found is not the one to go by: on session
    ``s1`` of a recording of ``--workers 16 --ops 200 --seed 7`` (2026-11-30, 1,047 ops),
    at depth 572, the first by snapshot id had lost its way at depth 507; the search
    backed up there, then 1,028 times more, through 150 depths, before it found its way
    (5,443 steps). The least was 215: 2,921 steps."""
    jump: tuple[int, int] | None = None
    for sid in sorted(restoring):  # (a set's order varies between runs: the steps would)
        for entry in restoring[sid]:
            if not lin >> entry[0] & 1 and not _explains(states, entry, lin):
                to = _dead_from(stack, entry)
                if jump is None or to < jump[0]:
                    jump = (to, entry[3])
    return jump


def _lost(restoring: dict[str, list[Restored]], sids: Collection[str], states: States,
          lin: int) -> Restored | None:
    """The first read of ``restoring`` by the snapshots ``sids``, not placed, that no state
    of ``states`` may still explain, else None."""
    for sid in sorted(sids):  # (a set's order varies between runs: the steps would)
        for entry in restoring.get(sid, ()):
            if not lin >> entry[0] & 1 and not _explains(states, entry, lin):
                return entry
    return None


def _explains(states: States, entry: Restored, lin: int) -> bool:
    """Whether some state of a configuration (``lin`` placed) may still explain the read of
    ``entry``, not placed (:func:`_may_explain`)."""
    _, want, back, _, takers, forced = entry
    for s in states:  # noqa: SIM110  (most often one state: no generator made for it)
        if _may_explain(s, want, back, lin, takers, forced):
            return True
    return False


def _dead_from(stack: Sequence[tuple[int, States, Any, Any, Any]], entry: Restored) -> int:
    """The depth of a configuration on the search's path (``stack``: the placed ops and
    the states of each) that cannot explain the read of ``entry`` (:func:`_explains`),
    given that the current one (at depth ``len(stack)``) cannot: that one and every one
    below it fail, whatever was tried in between (:func:`_unexplained` says why). Found by
    bisection over the path, checked where found, so that the search backs up there at
    once: a window that closed hundreds of ops before the rollback that needed it is
    otherwise undone one depth at a time, each depth trying its other ops first (recorded
    sessions, 2026-11-28: ``tests/checker/data/w8-restored`` 75,469 steps without this,
    11,009 with it; ``w16-s1-c`` 37,687 and 3,385). A read not placed at the current depth
    is not placed above it."""
    def dead(k: int) -> bool:
        if k == len(stack):
            return True
        return not _explains(stack[k][1], entry, stack[k][0])
    lo, hi = 0, len(stack)  # hi: cannot explain it; lo: can (the start can: no id taken)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if dead(mid):
            hi = mid
        else:
            lo = mid
    return hi


def _may_explain(s: Any, want: Any, back: tuple[tuple[int, str], ...], lin: int,
                 takers: tuple[tuple[Taker, ...] | None, ...] | None = None, forced: int = 0) -> bool:
    """Whether lazy state ``s`` (``lin`` placed) may still have the turns ``want`` where a
    read of it is placed: they are the turns already and every op of ``forced`` (the
    appends and rollbacks that returned before the read was invoked) is placed, or one of
    the rollbacks ``back`` not placed yet targets a snapshot whose content is ``want`` or
    has it among its candidates, or whose content is not kept, or that is not taken yet
    or whose window is open and may yet take ``want``: the turns are ``want`` already, or
    one of its ``takers`` (aligned with ``back``; None, or no ``takers``: not known, it
    may) not placed yet may set the turns to it, an append (of its last turn) or a
    rollback to a snapshot that holds it or is not taken yet or whose window is open
    (:func:`_takers`).

    Turns that are ``want`` already with an op of ``forced`` still to place explain
    nothing by themselves: that op comes between, so the last op to set the turns before
    the read is still to be placed, and it is one of ``back`` (:func:`_restoring`: no
    append of the list's last turn may be). (A rollback that ran for 232 ms, placed to
    explain an append in the middle of its run, left the turns at the parent of an append
    at its end that only it explains, 125 ops on: that append counted as explained on the
    way, and the search failed there only, each time it placed the rollback so; a
    recorded 16-writer session took 37,592 steps, 8,393 with this.)"""
    turns, ids, contents, open_ = s
    shown = turns == want
    if shown and forced & lin == forced:
        return True
    for k, (n, sid) in enumerate(back):
        if lin >> n & 1:
            continue
        taken = sid in ids
        if taken and _holds(contents, sid, want):
            return True
        if not taken or any(x[0] == sid for x in open_):
            ways = takers[k] if takers is not None else None
            if ways is None or shown or _may_set(ways, s, want, lin):
                return True
    return False


def _may_set(ways: tuple[Taker, ...], s: Any, want: Any, lin: int) -> bool:
    """Whether one of ``ways`` (:func:`_takers`; appends of ``want``'s last turn, and
    rollbacks) not placed yet (``lin``) may set the turns to ``want`` from state ``s``."""
    _, ids, contents, open_ = s
    for m, z in ways:
        if lin >> m & 1:
            continue
        if z is None or z not in ids or any(x[0] == z for x in open_) or _holds(contents, z, want):
            return True
    return False


def _holds(contents: Any, sid: str, want: Any) -> bool:
    """Whether snapshot ``sid``'s entry in a state's ``contents`` is ``want`` or has it
    among its candidates, or there is none (its content not kept: not known)."""
    i = entry_index(contents, sid)
    if i < 0:
        return True
    c = contents[i][1]
    return bool(c == want or (c.__class__ is frozenset and want in c))


_GHOST, _ROLLBACK = 1, 2
_FIELDS = tuple(map(attrgetter, ("kind", "lo", "hi", "arg", "out")))
#: Each kind's tier in the order of trying (:func:`begin`).
_TIER = {k: 0 if k in OBSERVERS else 1 if k == "snapshot" else 2 for k in OP_KINDS}
_CHANGERS = frozenset({"append", "rollback"})
_SETTERS = frozenset({"append", *ROLLBACKS})


def _inverse(perm: list[int]) -> list[int]:
    """The inverse of a permutation of ``range(len(perm))``: each value's place."""
    out = [0] * len(perm)
    for k, n in enumerate(perm):
        out[n] = k
    return out


def _listings_last(out: list[int], listing: list[bool], changer: list[bool], lo: list[int],
                   hi: list[int], observer: list[bool], states: States) -> list[int]:
    """``out`` (candidates in their order of trying) with its listings tried after the
    appends and rollbacks that would add their state to a window open in ``states`` (an
    op invoked by the time that window's snapshot returned) and return no later than the
    first listing among them; the other observers stay first, the rest last.

    A listing ends every open window (it sees the ids: no snapshot moves across it) and
    reads no turns, so such an op A and a listing L lead, in either order, to the same
    turns, ids and windows closed, but A then L leaves each window's snapshot A's state as
    one more candidate content: every way on from L then A is one from A then L, and
    the search covers the second by the first (:func:`_covered`). Tried the other way
    round, the listing closed the window at once and the rollback that restored A's
    state failed hundreds of ops on, after the search had backed up through every level
    in between (a recorded Redis session, ``tests/checker/data/w4-listing``: undecided by
    either order of this search in 60 s, 16,498 steps now). Only ops returning before
    the listing are moved ahead of it: one that ran for long is tried where earliest
    completion first puts it (every op tried before the listings while a window was open
    cost the 16-writer smoke recordings of 2026-11-27 16% more steps). An order of trying
    only: every candidate is tried before a configuration is given up."""
    ends = [h for x in states for _, h in x[3]]
    if not ends:
        return out
    last = max(ends)
    until = min(hi[n] for n in out if listing[n])
    early = [n for n in out if changer[n] and lo[n] <= last and hi[n] <= until]
    if not early:
        return out
    return ([n for n in out if observer[n] and not listing[n]] + early
            + [n for n in out if listing[n]]
            + [n for n in out if not observer[n] and n not in early])


def _ghosts_first(out: list[int], roles: list[int]) -> list[int]:
    """``out`` (candidates in their order of trying; ``roles``: theirs) with the ghost
    appends (acknowledged appends no read shows: :data:`~harness.checker.model.GHOST`)
    tried after the first rollback moved to just before it. A ghost leaves turns no read
    can show, so in a linearization it is followed by a rollback that discards it before
    the next read: tried after the rollback, as the earliest completion first put it, it
    made the search place the rollback, go on for a dozen ops and back up through them at
    every step (a recorded 16-writer session: 15,802 steps, 2,309 with ghosts first). Only
    the order of trying."""
    first = roles.index(_ROLLBACK)
    rest = sorted(range(first, len(out)), key=lambda k: roles[k] != _GHOST)  # stable
    return [*out[:first], *(out[k] for k in rest)]


#: What :func:`_unseen_as_one` puts in place of a list no op left can show.
_UNSEEN = ("\x00unseen",)


def _unseen_as_one(states: frozenset[Any], shows: dict[str, list[int]], lin: int) -> States:
    """``states`` (several, stepped from one state; ``lin`` placed) with those that differ
    only in lists that no op left can show kept as one: the least of them by turns and
    contents, the same on every run. ``shows``: the reads and the appends whose parent a
    read showed, by the last turn of the list each shows (the list itself when it is empty).

    Exact, when no append whose parent is not known is left (a retried turn: the caller
    checks). The turns are compared with a list only by a read or an append whose parent a
    read showed, each with the list it shows; a snapshot copies the turns into its content
    and a rollback copies a content back, unseen; an append of an unseen list cannot be
    placed, and one that no read shows leaves :data:`~harness.checker.lazy.DIRTY` on any
    list. So two states equal once each list no op left shows is replaced by one mark step,
    op by op, to states equal in the same way (the ops left only shrink), and have the same
    ways to the end. (A rollback that restores one of the dozens of lists its snapshot's
    window passed through, its content then copied by snapshots and rolled back to again
    but never shown, left that many states for hundreds of ops on recorded 16-writer
    sessions, since the copies make the choices correlated, which
    :func:`~harness.checker.lazy.merge` does not join: 12,452 steps, 4,436 with this.)

    A list is told by its last turn: where two lists end with one turn (only a store that
    broke shows such), both count as shown, which keeps states apart, never joins them."""
    seen: dict[str, bool] = {}

    def mark(v: Any) -> Any:
        key = v[-1] if v else ""
        got = seen.get(key)
        if got is None:
            ks = shows.get(key)
            got = seen[key] = ks is not None and any(not lin >> k & 1 for k in ks)
        return v if got else _UNSEEN

    if all([mark(s[0]) is not _UNSEEN for s in states]):
        return states  # (a rollback's choices of lists all still to be shown: the common case)
    # the places in the contents where the states' entries differ (states stepped from one
    # share their other entries, the very objects), each entry's lists marked once
    first = next(iter(states))[2]
    size = len(first)
    if any(len(s[2]) != size for s in states):
        places = range(max(len(s[2]) for s in states))
    else:
        vary: set[int] = set()
        for s in states:
            if s[2] is not first:
                vary.update(compress(range(size), map(is_not, first, s[2])))
        places = sorted(vary)  # type: ignore[assignment]
    marked: dict[int, Any] = {}
    groups: dict[Any, list[Any]] = {}
    for s in states:
        turns, ids, contents, open_ = s
        key = [mark(turns), ids, open_, len(contents)]
        for p in places:
            if p >= len(contents):
                break
            e = contents[p]
            got = marked.get(id(e))
            if got is None:
                sid, c, left = e
                got = marked[id(e)] = (sid, frozenset(map(mark, c)) if c.__class__ is frozenset else mark(c), left)
            key.append(got)
        groups.setdefault(tuple(key), []).append(s)
    if len(groups) == len(states):
        return states

    kept = [g[0] if len(g) == 1 else _least(g, places) for g in groups.values()]
    return (kept[0],) if len(kept) == 1 else frozenset(kept)


def _least(group: list[Any], places: Collection[int]) -> Any:
    """The state of ``group`` with the shortest turns, then the least, then the least
    contents at ``places`` (where the states' entries differ): the same on every run (no
    frozenset's order, which varies with the string hashing), the contents compared only
    between states of the same turns."""
    best = min(group, key=lambda s: (len(s[0]), s[0]))
    ties = [s for s in group if s[0] == best[0]]
    if len(ties) == 1:
        return best
    return min(ties, key=lambda s: [(0, c) if c.__class__ is tuple else (1, sorted(c))
                                    for c in (s[2][p][1] for p in places if p < len(s[2]))])


def _shown(states: States, op: ModelOp) -> States:
    """The lazy step of a read, a listing or an append whose parent a read showed from a
    set of several states, none with a window open (the step then changes the turns and
    nothing else): a read keeps the states whose turns are its ``out``, a listing those
    whose ids are (the very objects, and ``states`` itself when it keeps them all), an
    append each of those whose turns are its parent (``out``) with its turn added. The
    same states as the lazy step makes one by one, without a call for each or hashing
    the states again where an observer keeps them all."""
    kind, want = op.kind, op.out
    kept = [s for s in states if s[1] == want] if kind == "list" else [s for s in states if s[0] == want]
    if kind != "append":
        if len(kept) == len(states):
            return states
    else:
        new = (*want, op.arg)
        kept = [(new, s[1], s[2], s[3]) for s in kept]
    return tuple(kept) if len(kept) < 2 else frozenset(kept)


def _one(states: States) -> Any:
    """One state of a set, the same one on every run (the shortest turns, then the least:
    :func:`~harness.checker.lazy.rank`)."""
    return min(states, key=rank)


def exact_path(step: Any, order: Sequence[ModelOp], layers: Sequence[States]) -> tuple[Any, ...]:
    """One sequence of lazy states along ``order`` that explains every result (the state
    before each op, then the last), given ``layers``: the sets of states before each op
    and after the last, each stepped from the one before and merged
    (:func:`~harness.checker.lazy.merge`), as the search's stack holds them.

    Back from the last, a state of each set that steps to the one chosen after it. A
    merged state stands for several runs, so the way back keeps what the rest of the
    path needs of it: for each snapshot a rollback restored later, the content restored
    (``need``), asked of every state on the way back until the one where that content
    entered the snapshot's candidates (its window was open on those turns). A merged
    state holds every combination of its candidates, one per snapshot, on some run
    (merging joins states one snapshot apart, and the lazy step treats each candidate
    alike), so the way back never has to back up."""
    after = _one(layers[-1])
    path = [after]
    need: dict[str, Any] = {}
    # the candidates (an immutable set) each needed content is among, in the state after
    # the one looked at: the same object again holds it still, without hashing the
    # content (hundreds of turns) anew
    found_in: dict[str, Any] = {}
    # below the first set of several states each state is the only one: what the way back
    # asks of it cannot change which (most proofs hold no such set)
    first = next((i for i, x in enumerate(layers) if len(x) > 1), len(layers) - 1)
    for i in range(len(order) - 1, first - 1, -1):
        op = order[i]
        if len(layers[i]) == 1:  # the common case: the one state before steps to ``after``
            (before,) = layers[i]
        elif layers[i] is layers[i + 1] and op.kind in OBSERVERS:
            # an observer that left the set as it was: it steps each state to itself or
            # to it with fewer windows open, and onto the whole set, so to itself
            before = after
        else:
            # any will do (the path is a proof's, replayed, not shown); first one whose
            # contents are the very object ``after`` holds (the op left them as they were:
            # most often the one, and it fits without comparing its contents)
            layer = layers[i]
            for before in chain([b for b in layer if b[2] is after[2]], layer):
                if any(_fits(s2, after, need, found_in) for s2 in step(before, op)):
                    break
            else:  # pragma: no cover - every state of a merged set is on some run
                raise AssertionError("no state before a merged one")
        path.append(before)
        now, was = before[2], after[2]
        after = before
        if op.kind not in ROLLBACKS and (not need or now is was):
            continue  # nothing asked of the state before, or its candidates are the same
        if need:
            # each needed content is in the candidates ``found_in`` names, the state
            # after's: only entries that are other objects here can lack it
            if len(now) == len(was):  # the same snapshots (an op adds or drops one)
                diff = [e for e, a in zip(now, was, strict=True) if e is not a]
            else:
                held = {e[0] for e in now}
                for sid in [sid for sid in need if sid not in held]:
                    del need[sid], found_in[sid]
                diff = now
            for sid, got, _ in diff:
                if sid in need and got is not found_in[sid]:
                    if need[sid] in got:  # it was already a candidate: look further back
                        found_in[sid] = got
                    else:
                        del need[sid], found_in[sid]
        if op.kind in ROLLBACKS:
            i = entry_index(now, op.arg)
            got = now[i][1] if i >= 0 else None
            if got.__class__ is frozenset:  # what it restored was a candidate before it
                need[op.arg], found_in[op.arg] = path[-2][0], got
    path.extend(s for (s,) in reversed(layers[:first]))
    return tuple(reversed(path))


def _fits(s: Any, merged: Any, need: dict[str, Any], found_in: dict[str, Any]) -> bool:
    """Whether state ``s`` is one of those ``merged`` stands for and holds the contents
    ``need`` asks for (snapshot id -> content; ``found_in``: candidates known to hold it).

    ``merged`` holds what ``need`` asks for (:func:`exact_path` keeps it so): only an
    entry of ``s`` that is not the very entry of ``merged`` can lack it."""
    if s[0] != merged[0] or s[1] != merged[1] or s[3] != merged[3] or len(s[2]) != len(merged[2]):
        return False
    if s[2] is not merged[2]:
        for e, m in zip(s[2], merged[2], strict=True):
            if e is not m:  # (most entries are the very objects: states stepped from one)
                c = e[1]
                if e[0] != m[0] or e[2] != m[2]:
                    return False
                if c.__class__ is frozenset:
                    if not c <= m[1]:
                        return False
                    sid = e[0]
                    if sid in need and c is not found_in.get(sid) and need[sid] not in c:
                        return False
                elif c != m[1]:
                    return False
    return True
