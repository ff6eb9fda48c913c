"""``llamaindex.sql`` and ``llamaindex.redis``: llama-index's chat stores, the
``SQLAlchemyChatStore`` of ``llama-index-core`` on SQLite (through ``aiosqlite``, its async
driver) and ``RedisChatStore`` (``llama-index-storage-chat-store-redis``) on plain Redis.

A session is a chat store key; a turn is a ``ChatMessage(role=..., content=...)``; ``append``
is ``add_message``, ``history`` is ``get_messages``. Neither has snapshots: the adapter
copies the messages under another key and rolls back with the library's own
``set_messages`` (:mod:`harness.stores.thirdparty._copies`). The SQL store's API is async:
each call runs to completion on one event loop of the adapter's. One store object per
process; nothing added (no lock, no retry, no cache).
"""

from __future__ import annotations

import asyncio
from typing import Any

from harness.stores.sqlite import sqlite_path
from harness.stores.thirdparty._copies import CopySnapshots

__all__ = ["RedisChatStore", "SqlChatStore"]


def _message(role: str, content: str) -> Any:
    from llama_index.core.base.llms.types import ChatMessage

    return ChatMessage(role=role, content=content)


def _turn(message: Any) -> tuple[str, str]:
    role = getattr(message.role, "value", message.role)
    return str(role), str(message.content or "")


class SqlChatStore(CopySnapshots):
    """llama-index SQLAlchemyChatStore on the run's SQLite file."""

    backend = "sqlite"

    def __init__(self, url: str, namespace: str = "harness") -> None:
        from llama_index.core.storage.chat_store.sql import SQLAlchemyChatStore

        self.loop = asyncio.new_event_loop()
        self.store = SQLAlchemyChatStore(
            table_name="chat_messages", async_database_uri=f"sqlite+aiosqlite:///{sqlite_path(url)}")

    def _run(self, coro: Any) -> Any:
        return self.loop.run_until_complete(coro)

    def append(self, session: str, role: str, content: str) -> None:
        self._run(self.store.add_message(session, _message(role, content)))

    def read(self, key: str) -> list[tuple[str, str]]:
        return [_turn(m) for m in self._run(self.store.get_messages(key))]

    def replace(self, key: str, turns: list[tuple[str, str]]) -> None:
        self._run(self.store.set_messages(key, [_message(r, c) for r, c in turns]))

    def close(self) -> None:
        engine = getattr(self.store, "_async_engine", None)
        if engine is not None:
            self._run(engine.dispose())
        self.loop.close()


class RedisChatStore(CopySnapshots):
    """llama-index RedisChatStore on plain Redis, its keys under the run's namespace."""

    backend = "redis"

    def __init__(self, url: str, namespace: str = "harness") -> None:
        from llama_index.storage.chat_store.redis import RedisChatStore as Store

        self.ns = namespace or "harness"
        self.store = Store(redis_url=url)

    def _k(self, key: str) -> str:
        return f"{self.ns}:{key}"

    def append(self, session: str, role: str, content: str) -> None:
        self.store.add_message(self._k(session), _message(role, content))

    def read(self, key: str) -> list[tuple[str, str]]:
        return [_turn(m) for m in self.store.get_messages(self._k(key))]

    def replace(self, key: str, turns: list[tuple[str, str]]) -> None:
        self.store.set_messages(self._k(key), [_message(r, c) for r, c in turns])

    def close(self) -> None:
        self.store._redis_client.close()
