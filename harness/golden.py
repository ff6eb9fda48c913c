"""Golden-state dumps: the whole memory of a store as a canonical, order-stable structure.

:func:`memory_state` reads everything the store at a URL holds (every table and row of a
SQLite file, in the order the rows were written; every key and value under a Redis
namespace, by name) through its backend's ``dump``, and normalises what changes between
two runs of the same deterministic scenario:

- generated ids (UUIDs, runs of 12+ hex digits with a letter and a digit) become
  ``<id-1>``, ``<id-2>``... in the order they first appear, so an id that a row of another
  table refers to keeps its number there;
- timestamps (numbers that are a date between 2000 and 2100 in s, ms, us or ns; ISO-8601
  date-times) become ``<time>``;
- the namespace becomes ``<ns>``; whatever matches one of ``volatile`` (regexes) becomes
  ``<volatile>``;
- bytes that are not UTF-8 (a pickle) become ``<N bytes>``; content over 200 characters is
  cut, with its length.

A row is one line (``'s0', 1, 'user', 'hello'``), so a difference reads as the rows that
appeared or went. Not a file hash: that changes with the page layout. The pytest plugin's
``harness_golden`` compares it with a baseline stored beside the test (syrupy).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from harness.errors import InputError

__all__ = ["memory_state"]

#: URL scheme -> backend name.
SCHEMES = {"sqlite": "sqlite", "redis": "redis", "rediss": "redis", "unix": "redis",
           "postgresql": "postgres", "postgres": "postgres"}

_ID = re.compile(r"\b(?:[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
                 r"|(?=[0-9a-f]*[a-f])(?=[0-9a-f]*[0-9])[0-9a-f]{12,})\b", re.IGNORECASE)
_ISO = re.compile(r"\b\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?")
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")
_Y2000, _Y2100 = 946_684_800, 4_102_444_800
WIDTH = 200


def memory_state(url: str, namespace: str = "", volatile: Iterable[str] = ()) -> dict[str, Any]:
    """The canonical dump of the store at ``url`` (see the module). ``InputError`` for a
    URL of no known backend; ``TargetError`` when nothing is there."""
    from harness.backends import backend

    scheme = url.split(":", 1)[0]
    if scheme not in SCHEMES:
        raise InputError(f"no backend for {url.split('://', 1)[0]!r} URLs "
                         f"(known: {', '.join(sorted(SCHEMES))})")
    raw = backend(SCHEMES[scheme]).dump(url, namespace)
    norm = _Normaliser(namespace, volatile)
    # names first, with their ids masked, so that the ids are numbered in an order that
    # does not depend on the ids themselves
    names = sorted(raw, key=lambda k: (_ID.sub("<id>", k), k))
    out: dict[str, Any] = {}
    for name in names:
        key = norm.text(name)
        value = raw[name]
        out[key] = ([norm.row(v) for v in value] if isinstance(value, list) else norm.row(value))
    return out


class _Normaliser:
    def __init__(self, namespace: str, volatile: Iterable[str]) -> None:
        self.namespace = namespace
        self.volatile = [re.compile(v) for v in volatile]
        self.ids: dict[str, str] = {}

    def _id(self, m: re.Match[str]) -> str:
        return self.ids.setdefault(m.group(0).lower(), f"<id-{len(self.ids) + 1}>")

    def text(self, s: str) -> str:
        if self.namespace:
            s = s.replace(self.namespace, "<ns>")
        for v in self.volatile:
            s = v.sub("<volatile>", s)
        s = _ISO.sub("<time>", s)
        if _NUMBER.fullmatch(s.strip()) and _is_time(float(s)):
            return "<time>"
        return _ID.sub(self._id, s)

    def scalar(self, v: Any) -> str:
        if v is None:
            return "NULL"
        if isinstance(v, bool):
            return repr(v)
        if isinstance(v, int | float):
            return "<time>" if _is_time(float(v)) else repr(v)
        if isinstance(v, bytes | bytearray | memoryview):
            try:
                v = bytes(v).decode("utf-8")
            except UnicodeDecodeError:
                return f"<{len(v)} bytes>"
        s = self.text(str(v))
        return repr(s if len(s) <= WIDTH else s[:WIDTH] + f"… ({len(s)} chars)")

    def row(self, v: Any) -> str:
        if isinstance(v, tuple | list):
            return ", ".join(self.row(x) if isinstance(x, tuple | list) else self.scalar(x)
                             for x in v)
        return self.scalar(v)


def _is_time(x: float) -> bool:
    """A date between 2000 and 2100 in seconds, milliseconds, microseconds or nanoseconds."""
    return any(_Y2000 * k <= abs(x) <= _Y2100 * k for k in (1, 1_000, 1_000_000, 1_000_000_000))
