"""Arrays of 64-bit integers kept in a file instead of memory: where the streaming checker's
table of retired appends goes during a run (:class:`harness.checker.owner_table.
RetiredOwners` takes any array factory), so the coordinator's memory does not grow with the
run's length. Reads and writes are ``pread``/``pwrite`` of a row at a time: the table is
written once per append of a retired session and read only for a turn that shows up in
another session (a bleed to prove). The files live in the run directory, removed when the
run is checked (:meth:`Spill.close`)."""

from __future__ import annotations

import itertools
import os
import shutil
from array import array
from collections.abc import Iterable
from pathlib import Path
from typing import overload

__all__ = ["FileArray", "Spill"]

_Q = 8  # bytes per element


class FileArray:
    """The part of ``array("q")``'s interface the owner table uses, backed by a file."""

    def __init__(self, path: Path) -> None:
        self.fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o600)
        self.n = 0

    def __len__(self) -> int:
        return self.n

    def extend(self, values: Iterable[int]) -> None:
        data = array("q", values).tobytes()
        os.pwrite(self.fd, data, self.n * _Q)
        self.n += len(data) // _Q

    @overload
    def __getitem__(self, i: int) -> int: ...
    @overload
    def __getitem__(self, i: slice) -> array[int]: ...

    def __getitem__(self, i: int | slice) -> int | array[int]:
        if isinstance(i, slice):
            start, stop, _ = i.indices(self.n)
            out = array("q")
            out.frombytes(os.pread(self.fd, max(0, stop - start) * _Q, start * _Q))
            return out
        if i < 0:
            i += self.n
        if not 0 <= i < self.n:
            raise IndexError(i)
        return array("q", os.pread(self.fd, _Q, i * _Q))[0]

    def __setitem__(self, i: int | slice, value: int | Iterable[int]) -> None:
        if isinstance(i, slice):
            start, _, _ = i.indices(self.n)
            assert not isinstance(value, int)
            os.pwrite(self.fd, array("q", value).tobytes(), start * _Q)
            return
        assert isinstance(value, int)
        if not 0 <= i < self.n:
            raise IndexError(i)
        os.pwrite(self.fd, array("q", (value,)).tobytes(), i * _Q)

    def close(self) -> None:
        os.close(self.fd)


class Spill:
    """A directory of :class:`FileArray` files; ``spill.array`` is the factory to give the
    owner table."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        directory.mkdir(exist_ok=True)
        self.arrays: list[FileArray] = []
        self.seq = itertools.count()

    def array(self) -> FileArray:
        a = FileArray(self.directory / f"{next(self.seq)}.q")
        self.arrays.append(a)
        return a

    def close(self) -> None:
        for a in self.arrays:
            a.close()
        shutil.rmtree(self.directory, ignore_errors=True)
