"""The workers' side of the faults: a :class:`Board` in shared memory, on which each worker
marks the op it is about to run (so a killed slot's replacement continues after it) and
reads the disk-full switch, applied to every SQLite connection of its process."""

from __future__ import annotations

import gc
import sqlite3
from collections.abc import Iterable, Iterator
from typing import Any

__all__ = ["Board"]


class Board:
    """Shared memory between the coordinator and its workers: ``progress[slot]``, the op
    index each slot's process is about to run, and ``disk_full``, non-zero while a
    disk-full fault is on. Picklable while processes are being started."""

    def __init__(self, ctx: Any, slots: int) -> None:
        self.progress = ctx.Array("q", [-1] * slots, lock=False)
        self.disk_full = ctx.Value("q", 0, lock=False)

    def track(self, ops: Iterable[Any], slot: int, start: int) -> Iterator[Any]:
        """In a worker: yield its ops (the first being op ``start``), marking each on the
        board first and applying the disk-full switch between ops."""
        limit = _PageLimit()
        for i, op in enumerate(ops, start):
            self.progress[slot] = i
            limit.apply(self.disk_full.value)
            yield op


class _PageLimit:
    """Disk full inside a worker: ``max_page_count`` at the current size on every SQLite
    connection of this process while the switch is on, the old limit back after."""

    def __init__(self) -> None:
        self.on = 0
        self.saved: list[tuple[sqlite3.Connection, int]] = []

    def apply(self, switch: int) -> None:
        if switch == self.on:
            return
        self.on = switch
        if not switch:
            for conn, old in self.saved:
                _pragma(conn, f"PRAGMA max_page_count = {old}")
            self.saved = []
            return
        for conn in [o for o in gc.get_objects() if isinstance(o, sqlite3.Connection)]:
            limit = _pragma(conn, "PRAGMA max_page_count")
            size = _pragma(conn, "PRAGMA page_count")
            if limit is not None and size is not None:
                _pragma(conn, f"PRAGMA max_page_count = {max(size, 1)}")
                self.saved.append((conn, limit))


def _pragma(conn: sqlite3.Connection, sql: str) -> int | None:
    try:
        row = conn.execute(sql).fetchone()
    except sqlite3.Error:  # closed, or made in another thread: not ours to limit
        return None
    return int(row[0]) if row else None
