"""A store for the supervision tests (not a zoo entry: it loses nothing): every append
keeps 16 KiB it never frees, and every 16th append opens a file it never closes."""

from __future__ import annotations

from typing import Any

from harness.stores.sqlite import SqliteStore


class LeakyStore(SqliteStore):
    def __init__(self, url: str, namespace: str = "") -> None:
        super().__init__(url, namespace)
        self.kept: list[Any] = []

    def append(self, session: str, role: str, content: str) -> None:
        super().append(session, role, content)
        self.kept.append(bytearray(16 << 10))
        if len(self.kept) % 16 == 0:
            self.kept.append(open("/dev/null", "rb"))  # noqa: SIM115
