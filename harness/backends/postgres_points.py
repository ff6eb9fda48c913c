"""Controlled-mode scheduling points on psycopg 3, inside one worker process.

:func:`install` patches ``psycopg.Cursor.execute`` and ``psycopg.Connection.commit`` (the
sync API; ``Connection.execute`` goes through a cursor): every statement stops at a point
first, labelled with its first SQL word (``SELECT``, ``INSERT``, ``BEGIN``...), and every
commit at a ``COMMIT`` point, as ``trace.json`` records them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from harness.backends.base import Stepper

__all__ = ["install", "label"]

_client: Stepper | None = None


def install(client: Stepper) -> None:
    """Route this process's psycopg statements and commits through ``client``'s points
    (patching once; a later call only changes the client). Without psycopg: nothing."""
    global _client
    _client = client
    try:
        import psycopg
    except ImportError:
        return
    _wrap(psycopg.Cursor, "execute", lambda args: label(args[0] if args else ""))
    _wrap(psycopg.Connection, "commit", lambda args: "COMMIT")


def _wrap(cls: type, name: str, labeller: Callable[[tuple[Any, ...]], str]) -> None:
    orig: Callable[..., Any] = getattr(cls, name)
    if getattr(orig, "_harness", False):
        return

    def wrapped(self: Any, *args: Any, **kw: Any) -> Any:
        c = _client
        if c is None or c.depth:
            return orig(self, *args, **kw)
        c.point(labeller(args))
        c.depth += 1
        try:
            return orig(self, *args, **kw)
        finally:
            c.depth -= 1

    wrapped._harness = True  # type: ignore[attr-defined]
    setattr(cls, name, wrapped)


def label(query: Any) -> str:
    """The point label of a statement: its first word, upper case (``SQL`` if none)."""
    # a composed query (psycopg.sql) has no text to hand: its label is SQL
    text = query.decode("utf-8", "replace") if isinstance(query, bytes) else \
        query if isinstance(query, str) else ""
    words = text.split(None, 1)
    return words[0].upper()[:16] if words else "SQL"
