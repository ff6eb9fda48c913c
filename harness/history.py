"""The history as a record: the event, turn tokens, reading and merging logs, pairing
each operation's invoke with its completion. Pure: no processes; I/O only to read or
write a whole file.

Contract (docs/design.md, "The history"): one JSON object per line. Every operation is logged
twice, an ``invoke`` before it starts and a completion after it: ``ok``, ``fail`` (it
definitely did not take effect) or ``info`` (unknown: it may or may not have). An invoke
with no completion at all (the worker was SIGKILLed) means the same as ``info``. Faults
are events too, with ``process = "nemesis"``; the final quiescent reads are made by
``process = "final"``. Worker processes are ints; after a crash a new process number
continues the same worker slot.

Values, by ``f``:

=================  =======================  ==========================================
f                  invoke value             ok value
=================  =======================  ==========================================
append             ``[role, token]``        ``[role, token]``
read               ``null``                 ``[[role, token], ...]`` oldest first
snapshot           ``null``                 the new snapshot id (str)
rollback           snapshot id              snapshot id
list_snapshots     ``null``                 ``[id, ...]``
=================  =======================  ==========================================

A *token* is :func:`turn_token` of a turn's content: the content itself when short, a
prefix plus length and hash when long, so histories stay small when payloads are hundreds
of KB while every distinct content keeps a distinct token.

Workers write whole lines, kill-safe (:mod:`harness.runner.history_writer`); reading
tolerates a torn last line anyway (a log copied from a dying disk).
"""

from __future__ import annotations

import heapq
import os
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from hashlib import blake2b
from pathlib import Path
from typing import Any

import orjson

from harness.errors import HistoryError

__all__ = [
    "COMPLETIONS",
    "TOKEN_INLINE",
    "Event",
    "Pair",
    "iter_ops",
    "merge",
    "pair_ops",
    "read_history",
    "read_log",
    "turn_token",
    "write_history",
]

COMPLETIONS = frozenset({"ok", "fail", "info"})
TOKEN_INLINE = 160


def turn_token(content: str) -> str:
    """Identify a turn's content compactly: itself when short, else prefix, length and hash."""
    if len(content) <= TOKEN_INLINE:
        return content
    digest = blake2b(content.encode("utf-8", "surrogatepass"), digest_size=12).hexdigest()
    return f"{content[:48]}…[{len(content)}#{digest}]"


@dataclass(frozen=True, slots=True)
class Event:
    """One history event. ``index`` is the position in a merged history (per-log order in a
    worker's own log); ``time`` is ``time.monotonic_ns()``, comparable across processes."""

    index: int
    time: int
    process: int | str
    type: str
    f: str
    session: str | None = None
    value: Any = None
    error: str | None = None
    pid: int = 0

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {
            "index": self.index,
            "time": self.time,
            "process": self.process,
            "pid": self.pid,
            "type": self.type,
            "f": self.f,
            "session": self.session,
            "value": self.value,
        }
        if self.error is not None:
            d["error"] = self.error
        return d

    @staticmethod
    def from_dict(d: dict[str, Any]) -> Event:
        return Event(
            index=int(d.get("index", 0)),
            time=int(d["time"]),
            process=d["process"],
            type=d["type"],
            f=d["f"],
            session=d.get("session"),
            value=d.get("value"),
            error=d.get("error"),
            pid=int(d.get("pid", 0)),
        )


def read_log(path: str | os.PathLike[str]) -> list[Event]:
    """Read one JSON-lines log. A torn or garbled *last* line is dropped (the writer died
    mid-write); a garbled line anywhere else is an error, since it means a corrupt file."""
    p = Path(path)
    try:
        data = p.read_bytes()
    except OSError as err:
        raise HistoryError(f"cannot read history {p}: {err.strerror or err}") from err
    lines = data.split(b"\n")
    events: list[Event] = []
    last = len(lines) - 1
    for n, line in enumerate(lines):
        if not line.strip():
            continue
        try:
            events.append(Event.from_dict(orjson.loads(line)))
        except (orjson.JSONDecodeError, KeyError, TypeError, ValueError) as err:
            if n >= last - 1 and not any(x.strip() for x in lines[n + 1 :]):
                break  # torn tail
            raise HistoryError(f"{p}:{n + 1}: not a history event ({err})") from err
    return events


