"""Following a run's logs as they grow: the merged history, event by event, in exactly the
order the batch merge gives once every log is finished (:func:`harness.history.iter_merge`
over :func:`harness.history_files.log_files`: by time, ties by log name, then position).

Contract: :meth:`Follower.poll` reads what the logs have grown by and yields the events
that can no longer be preceded by anything (indices numbered from 0 across polls), and an
:class:`Ended` marker for each log once its last event has been yielded. An event is
yielded only when, for every log not finished, the next event it can still write sorts
after it: the caller says, at each poll, what bounds each log's future (``bounds``: a
monotonic ns that log's next event is not earlier than, or None once its writer has ended
and written its last line). A worker process's bound is the time it was started (its
events are stamped after); the coordinator's own nemesis log's is the poll's time (it
writes on the thread that polls). Were a bound wrong, an event would arrive that sorts
before one already yielded: that is counted in :attr:`Follower.late` (then the order is
not the batch's, and the caller must not trust what it built from it).

A finished log is read lazily (plain or zstd), a growing one by offset; memory is the
events read and not yet yielded, which the bounds keep to about a poll's worth.
"""

from __future__ import annotations

import heapq
import os
from collections import deque
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import orjson

from harness.errors import HistoryError
from harness.history import Event, event_problem, renumbered, value_problem
from harness.history_files import PLAIN, ZST, iter_lines

__all__ = ["Ended", "Follower", "stem_of"]

_READ = 1 << 20  # bytes read from a growing log per poll at most, before yielding


def stem_of(path: Path | str) -> str:
    """A log's name without ``.jsonl`` or ``.jsonl.zst``: what it sorts by in the merge."""
    name = Path(path).name
    for ext in (ZST, PLAIN):
        if name.endswith(ext):
            return name[: -len(ext)]
    return name


@dataclass(frozen=True, slots=True)
class Ended:
    """A log whose last event has been yielded: its ``stem`` and the ``process`` that wrote
    it (None for a log with no event)."""

    stem: str
    process: int | str | None


@dataclass(slots=True)
class _Tail:
    stem: str
    path: Path
    offset: int = 0
    partial: bytes = b""
    events: deque[Event] = field(default_factory=deque)
    count: int = 0  # events read: the next one's position in its log
    last: int = -(1 << 62)  # time of the last event read
    lines: Iterator[bytes] | None = None  # a finished log, read lazily
    final: bool = False  # its writer has ended: what is on disk is all there is
    eof: bool = False  # final, and every line read
    line_no: int = 0  # lines read (for error messages)
    torn: tuple[int, str] | None = None
    process: int | str | None = None

    def key(self) -> tuple[int, str, int]:
        e = self.events[0]
        return (e.time, self.stem, self.count - len(self.events))


