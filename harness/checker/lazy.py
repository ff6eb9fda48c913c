"""The model the search walks when rollbacks take effect: snapshot contents chosen late.

The eager model (:mod:`~harness.checker.model`) fixes a snapshot's content where the search
places it. When a snapshot overlaps appends, each place gives another content, and a wrong
one shows only at a read after a rollback to it, often hundreds of ops later: the search
then backs up through every choice in between, once per wrong content. Here:

- **A snapshot's content is chosen by the rollback that restores it.** A snapshot whose id
  a rollback targets keeps, from where its id is placed, every state the session passes
  through while the snapshot could still take effect there (its *window*); a rollback to
  it chooses among them.
- **Choices stay open as a set of states** (:func:`step_set`): the search branches on the
  order of the ops only; a later read or append rules the wrong contents out.
- **A content nobody can restore any more is dropped**: once every rollback to a snapshot
  has been placed, states that differ only in its content are the same state.
- **A list holding a ghost turn is one value**, :data:`DIRTY`, whatever else it holds.

Why windows are exact. The window of snapshot X placed at point p closes at the first of:
an op that must follow X in real time (invoked after X returned), a listing (it sees the id
set, so X cannot move across it), a rollback to X. For any point t in [p, close), moving X
from p to t gives the same results to every op: between p and t no op looks at X's id (a
listing would have closed the window; a failed rollback to X, which needs X absent, cannot
be placed while X is present), no op must follow X, and the state at t is what a rollback
restores. Conversely a linearization with X at t is found with X's id placed at t or
earlier in the same window. :func:`certify` moves each snapshot to the point its content
came from, and the eager model replays the result (:func:`harness.checker.exact.replays`).

State: ``(turns, ids, contents, open)``: the turns; the frozenset of snapshot ids; for each
snapshot a rollback may still restore, ``(id, content, rollbacks left)`` sorted by id, the
content a tuple (fixed) or a frozenset of candidates; ``open``, ``(id, hi)`` of the
snapshots whose window is open.
"""

from __future__ import annotations

from bisect import bisect_left
from collections import Counter
from collections.abc import Callable, Sequence
from itertools import compress
from operator import is_not
from typing import Any

from harness.checker.model import GHOST, ModelOp

__all__ = ["LAZY_INIT", "certify", "entry_index", "make_step", "merge", "rank"]

Turns = tuple[str, ...]
Content = Turns | frozenset[Turns]
Contents = tuple[tuple[str, Content, int], ...]
Open = tuple[tuple[str, int], ...]
LazyState = tuple[Turns, frozenset[str], Contents, Open]

LAZY_INIT: LazyState = ((), frozenset(), (), ())

#: The turns once a ghost is among them (:data:`~harness.checker.model.GHOST`: an
#: acknowledged append no read shows). No read and no append whose parent a read showed
#: can follow such a list, only more appends and snapshots, until a rollback replaces
#: it: every such list is the same to what comes after, so they are one value, and the
#: search sees one state where it would see one per place and number of ghosts.
DIRTY: tuple[str, ...] = ("\x00dirty",)

ROLLBACKS = ("rollback", "rollback?")


def entry_index(contents: Contents, sid: str) -> int:
    """The place of snapshot ``sid``'s entry in a state's contents, -1 if it has none.

    Contents are sorted by id, each id once (a snapshot's id is placed once), so ``(sid,)``
    sorts just before its entry and no content is ever compared: a search (two of them on
    a path from the look-ahead) on states of dozens of entries, where a walk compared each."""
    i = bisect_left(contents, (sid,))
    return i if i < len(contents) and contents[i][0] == sid else -1


def _grow(contents: Contents, open_: Open, turns: Turns) -> Contents:
    """Add ``turns`` to the candidates of every open snapshot."""
    if not open_:
        return contents
    # each open snapshot's entry found by bisection: a state holds dozens of entries and
    # one or two windows are open; an entry that does not change is the same object
    # (searches keep many states)
    out: list[tuple[str, Content, int]] | None = None
    for sid, _ in open_:
        i = entry_index(contents, sid)
        if i >= 0:
            e = contents[i]
            if e[1].__class__ is frozenset:
                if out is None:
                    out = list(contents)
                out[i] = (sid, e[1] | {turns}, e[2])
    return contents if out is None else tuple(out)