def merge(logs: Iterable[Sequence[Event]]) -> list[Event]:
    """Merge per-process logs into one history ordered by time, indices renumbered.

    Each log is already in its own time order; ties keep log order (stable merge)."""
    keyed = ([(e.time, k, i, e) for i, e in enumerate(log)] for k, log in enumerate(logs))
    return [replace(t[3], index=n) for n, t in enumerate(heapq.merge(*keyed))]


def read_history(path: str | os.PathLike[str]) -> list[Event]:
    """Read a history: a merged ``history.jsonl``, a run directory (its ``history.jsonl``,
    else its per-worker logs under ``history/``), or a directory of ``*.jsonl`` logs."""
    p = Path(path)
    if p.is_dir():
        if (p / "history.jsonl").is_file():
            return read_log(p / "history.jsonl")
        logs_dir = p / "history" if (p / "history").is_dir() else p
        files = sorted(logs_dir.glob("*.jsonl"))
        if not files:
            raise HistoryError(f"{p}: no history.jsonl and no *.jsonl logs in it")
        return merge(read_log(f) for f in files)
    if not p.exists():
        raise HistoryError(f"{p}: no such file or directory")
    return read_log(p)


def write_history(path: str | os.PathLike[str], events: Iterable[Event]) -> None:
    """Write a merged history as JSON lines."""
    with open(path, "wb") as fh:
        for e in events:
            fh.write(orjson.dumps(e.to_dict()) + b"\n")


#: One operation: its invoke and its completion (None: the process never completed it).
Pair = tuple[Event, Event | None]


def pair_ops(events: Iterable[Event]) -> Iterator[Pair]:
    """Pair each operation's invoke with its completion, the one pairing every reader of a
    history uses (the checker, where faults landed, the tests).

    A process runs one op at a time, so the next event of the same process after an invoke
    completes it, whatever that event's type; an invoke followed by another invoke of its
    process was never completed (``None``: the process was killed, which means ``info``).
    An event of a process with no invoke open pairs with nothing: the nemesis's faults, a
    worker's ``open`` or ``close`` error. An event whose process is not hashable (only a
    foreign or garbled history has one) is skipped.

    Order: each pair when it closes, that is at its completion, or, never completed, at its
    process's next invoke; the invokes still open at the end come last, by index. So each
    process's ops come in the order it ran them (:func:`iter_ops`: in invoke order).

    >>> e = [Event(0, 1, 0, "invoke", "read", "s"), Event(1, 2, 1, "invoke", "read", "s"),
    ...      Event(2, 3, 1, "ok", "read", "s", []), Event(3, 4, "nemesis", "info", "kill")]
    >>> [(i.index, c.index if c else None) for i, c in pair_ops(e)]
    [(1, 2), (0, None)]
    """
    pending: dict[object, Event] = {}
    for e in events:
        try:
            p = e.process
            if e.type == "invoke":
                prev = pending.get(p)
                pending[p] = e
                if prev is not None:
                    yield prev, None
                continue
            inv = pending.pop(p, None)
        except TypeError:  # an unhashable process: junk, not an op
            continue
        if inv is not None:
            yield inv, e
    yield from ((inv, None) for inv in sorted(pending.values(), key=lambda ev: ev.index))


def iter_ops(events: Iterable[Event]) -> Iterator[Pair]:
    """The pairs of :func:`pair_ops`, in the order of their invokes' indices."""
    return iter(sorted(pair_ops(events), key=lambda p: p[0].index))
