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

from collections import Counter
from collections.abc import Callable, Sequence

from harness.checker.model import GHOST, ModelOp

__all__ = ["LAZY_INIT", "certify", "make_step"]

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


def _find(contents: Contents, sid: str) -> int:
    for i, c in enumerate(contents):
        if c[0] == sid:
            return i
    return -1


def _grow(contents: Contents, open_: Open, turns: Turns) -> Contents:
    """Add ``turns`` to the candidates of every open snapshot."""
    if not open_:
        return contents
    ids = {sid for sid, _ in open_}
    # an entry that does not change is the same object (searches keep many states)
    return tuple((e[0], e[1] | {turns}, e[2]) if e[0] in ids and isinstance(e[1], frozenset) else e
                 for e in contents)


def make_step(ops: Sequence[ModelOp]) -> Callable[[LazyState, ModelOp], list[LazyState]]:
    """The lazy model's ``step`` for one session's ops (it counts the rollbacks to each id)."""
    left = Counter(o.arg for o in ops if o.kind in ROLLBACKS)

    # the sets of ids and the contents a snapshot makes, one object for each value: the
    # same set recurs on every branch of a search that places the same snapshots (in
    # another order), and a search keeps tens of thousands of states
    made_ids: dict[tuple[frozenset[str], str], frozenset[str]] = {}
    made_contents: dict[tuple[Contents, str, Content], Contents] = {}

    def plus(ids: frozenset[str], sid: str) -> frozenset[str]:
        got = made_ids.get((ids, sid))
        if got is None:
            got = made_ids[ids, sid] = ids | {sid}
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
            if any(hi < lo for _, hi in open_):
                open_ = tuple(x for x in open_ if x[1] >= lo)
        kind = op.kind
        if kind == "append":
            if op.out is not None and turns != op.out:
                return []
            new = DIRTY if op.arg == GHOST or turns == DIRTY else (*turns, op.arg)
            return [(new, ids, _grow(contents, open_, new), open_)]
        if kind == "read":  # the same state object when nothing changed: searches keep one copy
            if turns != op.out:
                return []
            return [state if open_ is state[3] else (turns, ids, contents, open_)]
        if kind == "list":
            return [(turns, ids, contents, ())] if ids == op.out else []
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
        i = _find(contents, sid)
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

