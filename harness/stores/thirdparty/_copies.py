"""Snapshot and rollback for a chat history library that has neither, as its users do it:
a snapshot copies the session's messages under a key of its own, a rollback sets the
session's messages to the copy.

The copy starts with a marker message (role ``system``, which every library accepts;
content ``harness-snapshot:<id>``), so that a
snapshot of an empty session exists and an unknown id is told apart from it
(``SnapshotNotFound``). Nothing is made atomic that the library does not make atomic:
the copy is a read then a write, and a rollback is whatever the library's "set the
messages" is (its own ``set_messages``, or ``clear`` then ``add_messages``).
"""

from __future__ import annotations

import uuid

from harness.errors import SnapshotNotFound

__all__ = ["MARK", "CopySnapshots"]

MARK = "harness-snapshot:"


class CopySnapshots:
    """Mixin: a subclass gives ``read(key)`` and ``replace(key, turns)`` in the library's
    terms (a key being a session, conversation or thread id)."""

    capabilities = frozenset({"append", "read", "snapshot", "rollback"})
    #: a snapshot (read, then write) and a rollback (clear, then add) are several calls:
    #: an error in the second says nothing of the first, so no write error is "no effect"
    atomic_writes = False

    def read(self, key: str) -> list[tuple[str, str]]:
        raise NotImplementedError

    def replace(self, key: str, turns: list[tuple[str, str]]) -> None:
        raise NotImplementedError

    def copy_key(self, session: str, snapshot_id: str) -> str:
        return f"{session}::snapshot::{snapshot_id}"

    def history(self, session: str) -> list[tuple[str, str]]:
        return self.read(session)

    def snapshot(self, session: str) -> str:
        sid = uuid.uuid4().hex[:16]
        self.replace(self.copy_key(session, sid), [("system", MARK + sid), *self.read(session)])
        return sid

    def rollback(self, session: str, snapshot_id: str) -> None:
        saved = self.read(self.copy_key(session, snapshot_id))
        if not saved or saved[0] != ("system", MARK + snapshot_id):
            raise SnapshotNotFound(snapshot_id)
        self.replace(session, saved[1:])
