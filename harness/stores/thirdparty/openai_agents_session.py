"""``openai-agents.sqlite``: the OpenAI Agents SDK's ``SQLiteSession`` (``openai-agents``),
the conversation memory an ``agents.Runner`` reads and extends; no model is called.

A session is a ``session_id``; a turn is an item ``{"role": ..., "content": ...}``;
``append`` is ``add_items([item])``, ``history`` is ``get_items()``. The SDK has no
snapshots: the adapter copies the items under another session id and rolls back with
``clear_session()`` then ``add_items(...)``, the only way the API offers
(:mod:`harness.stores.thirdparty._copies`). The API is async: each call runs to completion
on one event loop of the adapter's. One session object per session and process; nothing
added (no lock, no retry, no cache).
"""

from __future__ import annotations

import asyncio
from typing import Any

from harness.stores.sqlite import sqlite_path
from harness.stores.thirdparty._copies import CopySnapshots

__all__ = ["SqliteSessionStore"]


class SqliteSessionStore(CopySnapshots):
    """OpenAI Agents SDK SQLiteSession on the run's SQLite file."""

    backend = "sqlite"

    def __init__(self, url: str, namespace: str = "harness") -> None:
        self.path = sqlite_path(url)
        self.loop = asyncio.new_event_loop()
        self.sessions: dict[str, Any] = {}

    def _s(self, key: str) -> Any:
        from agents import SQLiteSession

        if key not in self.sessions:
            self.sessions[key] = SQLiteSession(key, self.path)
        return self.sessions[key]

    def _run(self, coro: Any) -> Any:
        return self.loop.run_until_complete(coro)

    def append(self, session: str, role: str, content: str) -> None:
        self._run(self._s(session).add_items([{"role": role, "content": content}]))

    def read(self, key: str) -> list[tuple[str, str]]:
        return [(str(i.get("role")), str(i.get("content"))) for i in self._run(self._s(key).get_items())]

    def replace(self, key: str, turns: list[tuple[str, str]]) -> None:
        s = self._s(key)
        self._run(s.clear_session())
        self._run(s.add_items([{"role": r, "content": c} for r, c in turns]))

    def close(self) -> None:
        for s in self.sessions.values():
            s.close()
        self.loop.close()
