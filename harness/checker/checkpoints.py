"""Checkpoints of one session: acknowledged snapshots must stay listed and restorable.

A snapshot id is *known* from the moment an ok snapshot op returned it, or an ok
``list_snapshots`` showed it. Rollback never removes snapshots, so

- a ``list_snapshots`` invoked after an id became known must show it;
- a rollback invoked after an id became known must not fail with "snapshot not found";

else ``vanished-checkpoint``. Two ok snapshot ops that return the same id are a
``reused-snapshot-id``: each snapshot op must create a new id, and that is all the evidence
shows (whether the store overwrote the first checkpoint, kept both under one id or merely
returned a stale id, only later ops could tell). A rollback that succeeds on an id no snapshot op of the
session can have created (nor one invoked before the rollback completed), and no listing
ever showed, is a ``bad-rollback``; a ``list_snapshots`` that raised or returned something other than a list
of ids is ``unreadable``.
"""

from __future__ import annotations

import re

from harness.checker.evidence import Evidence
from harness.checker.ops import INF, Pair, SessionOps, describe, hi_of, short
from harness.history import Event

__all__ = ["NOT_FOUND", "check_checkpoints", "not_found", "say_reused"]

#: A rollback error that means "that snapshot does not exist".
NOT_FOUND = re.compile(r"^(?:[\w.]+\.)?(?:SnapshotNotFound|KeyError)\b")


def not_found(error: object) -> bool:
    """Whether a failed rollback's error says "no such snapshot"."""
    return isinstance(error, str) and NOT_FOUND.match(error) is not None


def check_checkpoints(so: SessionOps, found: Evidence) -> None:
    """Report the session's ``vanished-checkpoint`` and ``reused-snapshot-id``
    violations and the checkpoint-side ``bad-rollback`` and ``unreadable`` ones."""
    created = _created(so, found)
    listings = _listings(so, found)
    if listings:
        _check_listings(so.session, found, created, listings)
    if so.rollbacks:
        _check_rollbacks(so, found, created, listings)


def _created(so: SessionOps, found: Evidence) -> dict[str, tuple[Event, Event]]:
    """The first ok snapshot op that returned each id (reporting ids returned again)."""
    first: dict[str, tuple[Event, Event]] = {}
    for inv, comp in so.snapshots:
        if comp is None or comp.type != "ok" or type(comp.value) is not str:
            continue
        sid = comp.value
        if sid in first:
            a, b = first[sid]
            found.add(
                "reused-snapshot-id",
                so.session,
                sid,
                say_reused(so.session, sid, b, comp),
                [a, b, inv, comp],
                blame=comp,
            )
        else:
            first[sid] = (inv, comp)
    return first


def say_reused(session: str, sid: str, first: Event, again: Event) -> str:
    """The sentence of a ``reused-snapshot-id``: ``first`` and ``again`` both returned it."""
    return (f"The snapshots of session {session!r} by {describe(first)} and by "
            f"{describe(again)} both returned id {short(sid)}, but every snapshot must get "
            f"a new id.")


_Listing = tuple[Event, Event, list[str]]


def _listings(so: SessionOps, found: Evidence) -> list[_Listing]:
    """The ok listings whose value is a list of ids (reporting the others as unreadable)."""
    out: list[_Listing] = []
    for inv, comp in so.lists:
        if comp is None or comp.type not in ("ok", "fail"):
            continue
        v = comp.value
        if comp.type == "ok" and type(v) is list and _all_str(v):
            out.append((inv, comp, v))
            continue
        what = (f"raised {comp.error or 'an error'}" if comp.type == "fail"
                else "returned something other than a list of snapshot ids")
        found.add(
            "unreadable",
            so.session,
            ("list", comp.index),
            f"The list_snapshots of session {so.session!r} by {describe(comp)} {what}.",
            [inv, comp],
            blame=comp,
        )
    return out


def _all_str(v: list[object]) -> bool:
    try:
        "".join(v)  # type: ignore[arg-type]  # C speed: raises on the first non-str
    except TypeError:
        return False
    return True


def _check_listings(
    session: str, found: Evidence, created: dict[str, tuple[Event, Event]], listings: list[_Listing]
) -> None:
    """Each listing shows every id known before it was invoked."""
    snaps = sorted(((c.time, sid) for sid, (_, c) in created.items()))
    by_hi = sorted(listings, key=lambda x: x[1].time)
    required: set[str] = set()
    ks = kl = 0
    for inv, comp, ids in sorted(listings, key=lambda x: x[0].time):
        lo = inv.time
        while ks < len(snaps) and snaps[ks][0] < lo:
            required.add(snaps[ks][1])
            ks += 1
        while kl < len(by_hi) and by_hi[kl][1].time < lo:
            required.update(by_hi[kl][2])
            kl += 1
        if len(ids) >= len(required) and required.issubset(ids):
            continue
        for sid in sorted(required.difference(ids)):
            a, b = _known_by(sid, created, by_hi[:kl])
            found.add(
                "vanished-checkpoint",
                session,
                sid,
                f"Snapshot {short(sid)} was known since {describe(b)}, but the later "
                f"list_snapshots by {describe(comp)} does not show it.",
                [a, b, inv, comp],
                blame=comp,
            )


def _known_by(
    sid: str, created: dict[str, tuple[Event, Event]], listings: list[_Listing]
) -> tuple[Event, Event]:
    """The op that made ``sid`` known first among its snapshot and ``listings`` (those
    completed before the listing at fault, in order of completion): the snapshot may have
    returned after a listing had already shown the id."""
    shown = next(((inv, comp) for inv, comp, ids in listings if sid in ids), None)
    made = created.get(sid)
    if made is None or (shown is not None and shown[1].time < made[1].time):
        assert shown is not None  # required: made, or shown by a listing before
        return shown
    return made


def _check_rollbacks(
    so: SessionOps, found: Evidence, created: dict[str, tuple[Event, Event]],
    listings: list[_Listing],
) -> None:
    unknown_snaps = [inv.time for inv, comp in so.snapshots if hi_of(comp) == INF and (
        comp is None or comp.type != "fail")]
    listed: set[str] | None = None  # every id some listing showed, when first needed
    for inv, comp in so.rollbacks:
        if comp is None or type(inv.value) is not str:
            continue
        sid = inv.value
        if comp.type == "fail" and not_found(comp.error):
            snap = created.get(sid)
            known: tuple[Event, Event] | None = None
            if snap is not None and snap[1].time < inv.time:
                known = snap
            else:
                known = next(((i, c) for i, c, ids in listings
                              if c.time < inv.time and sid in ids), None)
            if known is not None:
                a, b = known
                found.add(
                    "vanished-checkpoint",
                    so.session,
                    sid,
                    f"Snapshot {short(sid)} was known since {describe(b)}, but the later "
                    f"rollback to it by {describe(comp)} failed with {short(comp.error, 60)}.",
                    [a, b, inv, comp],
                    blame=comp,
                )
        elif comp.type == "ok":
            snap = created.get(sid)
            if snap is not None and snap[0].time <= comp.time:
                continue
            if listed is None:
                listed = set()
                for _, _, ids in listings:
                    listed.update(ids)
            if sid not in listed:
                _check_target(so, found, (inv, comp), snap, unknown_snaps)


def _check_target(
    so: SessionOps,
    found: Evidence,
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
    found.add(
        "bad-rollback",
        so.session,
        ("rollback", comp.index),
        f"The rollback by {describe(comp)} succeeded, but {why}.",
        [inv, comp, *(snap or ())],
        blame=comp,
    )
