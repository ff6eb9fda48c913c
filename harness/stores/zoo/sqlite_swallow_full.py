"""``zoo.sqlite-swallow-full``: a turn that cannot be written for lack of space is logged
and forgotten.

The story: memory is "best effort", an agent should keep talking even when its memory
cannot be saved, so ``append`` catches ``sqlite3.OperationalError``, logs a warning and
returns as if the turn were written. On a full disk it is not: the caller was told it was
saved, and the next read does not have it. Nothing else makes SQLite fail a write here
(the busy timeout outlasts every lock), so only ``disk-full`` exposes it. Caught as
``lost-turn``.
"""

from __future__ import annotations

import logging
import sqlite3

from harness.stores.declare import Declared
from harness.stores.sqlite import SqliteStore

log = logging.getLogger(__name__)


class SwallowFullStore(SqliteStore):
    def append(self, session: str, role: str, content: str) -> None:
        try:
            super().append(session, role, content)
        except sqlite3.OperationalError as err:  # BUG: the caller is told it was saved
            log.info("could not save a turn of %s: %s", session, err)


STORE = Declared(
    name="zoo.sqlite-swallow-full", factory="SwallowFullStore", backend="sqlite",
    description="append logs and swallows SQLITE_FULL (disk-full)",
    expected="lost-turn", scenario="chaos-sqlite.toml", fault="disk-full")
