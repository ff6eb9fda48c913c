"""Stores that end their worker process in ways a verdict must not hide, and a correct
store that is slow to open. Named by ``ending_stores:<Class>`` specs."""

from __future__ import annotations

import os
import sys
import threading

from harness.stores.sqlite import SqliteStore

#: The ops a VanishingStore worker runs before it ends the process.
VANISH_AFTER = 5


class ExitingStore(SqliteStore):
    """Its constructor calls ``sys.exit()``: no worker ever opens it."""

    def __init__(self, url: str, namespace: str = "") -> None:
        sys.exit()


class InterruptingStore(SqliteStore):
    """Its append raises KeyboardInterrupt: every worker dies with a traceback."""

    def append(self, session: str, role: str, content: str) -> None:
        raise KeyboardInterrupt


class VanishingStore(SqliteStore):
    """Its append ends the process with ``os._exit()`` after a few ops: no traceback, no
    word, exit status 0."""

    def __init__(self, url: str, namespace: str = "") -> None:
        super().__init__(url, namespace)
        self.calls = 0

    def append(self, session: str, role: str, content: str) -> None:
        self.calls += 1
        if self.calls > VANISH_AFTER:
            os._exit(0)
        super().append(session, role, content)


class HangingStore(SqliteStore):
    """Its constructor never returns."""

    def __init__(self, url: str, namespace: str = "") -> None:
        threading.Event().wait()

