"""The history as a record: the event, turn tokens, reading and merging logs as streams,
pairing each operation's invoke with its completion. Pure: no processes; I/O only to read
logs (their files: :mod:`harness.history_files`) or write a whole history.

Contract (docs/design.md, "The history"): one JSON object per line. Every operation is logged
twice, an ``invoke`` before it starts and a completion after it: ``ok``, ``fail`` (it
definitely did not take effect) or ``info`` (unknown: it may or may not have). An invoke
with no completion at all (the worker was SIGKILLed) means the same as ``info``. Faults
are events too, with ``process = "nemesis"``; the quiescent reads are made by
``process = "final"`` at the end and ``"read-<n>"`` for sessions retired during the run
(:func:`is_reader`). Worker processes are ints; after a crash a new process number
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

One copy of the history is kept: the per-process logs. Each process writes its own plain
``history/<process>.jsonl``, whole lines, kill-safe (:mod:`harness.runner.history_writer`);
when the run ends the coordinator compresses every log to ``<process>.jsonl.zst``
(zstandard) and removes the plain one, and writes no merged copy: readers merge the logs
by time as they stream them (:func:`iter_history`, one pending event per log). A log left
plain (a coordinator killed before compressing) reads the same, and so does a run directory
from before logs were compressed (its merged ``history.jsonl`` is read). Reading tolerates
a torn last line (a worker SIGKILLed mid-write by something else, a log copied from a
dying disk, a ``.zst`` cut short).
"""

from __future__ import annotations

import gc
import heapq
import os
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, fields
from hashlib import blake2b
from operator import itemgetter
from pathlib import Path
from typing import Any

import orjson

from harness.errors import HistoryError
from harness.history_files import iter_lines, log_files

