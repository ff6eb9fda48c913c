"""Which retired session appended a turn, kept compact for the streaming checker.

A read of one session may show a turn of another session long after that session was
judged and dropped (``cross-session-bleed``); telling that apart from a ``phantom-turn``,
and proving it with the append's invoke and completion, needs one record per non-failed
append of every retired session. That is the only state of the streaming checker that
grows with the run, so it holds no payload: a row is the token's 64-bit hash and CRC-32
(the token itself is the one the read shows), the owner's rank and name id, and the
append's invoke and completion as index, time and an interned "shape" (process, pid, role
or type and error), from which :meth:`RetiredOwners.of` rebuilds the events exactly.
About 100 bytes per retired append (:data:`BYTES_PER_ROW`, measured in
``tests/checker/test_stream_memory.py``); an append whose events do not fit a shape
(a value other than ``[role, token]``, a completion with a value) is kept whole.

Two different tokens with equal 64-bit hash *and* CRC-32 would be confused; the chance is
about ``n**2 / 2**97`` for ``n`` appends, far below anything a run can reach.
"""

from __future__ import annotations

import sys
import zlib
from array import array

from harness.checker.ops import Pair
from harness.history import Event

__all__ = ["BYTES_PER_ROW", "RetiredOwners"]

#: Rough retained bytes per retired append (dict slot, key, row columns).
BYTES_PER_ROW = 100

_NONE = -1


class RetiredOwners:
    """Token -> owning retired session and its append op; the lowest-ranked owner wins,
    as with :class:`~harness.checker.turns.Owners` (first session in history order)."""

    def __init__(self) -> None:
        self._row: dict[int, int] = {}
        self._crc = array("L")
        self._rank = array("q")
        self._name = array("l")
        self._inv = array("q")  # index, time, shape: three per row
        self._comp = array("q")  # index, time, shape (all -1: no completion)
        self._names: list[str] = []
        self._name_ids: dict[str, int] = {}
        self._shapes: list[tuple[object, ...]] = []
        self._shape_ids: dict[tuple[object, ...], int] = {}
        #: Rows whose events fit no shape: row -> the pair itself.
        self._whole: dict[int, Pair] = {}

    def __len__(self) -> int:
        return len(self._rank)

    def nbytes(self) -> int:
        """Bytes held by the table itself (its index, columns and name/shape tables; the
        few rows kept whole are counted by number in :attr:`whole`, not by size)."""
        cols = (self._crc, self._rank, self._name, self._inv, self._comp)
        ints = sum(sys.getsizeof(k) + sys.getsizeof(r) for k, r in self._row.items())
        return (sys.getsizeof(self._row) + ints + sum(sys.getsizeof(c) for c in cols)
                + sum(sys.getsizeof(n) for n in self._names) + sys.getsizeof(self._names))

    @property
    def whole(self) -> int:
        """How many rows keep their append's events whole (their values fit no shape)."""
        return len(self._whole)

    def add(self, token: str, rank: int, session: str, pair: Pair) -> None:
        """Record a non-failed append of ``token`` by the session of that rank."""
        h = hash(token)
        row = self._row.get(h)
        crc = zlib.crc32(token.encode("utf-8", "surrogatepass"))
        if row is not None and self._crc[row] == crc:
            if self._rank[row] <= rank:
                return
            self._write(row, crc, rank, session, pair)
            return
        if row is not None:  # a hash collision with another token: keep the first one
            return
        self._row[h] = len(self._rank)
        self._crc.append(0)
        self._rank.append(0)
        self._name.append(0)
        self._inv.extend((0, 0, 0))
        self._comp.extend((0, 0, 0))
        self._write(len(self._rank) - 1, crc, rank, session, pair)

    def of(self, token: str) -> tuple[int, str, Pair] | None:
        """``(rank, session, append op)`` of the token's owner, or None."""
        row = self._row.get(hash(token))
        if row is None or self._crc[row] != zlib.crc32(token.encode("utf-8", "surrogatepass")):
            return None
        name = self._names[self._name[row]]
        whole = self._whole.get(row)
        if whole is not None:
            return self._rank[row], name, whole
        i, t, s = self._inv[3 * row: 3 * row + 3]
        process, pid, role, as_list = self._shapes[s]
        value: object = [role, token] if as_list else (role, token)
        inv = Event(i, t, process, "invoke", "append", name, value, None, pid)  # type: ignore[arg-type]
        ci, ct, cs = self._comp[3 * row: 3 * row + 3]
        comp = None
        if cs != _NONE:
            typ, error, cpid, vk = self._shapes[cs]
            cv: object = None if vk is None else [role, token] if vk is list else (role, token)
            comp = Event(ci, ct, process, typ, "append", name, cv, error, cpid)  # type: ignore[arg-type]
        return self._rank[row], name, (inv, comp)

    def _write(self, row: int, crc: int, rank: int, session: str, pair: Pair) -> None:
        self._crc[row] = crc
        self._rank[row] = rank
        nid = self._name_ids.get(session)
        if nid is None:
            nid = self._name_ids[session] = len(self._names)
            self._names.append(session)
        self._name[row] = nid
        self._whole.pop(row, None)
        inv, comp = pair
        v = inv.value
        fits = (inv.error is None and inv.type == "invoke" and inv.f == "append"
                and inv.session == session and (type(v) is list or type(v) is tuple)
                and type(inv.time) is int and type(inv.index) is int)
        if comp is not None:
            fits = fits and ((comp.value is None or comp.value == v) and comp.f == "append" and comp.session == session
                             and comp.process == inv.process and type(comp.time) is int
                             and type(comp.index) is int)
        if not fits:
            self._whole[row] = pair
            return
        try:  # a junk (unhashable) process, pid or error fits no shape
            ishape = self._shape((inv.process, inv.pid, v[0], type(v) is list))
            cshape = _NONE if comp is None else self._shape(
                (comp.type, comp.error, comp.pid, _value_kind(comp.value)))
        except TypeError:
            self._whole[row] = pair
            return
        self._inv[3 * row: 3 * row + 3] = array("q", (inv.index, inv.time, ishape))
        if comp is None:
            self._comp[3 * row: 3 * row + 3] = array("q", (_NONE, _NONE, _NONE))
        else:
            self._comp[3 * row: 3 * row + 3] = array("q", (comp.index, comp.time, cshape))

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
