"""``zoo.postgres-serial-order``: turns are ordered by a ``BIGSERIAL`` id, which is taken at
INSERT, not at commit.

The story: a turn's row gets its id from a sequence, and reads ``ORDER BY id``. After the
INSERT, the same transaction stores the turn's embedding, which takes a few milliseconds
(here: ``pg_sleep`` of 0 to 20 ms). Sequence values are handed out at once and never wait
for a commit: a turn that got id 10 can commit after the turn with id 11 was already read,
and then appears before it. Caught as ``back-dated-turn``.
"""

from __future__ import annotations

import random
import uuid

from harness.stores.declare import Declared
from harness.stores.postgres import PostgresStore, decode, encode

SCHEMA = """
CREATE TABLE IF NOT EXISTS msgs (id BIGSERIAL PRIMARY KEY, session TEXT NOT NULL,
    role BYTEA NOT NULL, content BYTEA NOT NULL);
CREATE TABLE IF NOT EXISTS snapshots (id TEXT PRIMARY KEY, session TEXT NOT NULL, created BIGSERIAL);
CREATE TABLE IF NOT EXISTS snapshot_msgs (snapshot_id TEXT NOT NULL, n BIGINT NOT NULL,
    role BYTEA NOT NULL, content BYTEA NOT NULL);
"""


class SerialOrderStore(PostgresStore):
    schema_sql = SCHEMA

    def __init__(self, url: str, namespace: str = "harness") -> None:
        super().__init__(url, namespace)
        self.rng = random.Random()

    def append(self, session: str, role: str, content: str) -> None:
        c = self.conn
        with c.transaction():
            c.execute("INSERT INTO msgs (session, role, content) VALUES (%s, %s, %s)",
                              (session, encode(role), encode(content)))
            # the embedding of the turn, in the same transaction: the commit comes later
            c.execute("SELECT pg_sleep(%s)", (self.rng.uniform(0, 0.02),))

    def history(self, session: str) -> list[tuple[str, str]]:
        c = self.conn
        rows = c.execute("SELECT role, content FROM msgs WHERE session = %s ORDER BY id",
                                 (session,)).fetchall()  # BUG: id order is not commit order
        return [(decode(r), decode(c)) for r, c in rows]

    def snapshot(self, session: str) -> str:
        c = self.conn
        sid = uuid.uuid4().hex[:16]
        with c.transaction():
            c.execute("INSERT INTO snapshots (id, session) VALUES (%s, %s)", (sid, session))
            c.execute("INSERT INTO snapshot_msgs (snapshot_id, n, role, content) "
                              "SELECT %s, id, role, content FROM msgs WHERE session = %s", (sid, session))
        return sid

    def rollback(self, session: str, snapshot_id: str) -> None:
        c = self.conn
        with c.transaction():
            c.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (session,))
            self.require_snapshot(c, session, snapshot_id)
            c.execute("DELETE FROM msgs WHERE session = %s", (session,))
            c.execute("INSERT INTO msgs (session, role, content) SELECT %s, role, content "
                              "FROM snapshot_msgs WHERE snapshot_id = %s ORDER BY n", (session, snapshot_id))


STORE = Declared(
    name="zoo.postgres-serial-order", factory="SerialOrderStore", backend="postgres",
    description="turns ordered by a BIGSERIAL id taken at INSERT, committed later",
    expected="back-dated-turn", also_caught_as=("lost-turn", "incompatible-order"),
    scenario="postgres-order.toml")
