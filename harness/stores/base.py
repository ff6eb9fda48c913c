"""The ``MemoryStore`` protocol every store under test implements, and its capabilities.

Contract: ``history`` returns ``[(role, content), ...]`` oldest first;
``snapshot`` returns a new id; ``rollback`` makes the turns what they were at that
snapshot and never removes snapshots, raising ``LookupError`` (``SnapshotNotFound``,
``KeyError``) for an id it does not know; ``snapshots`` lists the session's ids.

A store that lacks an operation says so with a ``capabilities`` attribute (on the factory
or the class): the plan then generates only what it supports.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

__all__ = ["ALL_CAPABILITIES", "OPS", "MemoryStore"]

#: Plan operation name -> the store method it calls.
OPS = {
    "append": "append",
    "read": "history",
    "snapshot": "snapshot",
    "rollback": "rollback",
    "list_snapshots": "snapshots",
}
ALL_CAPABILITIES = frozenset(OPS)


@runtime_checkable
class MemoryStore(Protocol):
    """An agent's memory: conversation turns per session, snapshots and rollbacks."""

    def append(self, session: str, role: str, content: str) -> None:
        """Append one turn at the end of the session; durable once this returns."""

    def history(self, session: str) -> list[tuple[str, str]]:
        """The session's turns, oldest first."""
        ...

    def snapshot(self, session: str) -> str:
        """Record the session's current turns; return a new snapshot id."""
        ...

    def rollback(self, session: str, snapshot_id: str) -> None:
        """Make the turns what they were at ``snapshot_id``; keep every snapshot."""

    def snapshots(self, session: str) -> list[str]:
        """The ids of the session's snapshots."""
        ...

    def close(self) -> None:
        """Release connections. Called once, at the end of a worker."""
