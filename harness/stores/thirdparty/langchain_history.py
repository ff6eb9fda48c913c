"""``langchain.sql`` and ``langchain.redis``: LangChain's ``SQLChatMessageHistory`` on SQLite
and ``RedisChatMessageHistory`` on plain Redis (``langchain-community``).

A session is a ``session_id``; a turn is a ``ChatMessage(role=..., content=...)`` (it keeps
any role); ``append`` is ``add_message``, ``history`` is ``.messages``. Neither library has
snapshots or rollback: the adapter copies the messages under another session id and rolls
back with ``clear()`` then ``add_messages(...)``, the only way the API offers
(:mod:`harness.stores.thirdparty._copies`). One history object per session and process, one
SQLAlchemy engine per process, as an application holds them; nothing added (no lock, no
retry, no cache of messages).
"""

from __future__ import annotations

from typing import Any

from harness.stores.thirdparty._copies import CopySnapshots

__all__ = ["RedisHistoryStore", "SqlHistoryStore"]


class _History(CopySnapshots):
    def __init__(self) -> None:
        self.histories: dict[str, Any] = {}

    def make(self, key: str) -> Any:
        raise NotImplementedError

    def _h(self, key: str) -> Any:
        if key not in self.histories:
            self.histories[key] = self.make(key)
        return self.histories[key]

    def append(self, session: str, role: str, content: str) -> None:
        from langchain_core.messages import ChatMessage

        self._h(session).add_message(ChatMessage(role=role, content=content))

    def read(self, key: str) -> list[tuple[str, str]]:
        return [(_role(m), str(m.content)) for m in self._h(key).messages]

    def replace(self, key: str, turns: list[tuple[str, str]]) -> None:
        from langchain_core.messages import ChatMessage

        h = self._h(key)
        h.clear()
        h.add_messages([ChatMessage(role=r, content=c) for r, c in turns])

    def close(self) -> None:
        self.histories.clear()


def _role(message: Any) -> str:
    return str(getattr(message, "role", None) or message.type)


class SqlHistoryStore(_History):
    """LangChain SQLChatMessageHistory on the run's SQLite file."""

    backend = "sqlite"

    def __init__(self, url: str, namespace: str = "harness") -> None:
        import sqlalchemy

        super().__init__()
        self.engine = sqlalchemy.create_engine(url)  # harness's sqlite:/// URL is SQLAlchemy's

    def make(self, key: str) -> Any:
        from langchain_community.chat_message_histories import SQLChatMessageHistory

        return SQLChatMessageHistory(session_id=key, connection=self.engine)

    def close(self) -> None:
        super().close()
        self.engine.dispose()


class RedisHistoryStore(_History):
    """LangChain RedisChatMessageHistory on plain Redis, its keys under the run's namespace."""

    backend = "redis"

    def __init__(self, url: str, namespace: str = "harness") -> None:
        super().__init__()
        self.url = url
        self.prefix = f"{namespace or 'harness'}:message_store:"

    def make(self, key: str) -> Any:
        from langchain_community.chat_message_histories import RedisChatMessageHistory

        return RedisChatMessageHistory(session_id=key, url=self.url, key_prefix=self.prefix)
