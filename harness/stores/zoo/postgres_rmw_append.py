"""``zoo.postgres-rmw-append``: the history is one JSON value per session, appended to by
reading it and writing it back, under READ COMMITTED.

The story: the first version kept a conversation as one ``jsonb`` array in a
``histories`` row, which made reads one lookup. An append reads the array, adds the turn
in Python and UPDATEs the row, in one transaction, "so it is atomic". Under READ
COMMITTED a transaction does not see what another commits after its SELECT, and the
UPDATE does not fail when the row changed since: two appends that read the same array both
write it back with their own turn, and the first turn is gone. Caught as ``lost-turn``.
"""

from __future__ import annotations

import json
import uuid
from typing import Any

from harness.stores.declare import Declared
from harness.stores.postgres import PostgresStore

SCHEMA = """
CREATE TABLE IF NOT EXISTS histories (session TEXT PRIMARY KEY, turns JSONB NOT NULL);
CREATE TABLE IF NOT EXISTS snapshots (id TEXT PRIMARY KEY, session TEXT NOT NULL, created BIGSERIAL,
    turns JSONB NOT NULL);
"""


class RmwAppendStore(PostgresStore):
    schema_sql = SCHEMA

    @staticmethod
    def _turns(c: Any, session: str) -> list[list[str]]:
        row = c.execute("SELECT turns FROM histories WHERE session = %s", (session,)).fetchone()
        return list(row[0]) if row else []

    def append(self, session: str, role: str, content: str) -> None:
        c = self.conn
        with c.transaction():
            turns = self._turns(c, session)  # BUG: no FOR UPDATE; READ COMMITTED
            turns.append([role, content])
            c.execute(
                "INSERT INTO histories (session, turns) VALUES (%s, %s) ON CONFLICT (session) "
                "DO UPDATE SET turns = EXCLUDED.turns", (session, json.dumps(turns)))

    def history(self, session: str) -> list[tuple[str, str]]:
        return [(role, content) for role, content in self._turns(self.conn, session)]

    def snapshot(self, session: str) -> str:
        sid = uuid.uuid4().hex[:16]
        self.conn.execute("INSERT INTO snapshots (id, session, turns) SELECT %s, %s, "
                          "COALESCE((SELECT turns FROM histories WHERE session = %s), '[]'::jsonb)",
                          (sid, session, session))
        return sid

    def rollback(self, session: str, snapshot_id: str) -> None:
        c = self.conn
        with c.transaction():
            self.require_snapshot(c, session, snapshot_id)
            c.execute(
                "INSERT INTO histories (session, turns) SELECT %s, turns FROM snapshots WHERE id = %s "
                "ON CONFLICT (session) DO UPDATE SET turns = EXCLUDED.turns", (session, snapshot_id))


STORE = Declared(
    name="zoo.postgres-rmw-append", factory="RmwAppendStore", backend="postgres",
    description="append reads a jsonb history and writes it back under READ COMMITTED",
    expected="lost-turn", scenario="postgres-append-race.toml")