def make_step(ops: Sequence[ModelOp]) -> Callable[[LazyState, ModelOp], list[LazyState]]:
    """The lazy model's ``step`` for one session's ops (it counts the rollbacks to each id)."""
    left = Counter(o.arg for o in ops if o.kind in ROLLBACKS)

    # the sets of ids and the contents a snapshot makes, one object for each value: the
    # same set recurs on every branch of a search that places the same snapshots (in
    # another order), and a search keeps tens of thousands of states
    made_ids: dict[tuple[frozenset[str], str], frozenset[str]] = {}
    made_contents: dict[tuple[Contents, str, Content], Contents] = {}
    # ... and the very set a listing returned, where it is one: a listing's test is then
    # most often an identity (sets of a hundred ids, compared at every listing)
    listed: dict[frozenset[str], frozenset[str]] = {o.out: o.out for o in ops if o.kind == "list"}

    def plus(ids: frozenset[str], sid: str) -> frozenset[str]:
        got = made_ids.get((ids, sid))
        if got is None:
            got = ids | {sid}
            got = made_ids[ids, sid] = listed.get(got, got)
        return got

    def add(contents: Contents, sid: str, content: Content) -> Contents:
        if not left[sid]:
            return contents  # no rollback targets it: its content is never read
        got = made_contents.get((contents, sid, content))
        if got is None:
            got = made_contents[contents, sid, content] = tuple(sorted(
                (*contents, (sid, content, left[sid]))))
        return got

    def step(state: LazyState, op: ModelOp) -> list[LazyState]:
        turns, ids, contents, open_ = state
        if open_:  # an op invoked after a snapshot returned ends that snapshot's window
            lo = op.lo
            if len(open_) == 1:  # (most often one: no generator for it)
                if open_[0][1] < lo:
                    open_ = ()
            elif any(hi < lo for _, hi in open_):
                open_ = tuple(x for x in open_ if x[1] >= lo)
        kind = op.kind
        if kind == "append":
            if op.out is not None and turns != op.out:
                return []
            # (concatenated: a quarter quicker than unpacking into a new tuple)
            new = DIRTY if op.arg == GHOST or turns == DIRTY else turns + (op.arg,)  # noqa: RUF005
            return [(new, ids, _grow(contents, open_, new) if open_ else contents, open_)]
        if kind == "read":  # the same state object when nothing changed: searches keep one copy
            if turns != op.out:
                return []
            return [state if open_ is state[3] else (turns, ids, contents, open_)]
        if kind == "list":
            return [(turns, ids, contents, ())] if ids is op.out or ids == op.out else []
        if kind in ("snapshot", "snapshot-id"):
            sid = op.out
            if sid in ids:
                return []
            if kind == "snapshot-id" or not left[sid]:
                return [(turns, plus(ids, sid), contents, open_)]
            return [(turns, plus(ids, sid), add(contents, sid, frozenset({turns})),
                     tuple(sorted((*open_, (sid, op.hi)))))]
        if kind == "snapshot?":
            return [(turns, plus(ids, sid), add(contents, sid, turns), open_)
                    for sid in op.arg if sid not in ids]
        sid = op.arg
        if kind == "rollback-missing":
            return [(turns, ids, contents, open_)] if sid not in ids else []
        if kind not in ROLLBACKS:
            raise ValueError(f"unknown op kind {kind!r}")
        if sid not in ids:
            return []
        i = entry_index(contents, sid)
        assert i >= 0, "a snapshot with a rollback left keeps its content"
        _, content, n = contents[i]
        rest = open_ if isinstance(content, tuple) else tuple(x for x in open_ if x[0] != sid)
        out = []
        for c in (content,) if isinstance(content, tuple) else sorted(content):
            if n > 1:
                kept = (*contents[:i], (sid, frozenset({c}), n - 1), *contents[i + 1:])
            else:  # the last rollback to it: nobody reads its content again
                kept = (*contents[:i], *contents[i + 1:])
            out.append((c, ids, _grow(kept, rest, c), rest))
        return out

    return step


#: The most states times varying snapshots :func:`merge` takes on in one group (its work
#: grows with their product and the square of the snapshots): where states differ in
#: dozens of snapshots at once they are seldom a product, and merging them took 0.3 s per
#: set on a session of 4 writers whose only read was the final one (2026-11-26).
MERGE_WORK = 2_000


def merge(states: frozenset[LazyState],
          memo: dict[frozenset[Contents], list[Contents] | None] | None = None) -> frozenset[LazyState]:
    """The same choices in fewer states: states that differ only in the candidate contents
    of one snapshot are one state whose candidates are the union, merged until no two
    differ so (a set that is a product of independent choices, the usual case after
    rollbacks whose contents no read has told apart yet, becomes one state).

    Exact, unlike a join of states that differ in several snapshots: a state stands for
    the choice of any one of its candidates, and the lazy step treats candidates one by
    one (a rollback branches on each; a window adds the same turns to each), so the
    steps of a union are the union of the steps. ``states`` itself when nothing merges.

    ``memo``: what the contents of a group of states (equal but for them) merge to, kept
    by the caller across calls: the merge depends on the contents alone, and a search
    meets the same contents again and again (an append with no window open changes the
    turns only; 3 groups in 4 on a recorded 16-writer session, nearly all of which do not
    merge: correlated choices)."""
    if len(states) < 2:
        return states
    groups: dict[tuple[Turns, frozenset[str], Open, int], list[LazyState]] = {}
    for s in states:
        groups.setdefault((s[0], s[1], s[3], len(s[2])), []).append(s)
    if len(groups) == len(states):
        return states
    out: list[LazyState] = []
    for group in groups.values():
        if len(group) == 1:
            out.extend(group)
            continue
        if memo is None:
            merged = _merge_contents([s[2] for s in group])
        else:
            key = frozenset([s[2] for s in group])
            if key in memo:
                merged = memo[key]
            else:
                if len(memo) >= MERGE_MEMO:
                    memo.clear()
                merged = memo[key] = _merge_contents([s[2] for s in group])
        if merged is None:
            out.extend(group)
        else:
            turns, ids, _, open_ = group[0]
            out.extend([(turns, ids, c, open_) for c in merged])
    return frozenset(out) if len(out) < len(states) else states