class Follower:
    """The merged history of the logs in ``directory`` (see the module docstring)."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.tails: dict[str, _Tail] = {}
        self.ended: set[str] = set()
        self.index = 0
        self.late = 0
        self._last_key: tuple[int, str, int] | None = None

    def poll(self, bounds: Mapping[str, int | None], default: int | None = None,
             ) -> Iterator[Event | Ended]:
        """Read what the logs have grown by; yield what is now safe (see the module
        docstring). ``bounds`` covers the logs of known writers (a writer whose log does
        not exist yet included); a log found on disk that it does not name gets
        ``default``."""
        self._discover(bounds)
        waiting: list[tuple[int, str]] = []  # (bound, stem) of logs with nothing buffered
        heap: list[tuple[tuple[int, str, int], str]] = []
        for stem, t in self.tails.items():
            b = bounds.get(stem, default)
            if b is None and not t.final:
                t.final = True
            self._read(t)
            if t.events:
                heap.append((t.key(), stem))
            elif not t.eof:
                waiting.append((max(b if b is not None else t.last, t.last), stem))
        heapq.heapify(heap)
        heapq.heapify(waiting)
        yield from self._drain(heap, waiting, bounds, default)
        for stem in [s for s, t in self.tails.items() if t.eof and not t.events]:
            yield from self._end(stem)

    def _drain(self, heap: list[tuple[tuple[int, str, int], str]],
               waiting: list[tuple[int, str]], bounds: Mapping[str, int | None],
               default: int | None) -> Iterator[Event | Ended]:
        while heap:
            key, stem = heap[0]
            if waiting and (key[0], key[1]) >= waiting[0]:
                return  # a log with nothing read yet may still write something earlier
            heapq.heappop(heap)
            t = self.tails[stem]
            e = t.events.popleft()
            if self._last_key is not None and key < self._last_key:
                self.late += 1
            self._last_key = key
            yield renumbered(e, self.index)
            self.index += 1
            if not t.events and t.final and not t.eof:
                self._read(t)  # a finished log: its next lines
            if t.events:
                heapq.heappush(heap, (t.key(), stem))
            elif t.eof:
                yield from self._end(stem)
            else:
                b = bounds.get(stem, default)
                heapq.heappush(waiting, (max(b if b is not None else t.last, t.last), stem))

    def _end(self, stem: str) -> Iterator[Ended]:
        t = self.tails.pop(stem)
        self.ended.add(stem)
        yield Ended(stem, t.process)

    def _discover(self, bounds: Mapping[str, int | None]) -> None:
        on_disk: dict[str, Path] = {}
        try:
            entries = list(os.scandir(self.directory))
        except FileNotFoundError:
            entries = []
        for entry in entries:
            stem = stem_of(entry.name)
            if stem == entry.name:  # not a log (a .zst.tmp being written, say)
                continue
            # a plain log wins over its .zst twin (compress_log's contract)
            if entry.name.endswith(PLAIN) or stem not in on_disk:
                on_disk[stem] = Path(entry.path)
        for stem in set(on_disk) | set(bounds):
            if stem in self.tails or stem in self.ended:
                continue
            path = on_disk.get(stem, self.directory / f"{stem}{PLAIN}")
            # compressed before we saw it: finished
            self.tails[stem] = _Tail(stem, path, final=path.name.endswith(ZST))

    def _read(self, t: _Tail) -> None:
        """Buffer what ``t`` has grown by; a finished log, its next lines (read lazily)."""
        if t.eof:
            return
        if t.final and t.lines is None:
            t.lines = _lines_from(t.path, t.offset, t.partial)
            t.partial = b""
        if t.lines is not None:
            while len(t.events) < 1024:
                line = next(t.lines, None)
                if line is None:
                    t.eof = True
                    return
                self._line(t, line)
            return
        try:
            with open(t.path, "rb") as fh:
                fh.seek(t.offset)
                data = fh.read(_READ)
        except FileNotFoundError:
            data = b""
        t.offset += len(data)
        lines = (t.partial + data).split(b"\n")
        t.partial = lines.pop()  # a line still being written: read once it is whole
        for line in lines:
            self._line(t, line)

    def _line(self, t: _Tail, line: bytes) -> None:
        """One line, read as :func:`harness.history.iter_log` reads it: a garbled line is
        an error only when more follows (else it is the torn tail of a killed writer)."""
        t.line_no += 1
        if not line.strip():
            return
        if t.torn is not None:  # a garbled line with more after it: not a torn tail
            raise HistoryError(f"{t.path}:{t.torn[0]}: not a history event ({t.torn[1]})")
        try:
            d = orjson.loads(line)
        except orjson.JSONDecodeError as err:
            t.torn = (t.line_no, str(err))
            return
        problem = event_problem(d)
        if problem is not None:
            raise HistoryError(f"{t.path}:{t.line_no}: not a history event: {problem}")
        e = Event.from_dict(d)
        problem = value_problem(e)
        if problem is not None:
            raise HistoryError(f"{t.path}:{t.line_no}: not a history: {problem}")
        t.events.append(e)
        t.count += 1
        t.last = max(t.last, e.time)
        if t.process is None:
            t.process = e.process


def _lines_from(path: Path, offset: int, partial: bytes) -> Iterator[bytes]:
    """The lines of a finished log from ``offset`` on (``partial``: what came before it
    since the last newline), as :func:`harness.history_files.iter_lines` gives them: the
    last item is what follows the last newline."""
    if path.name.endswith(ZST):
        yield from iter_lines(path)
        return
    try:
        fh = open(path, "rb")  # noqa: SIM115 - closed below, once the generator is drained
    except FileNotFoundError:  # its process ended before it wrote a line
        if partial:
            yield partial
        return
    with fh:
        fh.seek(offset)
        tail = partial
        while chunk := fh.read(_READ):
            lines = (tail + chunk).split(b"\n")
            tail = lines.pop()
            yield from lines
        yield tail

