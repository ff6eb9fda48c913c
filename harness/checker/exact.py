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

import time
from collections.abc import Collection, Sequence
from typing import Any

from harness.checker.checkpoints import not_found
from harness.checker.evidence import Evidence
from harness.checker.linearize import Outcome, linearize
from harness.checker.model import ModelOp
from harness.checker.ops import INF, SessionOps, describe, group_by_session, short
from harness.checker.order_tree import read_tokens
from harness.checker.result import CheckResult
from harness.history import Event

__all__ = ["check_exact", "merge_results", "session_ops"]


def check_exact(
    events: Sequence[Event], *, budget_s: float = 30.0, skip: Collection[str] = ()
) -> CheckResult:
    """Search every session (but those in ``skip``) for a linearization, ``budget_s``
    seconds in all. ``valid`` is False if some session has none (or has an unreadable
    read), None if some session could not be decided in time, else True."""
    t0 = time.monotonic()
    deadline = t0 + budget_s
    sessions, n_ops = group_by_session(events)
    found = Evidence()
    unknown: list[str] = []
    searched = explored = 0
    todo = [name for name in sessions if name not in skip]
    for n, name in enumerate(todo):
        so = sessions[name]
        now = time.monotonic()
        if now > deadline:
            unknown.append(name)
            continue
        # a fair share of what is left (twice that: easy sessions leave most of theirs),
        # so one hard session cannot starve all the others
        share = min(deadline, now + 2 * (deadline - now) / (len(todo) - n))
        try:
            ops = session_ops(so, found)
        except _Unmodelled:
            unknown.append(name)
            continue
        out = linearize(ops, share)
        searched += 1
        explored += out.explored
        if out.ok is None:
            unknown.append(name)
        elif out.ok is False:
            _explain(so, ops, out, found)
    valid: bool | None = found.count() == 0
    if valid and unknown:
        valid = None
    stats: dict[str, Any] = {
        "checker": "exact",
        "ops": n_ops,
        "sessions": len(sessions),
        "sessions_searched": searched,
        "sessions_unknown": sorted(unknown),
        "states_explored": explored,
        "budget_s": budget_s,
        "seconds": round(time.monotonic() - t0, 6),
        "violations_by_kind": dict(found.totals),
    }
    return CheckResult(valid=valid, violations=found.violations(), stats=stats,
                       totals=dict(found.totals))


def merge_results(fast: CheckResult, exact: CheckResult) -> CheckResult:
    """The fast checker's verdict refined by the exact one: False if either found a
    violation, else None if the exact search was cut short, else True."""
    violations = fast.violations + exact.violations
    valid: bool | None = not (fast.total() or exact.total())
    if valid and exact.valid is None:
        valid = None
    stats = dict(fast.stats)
    stats["exact"] = exact.stats
    totals = dict(fast.counts())
    for kind, n in exact.counts().items():
        totals[kind] = totals.get(kind, 0) + n
    return CheckResult(valid=valid, violations=violations, stats=stats, totals=totals)


def session_ops(so: SessionOps, found: Evidence) -> list[ModelOp]:
    """The session's ops as the search sees them; unreadable reads and listings are
    reported to ``found`` and left out. Raises ``_Unmodelled`` for an op that may have taken
    effect but whose value breaks the history's format (the verdict is then unknown)."""
    ops: list[ModelOp] = []

    def add(kind: str, inv: Event, comp: Event | None, hi: int, arg: Any = None,
            out: Any = None) -> None:
        ops.append(ModelOp(len(ops), kind, inv.time, hi, arg, out, inv, comp))

    for inv, comp in so.appends:
        v = inv.value
        if comp is None or comp.type != "fail":
            if read_tokens([v]) is None:
                raise _Unmodelled(f"append with value {v!r}")
            add("append", inv, comp, _hi(comp), arg=_turn(v))
    for inv, comp in so.reads:
        if comp is not None and comp.type in ("ok", "fail"):
            toks = read_tokens(comp.value) if comp.type == "ok" else None
            if toks is None:
                _unreadable(so.session, "read", inv, comp, found)
            else:
                add("read", inv, comp, comp.time, out=tuple(map(_turn, comp.value)))
    created = _snapshot_ops(so, add)
    referenced = _rollback_ops(so, add)
    for inv, comp in so.lists:
        if comp is not None and comp.type in ("ok", "fail"):
            v = comp.value
            ok = comp.type == "ok" and type(v) is list and all(type(x) is str for x in v)
            if not ok:
                _unreadable(so.session, "list_snapshots", inv, comp, found)
            else:
                referenced.update(v)
                add("list", inv, comp, comp.time, out=frozenset(v))
    return _tighten(ops, tuple(sorted(referenced - created)))


