"""The ``disk-full`` fault (SQLite): writes that must grow the database fail, for a while.

Every SQLite connection in every worker gets ``PRAGMA max_page_count`` set to the file's
current page count, for ``duration`` s (default 0.5): a write that must grow the database
fails with SQLITE_FULL ("database or disk is full"), SQLite's own out-of-space path. Why
not a real full disk: filling a filesystem hurts every process on the machine, the
harness's own logs first; ``RLIMIT_FSIZE`` gives EFBIG, which SQLite reports as an I/O
error, not SQLITE_FULL. ``max_page_count`` is per connection, so the workers apply it
themselves at their next op when the shared board's switch says so (they find the store's
connections with the garbage collector, no store cooperation needed).

Controlled mode: the switch is on for ``for_steps`` decisions (default 20); each worker
applies it at its next op, as in free mode.

Example: ``[[faults]] kind = "disk-full", every = 1.0, duration = 0.3``.
"""

from __future__ import annotations

from dataclasses import dataclass

from harness.faults.base import Fault, Key, Stepped, Timed, duration

__all__ = ["KIND", "DiskFull"]


@dataclass(frozen=True, slots=True)
class DiskFull:
    name: str = "disk-full"
    backends: tuple[str, ...] = ("sqlite",)
    destructive: bool = False
    aimed: bool = False
    keys: tuple[Key, ...] = (duration(0.5),)
    for_steps: int | None = 20

    def at_time(self, fault: Fault, nemesis: Timed) -> None:
        _switch(fault, nemesis, "duration")

    def at_step(self, fault: Fault, nemesis: Stepped) -> None:
        _switch(fault, nemesis, "for_steps")


def _switch(fault: Fault, nemesis: Timed, span: str) -> None:
    """Turn the board's disk-full switch on, and off after ``fault[span]`` (seconds in free
    mode, decisions in controlled mode: whatever ``nemesis.later`` counts in)."""
    board = nemesis.board
    board.disk_full.value = fault["id"] + 1
    nemesis.log(fault, phase="start", **{span: fault[span]})

    def clear(cut: bool) -> None:
        if board.disk_full.value == fault["id"] + 1:  # a later disk-full owns it now
            board.disk_full.value = 0
        nemesis.log(fault, phase="end", cut=cut)

    nemesis.later(fault[span], clear)


KIND = DiskFull()
