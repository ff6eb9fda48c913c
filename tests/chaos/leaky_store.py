"""A store for the supervision tests (not a zoo entry: it loses nothing): every append
keeps 64 KiB it never frees, and every 16th append opens a file it never closes. The
kept bytes are written (pages of a zeroed allocation may never become resident).

Each append also takes 2 ms, as a store that does I/O might: so a worker lives for the
run's whole duration on any machine (a fast one did 20000 plain SQLite ops in under 2 s,
leaving the supervisor fewer than the 8 samples a leak needs), and its leak grows at the
same pace from one machine to the next."""

from __future__ import annotations

import time
from typing import Any

from harness.stores.sqlite import SqliteStore


class LeakyStore(SqliteStore):
    def __init__(self, url: str, namespace: str = "") -> None:
        super().__init__(url, namespace)
        self.kept: list[Any] = []

    def append(self, session: str, role: str, content: str) -> None:
        super().append(session, role, content)
        time.sleep(0.002)  # the store's own pace (see the module docstring), not a wait
        self.kept.append(b"\x01" * (64 << 10))
        if len(self.kept) % 16 == 0:
            self.kept.append(open("/dev/null", "rb"))  # noqa: SIM115
