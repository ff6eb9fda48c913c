"""Which retired session appended a turn, kept compact for the streaming checker.

A read of one session may show a turn of another session long after that session was
judged and dropped (``cross-session-bleed``); telling that apart from a ``phantom-turn``,
and proving it with the append's invoke and completion, needs one row per non-failed
append of every retired session. That is the only state of the streaming checker that
grows with the run, so a row holds no payload: the token's 64-bit hash, the owner's id,
and the append's invoke and completion as index, time and an interned "shape" (process,
pid, role, or type, error and value kind), from which :meth:`RetiredOwners.of` rebuilds
both events exactly (the token itself is the one the read shows).

A turn the plan made (``w<writer>.<n>|...``, :mod:`harness.plan`) is found through its
writer's array indexed by ``n`` (8 bytes per op of the writer); any other token through a
dict (about 100 bytes more). About 70 bytes per plan-made retired append in all (measured
in ``tests/checker/test_stream_memory.py``). An append whose events fit no shape (a value
other than ``[role, token]``, a junk field) is kept whole.

Two different tokens with equal 64-bit hashes would be confused; the chance is about
``n**2 / 2**65`` for ``n`` appends, far below anything a run can reach.
"""

from __future__ import annotations

import re
import sys
from array import array
from collections.abc import Callable
from typing import Any

from harness.checker.ops import Pair
from harness.history import Event

__all__ = ["RetiredOwners", "writer_of"]

_NONE = -1
_WRITER = re.compile(r"w(\d+)\.(\d+)\|")
#: A writer's array grows to at most this many slots past its first turn; a turn further
#: out (no plan makes one) goes to the dict instead.
_MAX_SPAN = 1 << 26
#: Columns per row: hash, owner id, invoke index/time/shape, completion index/time/shape.
_W = 8


def writer_of(token: str) -> tuple[int, int] | None:
    """``(writer, n)`` of a plan-made turn ``w<writer>.<n>|...``, else None."""
    m = _WRITER.match(token)
    return None if m is None else (int(m.group(1)), int(m.group(2)))


