"""Adapters of the memory stores agents really use: LangGraph (SQLite and PostgreSQL),
LangChain (SQL, Redis and PostgreSQL), llama-index and the OpenAI Agents SDK, each mapping
the store protocol onto the library's public API.

Each adapter is thin on purpose: it adds no lock, retry or cache the library lacks, so what
the library does wrong stays visible. Where a library has no snapshot or rollback, the
adapter does what one of its users would do (:mod:`._copies`: copy the messages under
another key, roll back by setting them) and its docstring says so. Each needs its library
(an extra: ``pip install -e '.[langgraph]'``, ``[langchain]``, ``[llamaindex]``,
``[openai-agents]``, or ``[thirdparty]`` for all), imported when a store is opened, so that
listing the stores never needs them.

:data:`ADAPTERS` gives each a short name (``--store langgraph.sqlite``).
"""

from __future__ import annotations

__all__ = ["ADAPTERS", "Adapter"]

from dataclasses import dataclass

_HERE = "harness.stores.thirdparty"


@dataclass(frozen=True, slots=True)
class Adapter:
    """``target``: the ``module:factory``; ``extra``: what installs its library;
    ``needs``: the module that is there once it is installed; ``title``: what it is."""

    target: str
    extra: str
    needs: str
    title: str = ""


#: Short name -> its adapter.
ADAPTERS: dict[str, Adapter] = {
    "langgraph.sqlite": Adapter(f"{_HERE}.langgraph_sqlite:LangGraphSqliteStore", "langgraph",
                                "langgraph.checkpoint.sqlite", "LangGraph SqliteSaver under a StateGraph"),
    "langgraph.postgres": Adapter(f"{_HERE}.langgraph_postgres:LangGraphPostgresStore",
                                  "langgraph", "langgraph.checkpoint.postgres",
                                  "LangGraph PostgresSaver under a StateGraph"),
    "langchain.sql": Adapter(f"{_HERE}.langchain_history:SqlHistoryStore", "langchain",
                             "langchain_community.chat_message_histories",
                             "LangChain SQLChatMessageHistory on SQLite"),
    "langchain.redis": Adapter(f"{_HERE}.langchain_history:RedisHistoryStore", "langchain",
                               "langchain_community.chat_message_histories",
                               "LangChain RedisChatMessageHistory"),
    "langchain.postgres": Adapter(f"{_HERE}.langchain_postgres_history:PostgresHistoryStore",
                                  "langchain", "langchain_postgres",
                                  "LangChain PostgresChatMessageHistory (langchain-postgres)"),
    "llamaindex.sql": Adapter(f"{_HERE}.llamaindex_chat:SqlChatStore", "llamaindex",
                              "llama_index.core.storage.chat_store.sql",
                              "llama-index SQLAlchemyChatStore on SQLite"),
    "llamaindex.redis": Adapter(f"{_HERE}.llamaindex_chat:RedisChatStore", "llamaindex",
                                "llama_index.storage.chat_store.redis",
                                "llama-index RedisChatStore"),
    "openai-agents.sqlite": Adapter(f"{_HERE}.openai_agents_session:SqliteSessionStore",
                                    "openai-agents", "agents",
                                    "OpenAI Agents SDK SQLiteSession"),
}
