"""Stores that take their time to open (or never do), as stores of agent libraries that
import their framework or run their set-up when opened."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

from harness.stores.sqlite import SqliteStore

#: How long :class:`SlowOpenStore` takes to open: longer than the test's whole duration.
SLOW_OPEN_S = 3.0  # longer than the run below: unguarded, every fault hits an opening worker


class SlowOpenStore(SqliteStore):
    """A correct SQLite store whose constructor sleeps :data:`SLOW_OPEN_S` first."""

    def __init__(self, url: str, namespace: str = "") -> None:
        time.sleep(SLOW_OPEN_S)
        super().__init__(url, namespace=namespace)


class NeverOpensStore(SqliteStore):
    """Its constructor never returns (a set-up waiting on something that never comes)."""

    backend = "sqlite"

    def __init__(self, url: str, namespace: str = "") -> None:
        threading.Event().wait()


class OneNeverOpensStore(SqliteStore):
    """The first worker to open it hangs for good; the others open at once."""

    def __init__(self, url: str, namespace: str = "") -> None:
        marker = Path(url[len("sqlite://"):]).parent / "hung"
        try:
            os.close(os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
        except FileExistsError:
            super().__init__(url, namespace=namespace)
            return
        threading.Event().wait()
