"""Checkpoints of one session: acknowledged snapshots must stay listed and restorable.

A snapshot id is *known* from the moment an ok snapshot op returned it, or an ok
``list_snapshots`` showed it. Rollback never removes snapshots, so

- a ``list_snapshots`` invoked after an id became known must show it;
- a rollback invoked after an id became known must not fail with "snapshot not found";
- two ok snapshot ops must not return the same id (the second overwrote the first);

else ``vanished-checkpoint``. A rollback that succeeds on an id no snapshot op of the
session can have created (nor one invoked before the rollback completed) is a
``bad-rollback``; a ``list_snapshots`` that raised or returned something other than a list
of ids is ``unreadable``.
"""

from __future__ import annotations

import re
from bisect import bisect_left

from harness.checker.evidence import Reporter
from harness.checker.ops import INF, Pair, SessionOps, describe, hi_of, short
from harness.history import Event

__all__ = ["NOT_FOUND", "check_checkpoints"]

#: A rollback error that means "that snapshot does not exist".
NOT_FOUND = re.compile(r"^(?:[\w.]+\.)?(?:SnapshotNotFound|KeyError)\b")

#: ``(time known, id, the events that made it known)``.
_Known = tuple[int, str, tuple[Event, Event]]


def check_checkpoints(so: SessionOps, rep: Reporter) -> None:
    """Report the session's ``vanished-checkpoint`` violations and the checkpoint-side
    ``bad-rollback`` and ``unreadable`` ones."""
    known = _known(so, rep)
    times = [k[0] for k in known]
    _check_listings(so, rep, known)
    _check_rollbacks(so, rep, known, times)


def _known(so: SessionOps, rep: Reporter) -> list[_Known]:
    known: list[_Known] = []
    first: dict[str, tuple[Event, Event]] = {}
    for inv, comp in so.snapshots:
        if comp is None or comp.type != "ok" or type(comp.value) is not str:
            continue
        sid = comp.value
        if sid in first:
            a, b = first[sid]
            rep.add(
                "vanished-checkpoint",
                so.session,
                sid,
                f"Snapshot {short(sid)} was returned by {describe(b)} and again by "
                f"{describe(comp)}, so the second overwrote the first checkpoint.",
                [a, b, inv, comp],
                blame=comp,
            )
        else:
            first[sid] = (inv, comp)
        known.append((comp.time, sid, (inv, comp)))
    for inv, comp in so.lists:
        if comp is not None and comp.type == "ok" and _ids(comp.value) is not None:
            known.extend((comp.time, sid, (inv, comp)) for sid in comp.value)
    known.sort(key=lambda k: k[0])
    return known


def _ids(v: object) -> list[str] | None:
    if (type(v) is list or type(v) is tuple) and all(type(x) is str for x in v):  # type: ignore[union-attr]
        return list(v)  # type: ignore[arg-type]
    return None


def _check_listings(so: SessionOps, rep: Reporter, known: list[_Known]) -> None:
    listings: list[tuple[Event, Event, list[str]]] = []
    for inv, comp in so.lists:
        if comp is None or comp.type not in ("ok", "fail"):
            continue
        ids = _ids(comp.value) if comp.type == "ok" else None
        if ids is None:
            what = "raised " + (comp.error or "an error") if comp.type == "fail" else (
                "returned something other than a list of snapshot ids")
            rep.add(
                "unreadable",
                so.session,
                ("list", comp.index),
                f"The list_snapshots of session {so.session!r} by {describe(comp)} {what}.",
                [inv, comp],
                blame=comp,
            )
            continue
        listings.append((inv, comp, ids))
    listings.sort(key=lambda x: x[0].time)
    required: dict[str, tuple[Event, Event]] = {}
    k = 0
    for inv, comp, ids in listings:
        while k < len(known) and known[k][0] < inv.time:
            required.setdefault(known[k][1], known[k][2])
            k += 1
        for sid in sorted(required.keys() - set(ids)):
            a, b = required[sid]
            rep.add(
                "vanished-checkpoint",
                so.session,
                sid,
                f"Snapshot {short(sid)} was known since {describe(b)}, but the later "
                f"list_snapshots by {describe(comp)} does not show it.",
                [a, b, inv, comp],
                blame=comp,
            )


def _check_rollbacks(so: SessionOps, rep: Reporter, known: list[_Known], times: list[int]) -> None:
    created = {k[1]: k[2] for k in known if k[2][1].f == "snapshot"}
    unknown_snaps = [inv.time for inv, comp in so.snapshots if hi_of(comp) == INF and (
        comp is None or comp.type != "fail")]
    for inv, comp in so.rollbacks:
        if comp is None or type(inv.value) is not str:
            continue
        sid = inv.value
        if comp.type == "fail" and NOT_FOUND.match(comp.error or ""):
            n = bisect_left(times, inv.time)
            hit = next((k for k in known[:n] if k[1] == sid), None)
            if hit is not None:
                a, b = hit[2]
                rep.add(
                    "vanished-checkpoint",
                    so.session,
                    sid,
                    f"Snapshot {short(sid)} was known since {describe(b)}, but the later "
                    f"rollback to it by {describe(comp)} failed with {short(comp.error, 60)}.",
                    [a, b, inv, comp],
                    blame=comp,
                )
        elif comp.type == "ok":
            _check_target(so, rep, (inv, comp), created.get(sid), unknown_snaps)


def _check_target(
    so: SessionOps,
    rep: Reporter,
    rb: Pair,
    snap: tuple[Event, Event] | None,
    unknown_snaps: list[int],
) -> None:
    inv, comp = rb
    assert comp is not None
    if snap is not None and snap[0].time <= comp.time:
        return
    if snap is None and any(t <= comp.time for t in unknown_snaps):
        return
    why = (
        f"snapshot {short(inv.value)} was only created later, by {describe(snap[0])}"
        if snap is not None
        else f"no snapshot op of session {so.session!r} created {short(inv.value)}"
    )
    rep.add(
        "bad-rollback",
        so.session,
        ("rollback", comp.index),
        f"The rollback by {describe(comp)} succeeded, but {why}.",
        [inv, comp, *(snap or ())],
        blame=comp,
    )
