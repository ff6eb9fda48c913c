"""Shared shape of the zoo's Redis stores that keep a session's whole history in one value."""

from __future__ import annotations

from typing import cast

from harness.errors import SnapshotNotFound
from harness.stores.redis import client


class BlobRedisStore:
    """History as one serialized value per session at ``{ns}:{session}:blob``; snapshots as
    copies of that value. Subclasses choose the encoding and the append."""

    backend = "redis"

    def __init__(self, url: str, namespace: str = "harness") -> None:
        self.ns = namespace or "harness"
        self.r = client(url, decode_responses=False)

    def _k(self, session: str, what: str) -> str:
        return f"{self.ns}:{session}:{what}"

    def _get(self, key: str) -> bytes | None:
        return cast(bytes | None, self.r.get(key))

    def load(self, raw: bytes | None) -> list[tuple[str, str]]:
        raise NotImplementedError

    def dump(self, turns: list[tuple[str, str]]) -> bytes:
        raise NotImplementedError

    def append(self, session: str, role: str, content: str) -> None:
        key = self._k(session, "blob")
        turns = self.load(self._get(key))
        turns.append((role, content))
        self.r.set(key, self.dump(turns))

    def history(self, session: str) -> list[tuple[str, str]]:
        return self.load(self._get(self._k(session, "blob")))

    def snapshot(self, session: str) -> str:
        sid = str(self.r.incr(self._k(session, "snapseq")))
        raw = self.r.get(self._k(session, "blob"))
        self.r.set(self._k(session, f"snap:{sid}"), raw if raw is not None else self.dump([]))
        self.r.rpush(self._k(session, "snaps"), sid)
        return sid

    def rollback(self, session: str, snapshot_id: str) -> None:
        raw = self.r.get(self._k(session, f"snap:{snapshot_id}"))
        if raw is None:
            raise SnapshotNotFound(snapshot_id)
        self.r.set(self._k(session, "blob"), raw)

    def snapshots(self, session: str) -> list[str]:
        return [x.decode() for x in cast(list[bytes], self.r.lrange(self._k(session, "snaps"), 0, -1))]

    def close(self) -> None:
        self.r.close()
