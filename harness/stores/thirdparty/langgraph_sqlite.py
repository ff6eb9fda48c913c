"""``langgraph.sqlite``: LangGraph's ``SqliteSaver`` (``langgraph-checkpoint-sqlite``) under a
one-node ``StateGraph``, the way LangGraph's docs build a graph with memory.

A session is a thread (``thread_id``); the graph's state is ``{"turns": [...]}`` with an
appending reducer. The protocol maps onto LangGraph's public API only:

- ``append``: ``graph.invoke({"turns": [[role, content]]}, thread)``, one graph run;
- ``history``: ``graph.get_state(thread).values["turns"]``;
- ``snapshot``: a checkpoint of its own, ``graph.update_state`` with no new turn and the
  metadata ``{"harness": "snapshot"}``; its ``checkpoint_id`` is the id;
- ``rollback``: time travel as LangGraph documents it: ``update_state`` on the snapshot's
  config, which forks the thread from that checkpoint and makes the fork its latest;
  ``SnapshotNotFound`` when ``saver.get_tuple`` finds no such checkpoint;
- ``snapshots``: ``saver.list(thread, filter={"harness": "snapshot"})``.

The connection is ``sqlite3.connect(path, check_same_thread=False)`` as in LangGraph's docs;
nothing is added (no lock between processes, no retry, no cache): each process has its own
saver, as each of an agent's workers would.
"""

from __future__ import annotations

import operator
import sqlite3
from typing import Annotated, Any, TypedDict

from harness.errors import SnapshotNotFound
from harness.stores.sqlite import sqlite_path

__all__ = ["LangGraphSqliteStore", "LangGraphStore"]


class _State(TypedDict):
    turns: Annotated[list[list[str]], operator.add]


class LangGraphStore:
    """A LangGraph checkpointer under a one-node graph: a thread per session, an append per
    graph run (the protocol as the module docstring maps it). A subclass opens ``saver``
    (and ``conn``) and then calls :meth:`compile`."""

    #: a graph run writes several checkpoints, each its own transaction: an error in the
    #: second leaves the first (with the turn) in place
    atomic_writes = False
    saver: Any
    conn: Any

    def compile(self) -> None:
        from langgraph.graph import END, START, StateGraph

        graph = StateGraph(_State)
        graph.add_node("turn", lambda state: {})
        graph.add_edge(START, "turn")
        graph.add_edge("turn", END)
        self.graph = graph.compile(checkpointer=self.saver)

    @staticmethod
    def _thread(session: str, **extra: Any) -> Any:
        return {"configurable": {"thread_id": session, **extra}}

    def append(self, session: str, role: str, content: str) -> None:
        self.graph.invoke({"turns": [[role, content]]}, self._thread(session))

    def history(self, session: str) -> list[tuple[str, str]]:
        values = self.graph.get_state(self._thread(session)).values
        return [(r, c) for r, c in values.get("turns", [])]

    def snapshot(self, session: str) -> str:
        config: Any = {**self._thread(session), "metadata": {"harness": "snapshot"}}
        saved = self.graph.update_state(config, {"turns": []})
        return str(saved["configurable"]["checkpoint_id"])

    def rollback(self, session: str, snapshot_id: str) -> None:
        config = self._thread(session, checkpoint_ns="", checkpoint_id=snapshot_id)
        if self.saver.get_tuple(config) is None:
            raise SnapshotNotFound(snapshot_id)
        self.graph.update_state(config, {"turns": []})

    def snapshots(self, session: str) -> list[str]:
        return [str(t.config["configurable"]["checkpoint_id"])
                for t in self.saver.list(self._thread(session), filter={"harness": "snapshot"})]

    def close(self) -> None:
        self.conn.close()


class LangGraphSqliteStore(LangGraphStore):
    """LangGraph SqliteSaver on the run's SQLite file."""

    backend = "sqlite"

    def __init__(self, url: str, namespace: str = "harness") -> None:
        from langgraph.checkpoint.sqlite import SqliteSaver

        self.conn = sqlite3.connect(sqlite_path(url), check_same_thread=False)
        self.saver = SqliteSaver(self.conn)
        self.compile()
