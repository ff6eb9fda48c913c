"""The managed PostgreSQL's last resort: the server binaries of the ``pgserver`` wheel (a
test dependency; ``harness[postgres-server]`` for users), copied where the ``postgres``
account can run them when harness runs as root, and removed with the server."""

from __future__ import annotations

from pathlib import Path

import psycopg

from harness.backends.postgres import ManagedPostgres, pip_pg_bin
from harness.stores import BUILTINS, open_store


def test_the_wheels_server_runs_the_reference_store(tmp_path: Path) -> None:
    bindir = pip_pg_bin()
    assert bindir is not None and (bindir / "postgres").exists(), "pgserver is a test dependency"
    server = ManagedPostgres(tmp_path / "pg", bindir=bindir)
    with server:
        with psycopg.connect(server.url) as c:
            version = c.execute("SHOW server_version").fetchone()
        assert version is not None and version[0].startswith("16")
        store = open_store(BUILTINS["postgres"], server.url, "t")
        store.append("s", "user", "on the wheel's server")
        assert store.history("s") == [("user", "on the wheel's server")]
        store.close()
        copy = server._tmp  # a copy of the binaries, when they had to be copied
    assert copy is None or not copy.exists()
    assert not (tmp_path / "pg" / "data").exists()  # the data goes with the server
