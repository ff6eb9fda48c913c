"""The kill-safe writer of one process's history log (the record it writes is
:mod:`harness.history`).

Whole lines on an ``O_APPEND`` descriptor with ``os.write``, unbuffered, so a SIGKILL loses
nothing already written and tears no line. A worker writes one op's completion together
with the next op's invoke, in one ``os.write`` before the next store call
(:meth:`HistoryWriter.defer`), so nothing waits in memory while the store is being called.
"""

from __future__ import annotations

import os
from pathlib import Path
from time import monotonic_ns
from typing import Any

import orjson

from harness.redact import scrub

__all__ = ["HistoryWriter"]


class HistoryWriter:
    """Append-only, kill-safe writer of one process's log.

    :meth:`log` writes its event at once, in one ``os.write`` of whole lines. :meth:`defer`
    serializes an event (taking its time now) and keeps it until the next :meth:`log`,
    :meth:`flush` or :meth:`close`, whose single ``os.write`` carries both lines. A worker
    defers an op's completion only when the next thing it does is log the next op's
    invoke: then every event is on disk before the worker's next store call, with one
    system call per op instead of two. A SIGKILL in between loses the deferred completion,
    which the checker then reads as ``info`` (the same as a kill a moment earlier).
    """

    def __init__(self, path: str | os.PathLike[str], process: int | str) -> None:
        self.path = Path(path)
        self.process = process
        self.pid = os.getpid()
        self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        self._index = 0
        self._pending = b""
        # The hot path's line (see :meth:`fast`): the same JSON, keys in the same order, as
        # orjson makes from :meth:`line`'s dict, with this writer's constants baked in.
        head = b'"process":%s,"pid":%d' % (orjson.dumps(process), self.pid)
        self._tmpl = (b'{"index":%d,"time":%d,' + head.replace(b"%", b"%%")
                      + b',"type":"%b","f":"%b","session":%b,"value":%b}\n')

    def line(
        self,
        type: str,
        f: str,
        session: str | None = None,
        value: Any = None,
        error: str | None = None,
        time_ns: int | None = None,
    ) -> bytes:
        """One event as a JSON line (its time taken now unless given); advances the index."""
        rec: dict[str, Any] = {
            "index": self._index,
            "time": time_ns if time_ns is not None else monotonic_ns(),
            "process": self.process,
            "pid": self.pid,
            "type": type,
            "f": f,
            "session": session,
            "value": value,
        }
        if error is not None:
            rec["error"] = scrub(error)  # a driver's words may quote the URL
        self._index += 1
        return orjson.dumps(rec, option=orjson.OPT_APPEND_NEWLINE)

    def fast(self, type: bytes, f: bytes, session_json: bytes, value_json: bytes) -> bytes:
        """:meth:`line` for the worker's hot path: ``type`` and ``f`` plain ASCII names,
        session and value already JSON (a value is serialized once for invoke and ok)."""
        i = self._index
        self._index = i + 1
        return self._tmpl % (i, monotonic_ns(), type, f, session_json, value_json)

    def emit(self, data: bytes) -> None:
        """Write serialized lines now (after a deferred event, in the same ``os.write``)."""
        if self._pending:
            data, self._pending = self._pending + data, b""
        os.write(self._fd, data)

    def hold(self, data: bytes) -> None:
        """Defer serialized lines, as :meth:`defer` does."""
        if self._pending:
            self.flush()
        self._pending = data

    def log(
        self,
        type: str,
        f: str,
        session: str | None = None,
        value: Any = None,
        error: str | None = None,
        time_ns: int | None = None,
    ) -> None:
        """Write one event now (after a deferred one, in the same ``os.write``)."""
        self.emit(self.line(type, f, session, value, error, time_ns))

    def defer(
        self, type: str, f: str, session: str | None = None, value: Any = None,
        error: str | None = None,
    ) -> None:
        """Serialize one event now, write it with the next one (see the class docstring)."""
        self.hold(self.line(type, f, session, value, error))

    def flush(self) -> None:
        """Write a deferred event, if any."""
        if self._pending:
            data, self._pending = self._pending, b""
            os.write(self._fd, data)

    def close(self) -> None:
        if self._fd >= 0:
            self.flush()
            os.close(self._fd)
            self._fd = -1

    def __enter__(self) -> HistoryWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