#: Groups :func:`merge` remembers at most in one ``memo`` (emptied when full).
MERGE_MEMO = 4_096


def _merge_contents(group: list[Contents]) -> list[Contents] | None:
    """:func:`merge` on the distinct contents (same number of entries) of states equal but
    for them: the merged contents, None when none merge."""
    if len(group) > MERGE_WORK:
        return None  # too many, whatever varies (finding what varies costs as much)
    first = group[0]
    # the places where some state's entry differs from the first's (most entries are the
    # very objects the first holds: states stepped from one state share them)
    differ: set[int] = set()
    places = range(len(first))
    for c in group:
        if c is not first:  # the entries that are other objects, found at C speed
            differ.update([p for p in compress(places, map(is_not, first, c)) if first[p] != c[p]])
    vary = sorted(differ)
    if len(group) * len(vary) > MERGE_WORK:
        return None  # merging is a saving, not a duty: not at any cost
    if len(group) == 2 and len(vary) > 1:
        return None  # two states two snapshots apart (the usual pair kept: correlated choices)
    if not vary or any(c[p][0] != first[p][0] or c[p][2] != first[p][2]
                       or c[p][1].__class__ is not frozenset for c in group for p in vary):
        return None  # other snapshots or fixed contents: not one choice apart
    # each state's varying candidates (frozensets, checked above)
    rows: set[tuple[Any, ...]] = {tuple(c[p][1] for p in vary) for c in group}
    merged = True
    while merged and len(rows) > 1:
        merged = False
        for i in range(len(vary)):
            by_rest: dict[tuple[Any, ...], frozenset[Turns]] = {}
            for r in rows:
                rest = r[:i] + r[i + 1:]
                have = by_rest.get(rest)
                by_rest[rest] = r[i] if have is None else have | r[i]
            if len(by_rest) < len(rows):
                rows = {(*rest[:i], c, *rest[i:]) for rest, c in by_rest.items()}
                merged = True
    if len(rows) == len(group):
        return None
    out = []
    for r in rows:
        contents = list(first)
        for p, c in zip(vary, r, strict=True):
            contents[p] = (first[p][0], c, first[p][2])
        out.append(tuple(contents))
    return out


def rank(state: LazyState) -> Any:
    """A sort key of states that is the same on every run: the shortest turns, then the
    least, then the ids, the contents and the windows, each compared in sorted order (a
    frozenset's order, and so its ``repr``, depends on the process's string hashing)."""
    turns, ids, contents, open_ = state
    return (len(turns), turns, sorted(ids),
            [(sid, (1, sorted(c)) if c.__class__ is frozenset else (0, c), n)
             for sid, c, n in contents], open_)


def certify(order: Sequence[ModelOp], path: Sequence[LazyState]) -> list[ModelOp]:
    """The order the search found (``path[i]``: a state before ``order[i]``, then the last
    state, all along one run of the model), with each windowed snapshot moved to the point
    its content was taken from: the first point in its window where the turns equal what
    the first rollback to it restored. The eager model then replays the result
    (:func:`harness.checker.exact.replays`); a snapshot no rollback restored stays put."""
    restored: dict[str, Turns] = {}
    for i, op in enumerate(order):
        if op.kind in ROLLBACKS and op.arg not in restored:
            restored[op.arg] = path[i + 1][0]
    keys: list[float] = [float(i) for i in range(len(order))]
    for p, snap in enumerate(order):
        want = restored.get(snap.out) if snap.kind == "snapshot" else None
        if want is None or path[p][0] == want:
            continue
        for t in range(p + 1, len(order) + 1):
            passed = order[t - 1]  # moving the snapshot before op t passes op t - 1
            if t - 1 > p and (passed.kind == "list" or passed.lo > snap.hi or (
                    passed.kind in ROLLBACKS and passed.arg == snap.out)):
                break  # the window closed (the replay will say if the search was wrong)
            if path[t][0] == want:
                keys[p] = t - 0.5
                break
    return [o for _, o in sorted(zip(keys, order, strict=True), key=lambda ko: ko[0])]

