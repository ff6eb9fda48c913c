"""Mutations of valid histories that each introduce exactly one kind of violation.

Each mutation picks, with ``rng``, a target for which the violation is certain whatever
the concurrency around it (a turn acknowledged before the read began with no rollback
anywhere near, two turns whose appends did not overlap, a snapshot id acknowledged before
the listing began, ...), and returns the mutated history with the kind a checker must
report, or None if the history offers no such target.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from harness.history import Event, iter_ops

INF = 1 << 62


@dataclass
class OpView:
    inv: Event
    comp: Event | None

    @property
    def lo(self) -> int:
        return self.inv.time

    @property
    def hi(self) -> int:
        return self.comp.time if self.comp is not None and self.comp.type == "ok" else INF

    @property
    def failed(self) -> bool:
        return self.comp is not None and self.comp.type == "fail"


def _ops(events: Sequence[Event]) -> list[OpView]:
    return [OpView(i, c) for i, c in iter_ops(events) if i.session is not None]


def _set_value(events: Sequence[Event], e: Event, value: Any) -> list[Event]:
    out = list(events)
    out[e.index] = replace(e, value=value)
    return out


def _ok_reads(ops: list[OpView]) -> list[OpView]:
    return [o for o in ops if o.inv.f == "read" and o.hi != INF]


def drop_acked(events: Sequence[Event], rng: random.Random) -> tuple[list[Event], str] | None:
    ops = _ops(events)
    appends = {o.inv.value[1]: o for o in ops if o.inv.f == "append" and not o.failed}
    cands = []
    for r in _ok_reads(ops):
        assert r.comp is not None
        s = r.inv.session
        rbs = [o for o in ops if o.inv.f == "rollback" and o.inv.session == s and not o.failed]
        for i, (_, tok) in enumerate(r.comp.value):
            a = appends[tok]
            if a.hi < r.lo and not any(rb.hi >= a.lo and rb.lo <= r.comp.time for rb in rbs):
                cands.append((r, i))
    if not cands:
        return None
    r, i = rng.choice(cands)
    assert r.comp is not None
    v = [list(x) for x in r.comp.value]
    del v[i]
    return _set_value(events, r.comp, v), "lost-turn"


def duplicate(events: Sequence[Event], rng: random.Random) -> tuple[list[Event], str] | None:
    cands = [r for r in _ok_reads(_ops(events)) if r.comp is not None and r.comp.value]
    if not cands:
        return None
    r = rng.choice(cands)
    assert r.comp is not None
    v = [list(x) for x in r.comp.value]
    i = rng.randrange(len(v))
    v.insert(rng.randint(i + 1, len(v)), list(v[i]))
    return _set_value(events, r.comp, v), "duplicate-turn"


def swap(events: Sequence[Event], rng: random.Random) -> tuple[list[Event], str] | None:
    ops = _ops(events)
    appends = {o.inv.value[1]: o for o in ops if o.inv.f == "append" and not o.failed}
    cands = []
    for r in _ok_reads(ops):
        assert r.comp is not None
        v = r.comp.value
        for i in range(len(v) - 1):
            if appends[v[i][1]].hi < appends[v[i + 1][1]].lo:
                cands.append((r, i))
    if not cands:
        return None
    r, i = rng.choice(cands)
    assert r.comp is not None
    v = [list(x) for x in r.comp.value]
    v[i], v[i + 1] = v[i + 1], v[i]
    return _set_value(events, r.comp, v), "reordered-turns"


def bleed(events: Sequence[Event], rng: random.Random) -> tuple[list[Event], str] | None:
    ops = _ops(events)
    appends = [o for o in ops if o.inv.f == "append" and not o.failed]
    reads = _ok_reads(ops)
    cands = [(a, r) for a in appends for r in reads if a.inv.session != r.inv.session]
    if not cands:
        return None
    a, r = rng.choice(cands)
    assert r.comp is not None
    v = [list(x) for x in r.comp.value]
    v.insert(rng.randint(0, len(v)), list(a.inv.value))
    return _set_value(events, r.comp, v), "cross-session-bleed"


def drop_listed(events: Sequence[Event], rng: random.Random) -> tuple[list[Event], str] | None:
    ops = _ops(events)
    acked: dict[str, int] = {}
    for o in ops:
        if o.inv.f == "snapshot" and o.hi != INF and o.comp is not None:
            acked[o.comp.value] = o.hi
        if o.inv.f == "list_snapshots" and o.hi != INF and o.comp is not None:
            for sid in o.comp.value:
                acked[sid] = min(acked.get(sid, INF), o.hi)
    cands = [
        (o, sid)
        for o in ops
        if o.inv.f == "list_snapshots" and o.hi != INF and o.comp is not None
        for sid in o.comp.value
        if acked.get(sid, INF) < o.lo
    ]
    if not cands:
        return None
    o, sid = rng.choice(cands)
    assert o.comp is not None
    return _set_value(events, o.comp, [x for x in o.comp.value if x != sid]), "vanished-checkpoint"


_GARBAGE: list[Any] = ["garbage", [["user"]], [[1, 2]], {"turns": []}, [["user", "a", "b"]], None]


def corrupt(events: Sequence[Event], rng: random.Random) -> tuple[list[Event], str] | None:
    reads = _ok_reads(_ops(events))
    if not reads:
        return None
    r = rng.choice(reads)
    assert r.comp is not None
    return _set_value(events, r.comp, rng.choice(_GARBAGE)), "unreadable"


MUTATIONS: dict[str, Callable[[Sequence[Event], random.Random], tuple[list[Event], str] | None]] = {
    "drop_acked": drop_acked,
    "duplicate": duplicate,
    "swap": swap,
    "bleed": bleed,
    "drop_listed": drop_listed,
    "corrupt": corrupt,
}


def scramble(events: Sequence[Event], rng: random.Random) -> list[Event]:
    """A few random changes that may or may not break validity: swap two reads' values in
    one session, truncate or thin a read, turn an append's ok into info or fail, drop an id
    from a listing; and near rollbacks (:func:`_near_rollback`). For checking a checker
    against brute force, both ways."""
    ops = _ops(events)
    out = list(events)
    reads = [r for r in _ok_reads(ops) if r.comp is not None]
    for _ in range(rng.randint(1, 3)):
        pick = rng.randrange(8)
        if pick >= 4:
            _near_rollback(out, ops, reads, pick - 4, rng)
            continue
        if pick == 0 and len(reads) >= 2:
            a, b = rng.sample(reads, 2)
            if a.inv.session == b.inv.session and a.comp is not None and b.comp is not None:
                out[a.comp.index] = replace(out[a.comp.index], value=b.comp.value)
                out[b.comp.index] = replace(out[b.comp.index], value=a.comp.value)
        elif pick == 1 and reads:
            r = rng.choice(reads)
            assert r.comp is not None
            v = list(out[r.comp.index].value)
            v = v[: rng.randint(0, len(v))] if rng.random() < 0.5 else [x for x in v if rng.random() < 0.8]
            out[r.comp.index] = replace(out[r.comp.index], value=v)
        elif pick == 2:
            apps = [o for o in ops if o.inv.f == "append" and o.comp is not None and o.hi != INF]
            if apps:
                c = rng.choice(apps).comp
                assert c is not None
                out[c.index] = replace(c, type=rng.choice(["info", "fail"]), value=None)
        else:
            lists = [o for o in ops if o.inv.f == "list_snapshots" and o.comp is not None
                     and o.hi != INF and o.comp.value]
            if lists:
                c = rng.choice(lists).comp
                assert c is not None
                v = list(c.value)
                v.pop(rng.randrange(len(v)))
                out[c.index] = replace(c, value=v)
    return out


def _near_rollback(out: list[Event], ops: list[OpView], reads: list[OpView], pick: int,
                   rng: random.Random) -> None:
    """One change around rollbacks and snapshots, in place: (0) a rollback targets another
    id (another snapshot's of the session, or one no snapshot made); (1) a rollback's ok
    becomes a "not found" failure, or such a failure an ok; (2) a snapshot acknowledges
    another snapshot's id, or a fresh one; (3) the first read after a rollback shows what
    the last read before it showed."""
    rbs = [o for o in ops if o.inv.f == "rollback" and o.comp is not None]
    snaps = [o for o in ops if o.inv.f == "snapshot" and o.comp is not None and o.comp.type == "ok"]
    if pick == 0 and rbs:
        r = rng.choice(rbs)
        ids = [o.comp.value for o in snaps if o.inv.session == r.inv.session and o.comp is not None]
        new = rng.choice(ids) if ids and rng.random() < 0.7 else f"gone{rng.randrange(100)}"
        out[r.inv.index] = replace(out[r.inv.index], value=new)
    elif pick == 1 and rbs:
        r = rng.choice(rbs)
        c = r.comp
        assert c is not None
        if c.type == "ok":
            out[c.index] = replace(c, type="fail", value=None, error="SnapshotNotFound: gone")
        elif c.type == "fail":
            out[c.index] = replace(c, type="ok", value=out[r.inv.index].value, error=None)
    elif pick == 2 and snaps:
        c = rng.choice(snaps).comp
        assert c is not None
        others = [o.comp.value for o in snaps if o.comp is not None and o.comp is not c
                  and o.inv.session == c.session]
        new = rng.choice(others) if others and rng.random() < 0.7 else f"fresh{rng.randrange(100)}"
        out[c.index] = replace(c, value=new)
    elif pick == 3 and rbs and reads:
        r = rng.choice([o for o in rbs if o.comp is not None and o.comp.type == "ok"] or rbs)
        assert r.comp is not None
        same = [x for x in reads if x.inv.session == r.inv.session]
        after = [x for x in same if x.lo >= r.comp.time]
        before = [x for x in same if x.hi <= r.lo]
        if after and before:
            a, b = min(after, key=lambda x: x.lo), max(before, key=lambda x: x.hi)
            assert a.comp is not None and b.comp is not None
            out[a.comp.index] = replace(out[a.comp.index], value=out[b.comp.index].value)
