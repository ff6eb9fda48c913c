"""``langchain.postgres``: ``PostgresChatMessageHistory`` of ``langchain-postgres``, the
chat history LangChain points production users to.

Opened as its docs show: one ``psycopg.connect(url)`` per process (not autocommit: the
library commits after each write), ``PostgresChatMessageHistory.create_tables(conn,
table)`` at every start, one history object per session. A session id must be a UUID:
the adapter uses ``uuid5`` of the session's name. ``append`` is ``add_message``,
``history`` is ``.messages``. The library has no snapshot or rollback: the adapter copies
the messages under another session id and rolls back with ``clear()`` then
``add_messages(...)`` (:mod:`harness.stores.thirdparty._copies`). Nothing added: no lock,
no retry, no cache.
"""

from __future__ import annotations

import uuid
from typing import Any

from harness.stores.thirdparty.langchain_history import _History

__all__ = ["PostgresHistoryStore"]

TABLE = "chat_history"


class PostgresHistoryStore(_History):
    """LangChain PostgresChatMessageHistory on the run's PostgreSQL."""

    backend = "postgres"

    def __init__(self, url: str, namespace: str = "harness") -> None:
        import psycopg
        from langchain_postgres import PostgresChatMessageHistory

        super().__init__()
        self.conn = psycopg.connect(url)
        PostgresChatMessageHistory.create_tables(self.conn, TABLE)

    def make(self, key: str) -> Any:
        from langchain_postgres import PostgresChatMessageHistory

        sid = str(uuid.uuid5(uuid.NAMESPACE_URL, f"harness-session:{key}"))
        return PostgresChatMessageHistory(TABLE, sid, sync_connection=self.conn)

    def close(self) -> None:
        super().close()
        self.conn.close()