def _tighten(ops: list[ModelOp], unexplained: tuple[str, ...]) -> list[ModelOp]:
    """Equivalent ops that are cheaper to search.

    An unknown-outcome append whose turn no read shows may as well never have happened
    (drop it: every state differs only by that turn, which no read shows); one whose turn
    a read shows must have taken effect before that read completed (that is its return).
    An append whose turn a read shows can only have taken effect on the state that read
    shows before the turn (:mod:`~harness.checker.order_tree` proves why): that is its ``out``.
    An unknown-outcome snapshot can only have created a fresh id when no id lacks its
    creator, which no later op can observe but a listing would contradict: drop it."""
    first_seen: dict[str, int] = {}
    before: dict[str, tuple[str, ...]] = {}
    for o in ops:
        if o.kind == "read":
            for i, t in enumerate(o.out):
                if o.hi < first_seen.get(t, INF):
                    first_seen[t] = o.hi
                before.setdefault(t, o.out[:i])
    out: list[ModelOp] = []
    for o in ops:
        if o.kind == "append":
            seen = first_seen.get(o.arg)
            if seen is None and o.hi == INF:
                continue
            hi = o.hi if seen is None or o.hi != INF else max(seen, o.lo)
            o = ModelOp(len(out), o.kind, o.lo, hi, o.arg, before.get(o.arg), o.inv, o.comp)
        elif o.kind == "snapshot?":
            if not unexplained:
                continue
            o = ModelOp(len(out), o.kind, o.lo, o.hi, unexplained, o.out, o.inv, o.comp)
        else:
            o = ModelOp(len(out), o.kind, o.lo, o.hi, o.arg, o.out, o.inv, o.comp)
        out.append(o)
    return out


def _turn(item: Any) -> str:
    """A turn as the model holds it: role and token in one string (a role changed by the
    store makes another turn)."""
    return f"{item[0]}{_SEP}{item[1]}"


_SEP = "\x1f"


class _Unmodelled(Exception):
    """An op that may have taken effect but whose effect the model cannot know (a value
    that breaks the history's format): the session's verdict is unknown."""


def _hi(comp: Event | None) -> int:
    return comp.time if comp is not None and comp.type == "ok" else INF


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


def _explain(so: SessionOps, ops: list[ModelOp], out: Outcome, found: Evidence) -> None:
    """Report why the session has no linearization. What the fast checker proves on the
    session (a few ops that show the violation, named by its precise kind) beats the
    search's deepest dead end, which only shows where the search gave up; the dead end is
    reported when the fast checker finds nothing (``check`` searches only such sessions)."""
    from harness.checker.fast import check_sessions

    fast = Evidence()
    check_sessions({so.session: so}, fast)
    for v in fast.violations():
        if v.kind != "unreadable":  # session_ops reported those already
            found.add(v.kind, v.session, ("fast", v.message), v.message, v.events)
    if any(k != "unreadable" for k in fast.totals):
        return
    session = so.session
    op = out.stuck
    assert op is not None and out.state is not None
    turns, snaps = out.state
    kind, detail = _kind(op, turns, {k for k, _ in snaps}, ops)
    who = describe(op.comp) if op.comp is not None else f"op {op.id}"
    found.add(
        kind,
        session,
        ("exact", op.id),
        f"No order of the {len(ops)} operations on session {session!r} that respects real "
        f"time explains their results: after placing {out.depth} of them the search could "
        f"not place the {op.kind.rstrip('?')} by {who}, which {detail}.",
        [op.inv, op.comp],
        blame=op.comp,
    )


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
    if op.kind in ("list", "rollback-missing", "snapshot"):
        return "vanished-checkpoint", f"is inconsistent with the snapshots {_seq(sorted(ids))}"
    if op.kind == "rollback":
        return "bad-rollback", f"targets {short(op.arg)}, which the model does not hold"
    return "lost-turn", "cannot precede the results that followed it"


def _seq(xs: Any, limit: int = 6) -> str:
    xs = list(xs)
    body = ", ".join(short(x.split(_SEP)[-1] if isinstance(x, str) else x, 24)
                     for x in xs[:limit])
    return f"[{body}{', …' if len(xs) > limit else ''}] ({len(xs)} item{'s' * (len(xs) != 1)})"
