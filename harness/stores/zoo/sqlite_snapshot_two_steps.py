"""``zoo.sqlite-snapshot-two-steps``: snapshot registers its id, then copies the turns in
two transactions, the older half first.

The story: snapshots of long conversations were split to keep each write transaction
short: the first transaction lists the new snapshot and copies the first half of the turns,
the second copies the rest as they are by then. With appends alone this is harmless (they
only add at the end, so the copy is the list as it was at the second step). A rollback
between the two steps is not: the copy is half the old list and half the new one, a state
the session never had, and a rollback to it restores that. A rollback to the snapshot
between the steps (its id is already listed) restores half of it. Caught as
``bad-rollback``. Only a rollback overlapping a snapshot exposes it.
"""

from __future__ import annotations

import uuid

from harness.stores.declare import Declared
from harness.stores.sqlite import SqliteStore, immediate


class SnapshotTwoStepsStore(SqliteStore):
    def snapshot(self, session: str) -> str:
        sid = uuid.uuid4().hex[:16]
        with immediate(self.conn):
            self.conn.execute(
                "INSERT INTO snapshots (id, session, created) "
                "VALUES (?, ?, (SELECT COUNT(*) FROM snapshots))", (sid, session))
            (count,) = self.conn.execute(
                "SELECT COUNT(*) FROM turns WHERE session = ?", (session,)).fetchone()
            half = count // 2
            self.conn.execute(
                "INSERT INTO snapshot_turns (snapshot_id, seq, role, content) "
                "SELECT ?, seq, role, content FROM turns WHERE session = ? "
                "ORDER BY seq LIMIT ?", (sid, session, half))
        with immediate(self.conn):  # BUG: the turns may have been replaced in between
            self.conn.execute(
                "INSERT INTO snapshot_turns (snapshot_id, seq, role, content) "
                "SELECT ?, ? + ROW_NUMBER() OVER (ORDER BY seq), role, content FROM turns "
                "WHERE session = ? ORDER BY seq LIMIT -1 OFFSET ?", (sid, half, session, half))
        return sid


STORE = Declared(
    name="zoo.sqlite-snapshot-two-steps", factory="SnapshotTwoStepsStore", backend="sqlite",
    description="snapshot lists its id and copies half the turns, then the rest in a second transaction",
    expected="bad-rollback", scenario="sqlite-rollback-storm.toml",
    also_caught_as=("reordered-turns", "duplicate-turn", "lost-turn", "incompatible-order"))
