"""``langgraph.postgres``: LangGraph's production checkpointer, ``PostgresSaver``
(``langgraph-checkpoint-postgres``), under the same one-node graph as ``langgraph.sqlite``
(:class:`~harness.stores.thirdparty.langgraph_sqlite.LangGraphStore`: a thread per
session, an append per graph run, a snapshot a checkpoint of its own, a rollback
``update_state`` on it).

Opened as LangGraph's docs open it: ``psycopg.Connection.connect(url, autocommit=True,
prepare_threshold=0, row_factory=dict_row)``, then ``saver.setup()``, which every process
calls at start (the docs say to call it the first time; an application cannot tell which
start is the first). Nothing added: no lock around ``setup()``, no retry, no pool.
"""

from __future__ import annotations

from harness.stores.thirdparty.langgraph_sqlite import LangGraphStore

__all__ = ["LangGraphPostgresStore"]


class LangGraphPostgresStore(LangGraphStore):
    """LangGraph PostgresSaver on the run's PostgreSQL (its schema, by ``search_path``)."""

    backend = "postgres"

    def __init__(self, url: str, namespace: str = "harness") -> None:
        from langgraph.checkpoint.postgres import PostgresSaver
        from psycopg import Connection
        from psycopg.rows import dict_row

        self.conn = Connection.connect(url, autocommit=True, prepare_threshold=0,
                                       row_factory=dict_row)
        self.saver = PostgresSaver(self.conn)
        self.saver.setup()
        self.compile()