class RetiredOwners:
    """Token -> owning retired session and its append op; the lowest-ranked owner wins,
    as with :class:`~harness.checker.turns.Owners` (first session in history order)."""

    def __init__(self, new_array: Callable[[], Any] = lambda: array("q")) -> None:
        # ``new_array`` makes the table's integer arrays: in memory (``array("q")``), or in
        # a file during a long run (harness.runner.spill), where they would grow with it
        self._new_array = new_array
        self._rows = new_array()  # _W columns per row
        self._by_writer: dict[int, tuple[int, array[int]]] = {}
        self._other: dict[int, int] = {}
        self._names: list[str] = []
        self._ranks = array("q")
        self._name_ids: dict[str, int] = {}
        self._shapes: list[tuple[object, ...]] = []
        self._shape_ids: dict[tuple[object, ...], int] = {}
        #: Rows whose events fit no shape: row -> the pair itself.
        self._whole: dict[int, Pair] = {}

    def __len__(self) -> int:
        return len(self._rows) // _W

    def nbytes(self) -> int:
        """Bytes held by the table (rows, indexes, names; rows kept whole are counted by
        number in :attr:`whole`, not by size)."""
        arrays = sum(sys.getsizeof(a) for _, a in self._by_writer.values())
        other = sys.getsizeof(self._other) + 60 * len(self._other)  # two int objects a key
        names = sum(sys.getsizeof(n) for n in self._names) + sys.getsizeof(self._names)
        return (sys.getsizeof(self._rows) + arrays + other + names + sys.getsizeof(self._ranks)
                + sys.getsizeof(self._name_ids) + sys.getsizeof(self._by_writer))

    @property
    def whole(self) -> int:
        """How many rows keep their append's events whole (their values fit no shape)."""
        return len(self._whole)

    def session(self, name: str, rank: int) -> int:
        """The id of a retired session (its rank is the batch order of sessions)."""
        nid = self._name_ids.get(name)
        if nid is None:
            nid = self._name_ids[name] = len(self._names)
            self._names.append(name)
            self._ranks.append(rank)
        return nid

    def add(self, token: str, sid: int, pair: Pair) -> None:
        """Record a non-failed append of ``token`` by the session ``sid`` (from
        :meth:`session`)."""
        h = hash(token)
        slot = self._slot(token, create=True)
        row = self._find(slot, h) if slot is not None else self._other.get(h)
        if row is not None:
            if self._ranks[self._rows[row * _W + 1]] <= self._ranks[sid]:
                return  # a lower-ranked session appended it too: it stays the owner
        else:
            row = len(self)
            self._rows.extend((0,) * _W)
            if slot is not None:
                slot[0][slot[1]] = row
            else:
                self._other[h] = row
        self._write(row, h, sid, pair)

    def of(self, token: str) -> tuple[int, str, Pair] | None:
        """``(rank, session, append op)`` of the token's owner, or None."""
        h = hash(token)
        slot = self._slot(token, create=False)
        row = self._find(slot, h) if slot is not None else self._other.get(h)
        if row is None:
            return None
        r = self._rows[row * _W: row * _W + _W]
        sid = r[1]
        name, rank = self._names[sid], self._ranks[sid]
        whole = self._whole.get(row)
        if whole is not None:
            return rank, name, whole
        process, pid, role, as_list = self._shapes[r[4]]
        value: object = [role, token] if as_list else (role, token)
        inv = Event(r[2], r[3], process, "invoke", "append", name, value, None, pid)
        comp = None
        if r[7] != _NONE:
            typ, error, cpid, vk = self._shapes[r[7]]
            cv: object = None if vk is None else [role, token] if vk is list else (role, token)
            comp = Event(r[5], r[6], process, typ, "append", name, cv, error, cpid)
        return rank, name, (inv, comp)

    def _slot(self, token: str, create: bool) -> tuple[array[int], int] | None:
        """The writer's array and position of a plan-made token, or None (use the dict)."""
        wn = writer_of(token)
        if wn is None:
            return None
        w, n = wn
        got = self._by_writer.get(w)
        if got is None:
            if not create:
                return None
            got = self._by_writer[w] = (n, self._new_array())
        base, arr = got
        i = n - base
        if i < 0 or i >= _MAX_SPAN:
            return None
        if i >= len(arr):
            if not create:
                return None
            arr.extend((_NONE,) * (i + 1 - len(arr)))
        return arr, i

    def _find(self, slot: tuple[array[int], int], h: int) -> int | None:
        row = slot[0][slot[1]]
        if row == _NONE or self._rows[row * _W] != h:
            return None  # an empty slot, or another token with the same w.n prefix
        return row

    def _write(self, row: int, h: int, sid: int, pair: Pair) -> None:
        self._whole.pop(row, None)
        inv, comp = pair
        name = self._names[sid]
        v = inv.value
        fits = (inv.error is None and inv.type == "invoke" and inv.f == "append"
                and inv.session == name and (type(v) is list or type(v) is tuple)
                and type(inv.time) is int and type(inv.index) is int)
        if comp is not None:
            fits = fits and ((comp.value is None or comp.value == v) and comp.f == "append"
                             and comp.session == name and comp.process == inv.process
                             and type(comp.time) is int and type(comp.index) is int)
        try:  # a junk (unhashable) process, pid or error fits no shape
            ishape = self._shape((inv.process, inv.pid, v[0], type(v) is list)) if fits else 0
            cshape = _NONE if comp is None or not fits else self._shape(
                (comp.type, comp.error, comp.pid, _value_kind(comp.value)))
        except TypeError:
            fits = False
            ishape = cshape = 0
        if not fits:
            self._whole[row] = pair
            self._rows[row * _W: row * _W + 2] = array("q", (h, sid))
            return
        c = (_NONE, _NONE, _NONE) if comp is None else (comp.index, comp.time, cshape)
        try:
            self._rows[row * _W: row * _W + _W] = array("q", (h, sid, inv.index, inv.time, ishape, *c))
        except OverflowError:  # an index or time past 64 bits: only a forged history has one
            self._whole[row] = pair
            self._rows[row * _W: row * _W + 2] = array("q", (h, sid))

    def _shape(self, key: tuple[object, ...]) -> int:
        sid = self._shape_ids.get(key)
        if sid is None:
            sid = self._shape_ids[key] = len(self._shapes)
            self._shapes.append(key)
        return sid


def _value_kind(v: object) -> type[object] | None:
    """How a completion's value is rebuilt: None, or the invoke's ``[role, token]`` as a
    list or a tuple."""
    return None if v is None else type(v)