__all__ = [
    "COMPLETIONS",
    "EVENT_FS",
    "OP_FS",
    "READER_PREFIX",
    "TOKEN_INLINE",
    "TYPES",
    "Event",
    "Pair",
    "event_problem",
    "gc_paused",
    "is_reader",
    "iter_history",
    "iter_log",
    "iter_merge",
    "iter_ops",
    "merge",
    "pair_ops",
    "read_history",
    "read_log",
    "renumbered",
    "turn_token",
    "value_problem",
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
        return _event(int(d.get("index", 0)), int(d["time"]), d["process"], d["type"], d["f"],
                      d.get("session"), d.get("value"), d.get("error"), int(d.get("pid", 0)))


_new = object.__new__
# each field's slot, set directly (the descriptors of the dataclass's __slots__, in order)
(_set_index, _set_time, _set_process, _set_type, _set_f, _set_session, _set_value, _set_error,
 _set_pid) = (vars(Event)[f.name].__set__ for f in fields(Event))


def _event(index: int, time: int, process: int | str, type: str, f: str, session: str | None,
           value: Any, error: str | None, pid: int) -> Event:
    """``Event(index, time, ...)``, the same object, made in a third of the time: its slots
    set directly, where a frozen dataclass's ``__init__`` sets each field through
    ``object.__setattr__`` (every event of a history is made once, and again when a merge
    renumbers it)."""
    e = _new(Event)
    _set_index(e, index)
    _set_time(e, time)
    _set_process(e, process)
    _set_type(e, type)
    _set_f(e, f)
    _set_session(e, session)
    _set_value(e, value)
    _set_error(e, error)
    _set_pid(e, pid)
    return e


def renumbered(e: Event, index: int) -> Event:
    """``dataclasses.replace(e, index=index)``, made as :func:`_event` makes an event."""
    return _event(index, e.time, e.process, e.type, e.f, e.session, e.value, e.error, e.pid)


#: Every ``type`` an event may have.
TYPES = frozenset({"invoke"}) | COMPLETIONS
#: The operations a worker logs (the store capabilities; a unit test keeps them equal).
OP_FS = frozenset({"append", "read", "snapshot", "rollback", "list_snapshots"})
#: Every ``f`` a worker (or the final reader) logs: the ops, its store's opening (or
#: failure to open), a failed close, and a crash (what ended the worker). Fault events
#: (``process = "nemesis"``) may carry any ``f``: their names are the fault kinds, which
#: the nemesis owns. A new kind of worker event must be added here, or ``harness check``
#: refuses the histories that hold it.
EVENT_FS = OP_FS | {"open", "close", "crash"}


#: The harness's own quiescent readers: ``final`` at the end of a run, ``read-<n>`` for the
#: sessions retired while it goes on. Their ops are the harness's, not the workload's.
READER_PREFIX = "read-"


def is_reader(process: Any) -> bool:
    """Whether ``process`` is one of the harness's quiescent readers."""
    return process == "final" or (isinstance(process, str) and process.startswith(READER_PREFIX))


def _is_int(v: Any) -> bool:
    return type(v) is int


def _pair(v: Any) -> bool:
    return type(v) is list and len(v) == 2 and type(v[0]) is str and type(v[1]) is str


#: Event times lie strictly within this many nanoseconds of 0 (146 years): the checker
#: takes 2**62 for "never returned" (``harness.checker.ops.INF``), so a time at or past it
#: would read as an op that never returned.
_TIME_BOUND = 1 << 62


def event_problem(d: Any) -> str | None:
    """Why a parsed line is not a history event (docs/design.md, "The history"), or None.

    Checked: an object; ``time`` an integer within 2**62 of 0, ``index`` and ``pid`` integers when present;
    ``process`` an integer or a name; ``type`` and ``f`` known (see :data:`EVENT_FS`);
    ``session`` and ``error`` strings or null; an op's session a string; the outer shape
    of an op's value (a read's turns are checked by :func:`value_problem`)."""
    if type(d) is dict and type(d.get("time")) is int and -_TIME_BOUND < d["time"] < _TIME_BOUND:
        # the common case, an op event of exact types, judged in one pass (every event of
        # a history is): anything else goes the long way, which says what is wrong
        p, t, f, session, error = d.get("process"), d.get("type"), d.get("f"), d.get("session"), d.get("error")
        if ((type(p) is int or type(p) is str) and type(t) is str and t in TYPES and type(f) is str
                and f in OP_FS and type(session) is str and (error is None or type(error) is str)
                and type(d.get("index", 0)) is int and type(d.get("pid", 0)) is int):
            if t != "ok" and f != "append" and f != "rollback":
                return None
            v = d.get("value")
            if (v is None and (t == "fail" or t == "info")) or _SHAPES[f][1](v):
                return None
    if not isinstance(d, dict):
        return f"a JSON {type(d).__name__}, not an object"
    for key in ("time", "process", "type", "f"):
        if key not in d:
            return f"no {key!r}"
    if type(d["time"]) is not int or type(d.get("index", 0)) is not int or type(d.get("pid", 0)) is not int:
        return "time, index and pid must be integers"
    if not -_TIME_BOUND < d["time"] < _TIME_BOUND:
        return f"time {d['time']} out of range (nanoseconds, less than 2**62 either way)"
    p, t, f = d["process"], d["type"], d["f"]
    if not (_is_int(p) or isinstance(p, str)):
        return f"process must be an integer or a name, got {p!r:.40}"
    if not isinstance(t, str) or t not in TYPES:
        return f"unknown type {t!r:.40} (known: {', '.join(sorted(TYPES))})"
    if not isinstance(f, str) or not (f in EVENT_FS or (p == "nemesis" and f)):
        return f"unknown f {f!r:.40} (known: {', '.join(sorted(EVENT_FS))})"
    session, error = d.get("session"), d.get("error")
    if not (session is None or isinstance(session, str)):
        return f"session must be a string or null, got {session!r:.40}"
    if not (error is None or isinstance(error, str)):
        return f"error must be a string or null, got {error!r:.40}"
    if f in OP_FS:
        return _op_problem(t, f, session, d.get("value"))
    return None


def _str(v: Any) -> bool:
    return type(v) is str


def _list(v: Any) -> bool:
    return type(v) is list


#: What an op's value must be: in every event of an append or a rollback (fail and info
#: carry the invoke's value, or null), in the ok completion of the others (their invoke
#: has none).
_SHAPES = {"append": ("[role, token]", _pair), "rollback": ("a snapshot id", _str),
           "read": ("a list of turns", _list), "snapshot": ("a snapshot id", _str),
           "list_snapshots": ("a list of snapshot ids", _list)}


def _op_problem(t: str, f: str, session: str | None, v: Any) -> str | None:
    """The outer shape of an op event's value, by ``f`` (the table of the module docstring)."""
    if session is None:
        return f"a {f} event needs a session"
    if t != "ok" and f not in ("append", "rollback"):
        return None
    if t in ("fail", "info") and v is None:
        return None
    what, ok = _SHAPES[f]
    return None if ok(v) else f"a {t} {f} value must be {what}, got {v!r:.40}"


def _pairs(v: list[Any]) -> bool:
    """Whether every item of ``v`` is a ``[role, token]`` pair (:func:`_pair`), in passes at
    C speed: a read shows the whole list, and every read of a history is looked at."""
    return (set(map(type, v)) <= _LIST_TYPE and set(map(len, v)) <= _TWO
            and set(map(type, map(_first, v))) <= _STR_TYPE
            and set(map(type, map(_second, v))) <= _STR_TYPE)


_LIST_TYPE, _STR_TYPE, _TWO = {list}, {str}, {2}
_first, _second = itemgetter(0), itemgetter(1)


def value_problem(e: Event) -> str | None:
    """What :func:`event_problem` leaves out, being per turn: every turn of an ok read a
    ``[role, token]`` pair, every id of an ok list_snapshots a string."""
    if e.type != "ok":
        return None
    if e.f == "read" and not _pairs(e.value):
        return "an ok read value must be a list of [role, token] pairs"
    if e.f == "list_snapshots" and not all(map(_str, e.value)):
        return "an ok list_snapshots value must be a list of snapshot ids"
    return None


def iter_log(path: str | os.PathLike[str]) -> Iterator[Event]:
    """Stream one log, plain ``.jsonl`` or compressed ``.jsonl.zst``
    (:mod:`harness.history_files`), in file order, holding one chunk at a time.

    A torn or garbled *last* line is dropped (the writer died mid-write, or a ``.zst`` was
    cut short); a garbled line anywhere else is an error, since it means a corrupt file, and
    so is a line that is JSON but no history event (:func:`event_problem`). The error comes
    when the reader reaches the next non-blank line: every event before it has been yielded.
    An empty log yields nothing (a worker killed before its first event)."""
    p = Path(path)
    torn: tuple[int, orjson.JSONDecodeError] | None = None
    for n, line in enumerate(iter_lines(p), 1):
        if not line.strip():
            continue
        if torn is not None:  # a garbled line with more after it: not a torn tail
            raise HistoryError(f"{p}:{torn[0]}: not a history event ({torn[1]})")
        try:
            d = orjson.loads(line)
        except orjson.JSONDecodeError as err:
            torn = (n, err)
            continue
        problem = event_problem(d)
        if problem is not None:
            raise HistoryError(f"{p}:{n}: not a history event: {problem}")
        yield Event.from_dict(d)


def read_log(path: str | os.PathLike[str]) -> list[Event]:
    """:func:`iter_log` as a list."""
    return list(iter_log(path))


def iter_merge(logs: Iterable[Iterable[Event]]) -> Iterator[Event]:
    """Merge per-process logs into one history ordered by time, indices renumbered, lazily:
    a heap of one pending event per log.

    Each log is already in its own time order; ties keep log order (stable merge)."""
    keyed = [_keyed(k, log) for k, log in enumerate(logs)]
    for n, t in enumerate(heapq.merge(*keyed)):
        yield renumbered(t[3], n)


def _keyed(k: int, log: Iterable[Event]) -> Iterator[tuple[int, int, int, Event]]:
    """A log's events keyed for a stable merge (a function, so each generator keeps its k)."""
    return ((e.time, k, i, e) for i, e in enumerate(log))


def merge(logs: Iterable[Iterable[Event]]) -> list[Event]:
    """:func:`iter_merge` as a list."""
    return list(iter_merge(logs))


def _source(p: Path) -> Iterator[Event]:
    """The events of what :func:`iter_history` is given, before validation."""
    if not p.is_dir():
        if not p.exists():
            raise HistoryError(f"{p}: no such file or directory")
        return iter_log(p)
    if (p / "history.jsonl").is_file():  # a run directory from before logs were compressed
        return iter_log(p / "history.jsonl")
    files = log_files(p / "history" if (p / "history").is_dir() else p)
    if not files:
        raise HistoryError(f"{p}: no history.jsonl and no *.jsonl or *.jsonl.zst logs in it")
    return iter_merge(iter_log(f) for f in files)


def iter_history(path: str | os.PathLike[str]) -> Iterator[Event]:
    """Stream a history: a log file (plain or ``.zst``), a run directory (its per-process
    logs under ``history/``, merged by time; a run directory from before logs were
    compressed has a merged ``history.jsonl``, which is read instead), or a directory of
    logs. Memory: one chunk and one pending event per log.

    Raises HistoryError for what is not a history: no events at all (an empty or blank
    file, ``/dev/null``), a line that is no history event, a read whose turns are no
    ``[role, token]`` pairs, an event of a process timed before the one before it (a
    completion before its own invoke); a bad event raises when the stream reaches it."""
    p = Path(path)
    empty = True
    # each process's last time: a process runs one op at a time on one monotonic clock, so
    # its events go forward in time (a completion before its own invoke would read as an
    # op that took effect before it was asked for, which no store can do)
    last: dict[Any, int] = {}
    for e in _source(p):
        problem = value_problem(e)
        if problem is None:  # (every event's process is an int or a name: iter_log checks)
            before = last.get(e.process)
            last[e.process] = e.time
            if before is not None and e.time < before:
                problem = (f"its time {e.time} is before the time of the event before it of process "
                           f"{e.process!r} ({before}): a process's events go forward in time")
        if problem is not None:
            raise HistoryError(f"{p}: not a history: event {e.index} ({e.process} {e.type} "
                               f"{e.f}): {problem}")
        empty = False
        yield e
    if empty:
        raise HistoryError(f"{p}: not a history: no events in it")


def read_history(path: str | os.PathLike[str]) -> list[Event]:
    """:func:`iter_history` as a list.

    The cyclic garbage collector is paused meanwhile (:func:`gc_paused`): events hold no
    cycles, and its passes over a heap growing by hundreds of thousands of them took half
    the time (a 160,796-event history: 2.52 s of CPU with it, 1.33 s without)."""
    with gc_paused():
        return list(iter_history(path))


@contextmanager
def gc_paused() -> Iterator[None]:
    """The cyclic garbage collector off inside, as it was after (on if it was on): for
    work that allocates hundreds of thousands of acyclic objects (events, the checker's
    pairs and states), whose generational passes would walk every one of them."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


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
