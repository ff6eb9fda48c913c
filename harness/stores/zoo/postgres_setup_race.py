"""``zoo.postgres-setup-race``: the tables are made with CREATE TABLE IF NOT EXISTS at
every open, with nothing to keep two processes from doing it at once.

The story: "IF NOT EXISTS makes the set-up idempotent", so every process runs it when it
starts. It is idempotent one process at a time: two processes creating the same table at
the same instant both find it missing, and the second to commit fails on the catalog
(``duplicate key value violates unique constraint "pg_type_typname_nsp_index"``). At a
fresh deploy, some workers die at start. Caught as ``setup-race`` on a cold start.
"""

from __future__ import annotations

from typing import Any

from harness.stores.declare import Declared
from harness.stores.postgres import SCHEMA, PostgresStore


class SetupRaceStore(PostgresStore):
    def _connect(self) -> Any:
        import psycopg

        conn = psycopg.connect(self.url, autocommit=True)
        for stmt in SCHEMA.split(";"):  # BUG: no lock around the set-up
            if stmt.strip():
                conn.execute(stmt)
        return conn


STORE = Declared(
    name="zoo.postgres-setup-race", factory="SetupRaceStore", backend="postgres",
    description="CREATE TABLE IF NOT EXISTS at every open, with no lock around it",
    expected="setup-race", scenario="cold-start-postgres.toml")
