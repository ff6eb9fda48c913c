"""What the coordinator's wait loop does besides waiting, in a free-mode run: feed the
streaming check (:class:`harness.runner.streaming.RunStream`) with what bounds each log,
retire each generation of sessions with a quiescent reader once no worker can touch it,
and say the run's progress.

Bounds (what :mod:`harness.runner.follow` needs): a process the launcher started writes
nothing stamped before it was started, and nothing after the coordinator has reaped it
(:meth:`Watch.ended`); the nemesis writes on the thread that polls, so nothing it writes
later is stamped before the poll; a fault's helper process (a lock holder) stamps and
writes its few events at once and is never paused: :data:`SLACK_NS` covers it, and a
helper that broke it would be caught as a late event (the verdict then comes from the
batch checker).

Retirement: op ``n`` of a worker uses the sessions of generation ``n // session_lifetime``
(:meth:`harness.plan.Draw.generation`). The board's floor keeps the workers within a few
generations of each other (:class:`harness.runner.nemesis.board.Board`), so the sessions
open at once stay few however long the run. Once every slot still running has begun an op
of generation ``g`` or later, the ops of the generations before ``g`` have all returned (a
killed slot's replacement resumes after its op in flight): a reader process reads those
sessions (at most one reader every :data:`RETIRE_S`), and when its log is merged the
streaming check judges and drops them. The final read then covers the generations not
retired yet.
"""

from __future__ import annotations

import os
import time
from collections import deque
from collections.abc import Callable, Sequence
from typing import Any

from harness.history import READER_PREFIX
from harness.plan import Op, Plan
from harness.runner.follow import stem_of
from harness.runner.launch import Handle, Launcher
from harness.runner.nemesis.board import Board
from harness.runner.streaming import RunStream
from harness.scenario import session_name

__all__ = ["POLL_S", "RETIRE_S", "SLACK_NS", "Watch"]

POLL_S = 0.5  # how often the logs are merged and checked while the run goes on
RETIRE_S = 1.0  # at most one quiescent reader this often
SLACK_NS = 500_000_000  # a fault helper's stamp-to-write delay, at most

StartReader = Callable[[str, tuple[Op, ...]], Handle]


class Watch:
    """A free-mode run's streaming side (see the module docstring)."""

    def __init__(self, launcher: Launcher, stream: RunStream, plan: Plan,
                 start_reader: StartReader, lists: bool, duration: float) -> None:
        self.launcher = launcher
        self.stream = stream
        self.plan = plan
        self.start_reader = start_reader
        self.lists = lists  # the store lists snapshots: readers list them too
        self.duration = duration
        self.closed: set[str] = set()  # logs whose writers have ended for good
        self.nemesis_open = False
        self.nemesis: Any = None  # the free-mode nemesis, once the run has one
        self.helpers_live = True
        self.retired_below = 0  # the generations below this have been given a reader
        self.readers = 0
        self.started: list[Handle] = []  # the readers, stopped with the workers
        self.last_retire = 0.0
        self.last_poll = 0.0
        self.behind = False  # the last poll stopped at its deadline: the next is due at once
        self.last_progress = 0.0
        self.t0 = time.monotonic()
        self.window: deque[tuple[float, int]] = deque(maxlen=8)

    def bounds(self) -> tuple[dict[str, int | None], int | None]:
        """Each known log's bound (None: finished), and the bound of the others."""
        now = time.monotonic_ns()
        started: Sequence[Any] = getattr(self.launcher, "started", ())
        out: dict[str, int | None] = {}
        for h in started:
            stem = stem_of(h.log_path)
            out[stem] = None if stem in self.closed else int(h.started_ns)
        out["nemesis"] = now if self.nemesis_open else None
        for log in getattr(self.nemesis, "finished_logs", ()):  # reaped fault helpers
            out[stem_of(log)] = None
        return out, (now - SLACK_NS if self.helpers_live else None)

    def ended(self, handles: Sequence[Handle]) -> None:
        """These processes are reaped, and the coordinator writes nothing more for them."""
        self.closed.update(stem_of(h.log_path) for h in handles)

    def due(self) -> bool:
        return time.monotonic() >= self.next_due()

    def next_due(self) -> float:
        """When the next poll is due (monotonic s): every :data:`POLL_S`, or at once while
        the merge is behind."""
        return self.last_poll if self.behind else self.last_poll + POLL_S

    def poll(self, board: Board, live: set[int], until: float | None = None) -> list[Handle]:
        """Merge and check what the logs have grown by, until ``until`` (a
        ``time.monotonic()`` value: the rest at the next poll, then due at once; see
        :meth:`harness.runner.streaming.RunStream.poll`); move the board's floor to the
        generation of the slowest of the ``live`` slots; start the reader of the
        generations that became quiescent (returned, to be waited for)."""
        self.last_poll = time.monotonic()
        self.behind = not self.stream.poll(*self.bounds(), until=until)
        d = self.plan.draw
        if self.plan.explicit is not None or not d.session_lifetime:
            return []
        running = [d.generation(max(board.progress[s], 0)) for s in sorted(live)
                   if not board.finished[s]]
        board.floor.value = min(running) if running else -1
        reader = self._retire(running)
        return [reader] if reader is not None else []

    def _retire(self, running: Sequence[int]) -> Handle | None:
        d = self.plan.draw
        if not running or time.monotonic() - self.last_retire < RETIRE_S:
            return None
        below = min(running)
        if below <= self.retired_below:
            return None
        ops: list[Op] = []
        for g in range(self.retired_below, below):
            for i in range(d.sessions):
                s = session_name(i, g)
                ops.append(Op("read", s))
                if self.lists:
                    ops.append(Op("list_snapshots", s))
        self.retired_below = below
        self.last_retire = time.monotonic()
        self.readers += 1
        reader = self.start_reader(f"{READER_PREFIX}{self.readers}", tuple(ops))
        self.started.append(reader)
        return reader

    def progress_due(self) -> bool:
        """Whether to say the progress after a poll: after one that merged all it could,
        or :data:`POLL_S` after the last said (a merge behind polls at once, again and again)."""
        return not self.behind or time.monotonic() - self.last_progress >= POLL_S

    def progress(self, done: int, workers: int, begun: int) -> dict[str, Any]:
        """The ``progress`` event's data (the coordinator's docstring lists its keys)."""
        now = self.last_progress = time.monotonic()
        self.window.append((now, begun))
        t0, n0 = self.window[0]
        rate = (begun - n0) / (now - t0) if now > t0 else 0.0
        return {"done": done, "workers": workers, "ops": begun,
                "elapsed_s": round(now - self.t0, 1), "duration_s": self.duration,
                "ops_per_s": round(rate), "faults": self.stream.faults,
                "violations": dict(self.stream.found), "rss_mb": _rss_mb()}


def _rss_mb() -> float:
    """The coordinator's resident memory, in MiB (0 where /proc cannot tell)."""
    try:
        with open(f"/proc/{os.getpid()}/statm", "rb") as fh:
            return round(int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20, 1)
    except (OSError, ValueError, IndexError):
        return 0.0
