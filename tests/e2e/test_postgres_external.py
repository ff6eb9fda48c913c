"""A user's PostgreSQL stays as it was: a run given ``--pg-url`` keeps every object it makes
in a schema of its own and drops it at the end; what a SIGKILLed run leaves, ``harness
clean --pg-url`` lists and drops, never a schema no run made; a password never shows."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import psycopg

from harness.backends.postgres import ManagedPostgres

REPO = Path(__file__).resolve().parents[2]


def _harness(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "harness", *args], capture_output=True,
                          text=True, timeout=300, cwd=cwd)


def _state(url: str) -> dict[str, Any]:
    """Every schema but the system's, and the rows of the canary table."""
    with psycopg.connect(url) as c:
        schemas = sorted(r[0] for r in c.execute(
            "SELECT nspname FROM pg_namespace WHERE nspname NOT LIKE 'pg\\_%' "
            "AND nspname <> 'information_schema'").fetchall())
        rows = c.execute("SELECT * FROM public.canary ORDER BY 1").fetchall()
    return {"schemas": schemas, "canary": rows}


def _plant(url: str) -> None:
    with psycopg.connect(url, autocommit=True) as c:
        c.execute("CREATE TABLE IF NOT EXISTS public.canary (x TEXT)")
        c.execute("INSERT INTO public.canary VALUES ('keep me')")
        # named like a run's schema, but no run made it (no comment): never dropped
        c.execute("CREATE SCHEMA IF NOT EXISTS harness_20200101_000000_mine_seed1")
        c.execute("CREATE TABLE IF NOT EXISTS harness_20200101_000000_mine_seed1.turns (x INT)")


def test_a_run_on_a_users_server_leaves_it_as_it_was(postgres_server: ManagedPostgres,
                                                      tmp_path: Path) -> None:
    url = postgres_server.url
    _plant(url)
    before = _state(url)
    r = _harness("run", str(REPO / "scenarios" / "postgres-order.toml"), "--store", "postgres",
                 "--pg-url", url, "--seed", "1", "--duration", "3", "-q",
                 "--reports", str(tmp_path / "reports"), cwd=tmp_path)
    assert r.returncode == 0, r.stdout[-800:] + r.stderr[-800:]
    assert "--pg-url " + url in r.stdout  # the reproduce line keeps the server
    assert _state(url) == before


def test_a_killed_runs_schema_is_listed_and_dropped_by_clean(postgres_server: ManagedPostgres,
                                                            tmp_path: Path) -> None:
    url = postgres_server.url
    _plant(url)
    before = _state(url)
    coord = subprocess.Popen([sys.executable, "-m", "harness", "run",
                              str(REPO / "scenarios" / "smoke.toml"), "--store", "postgres",
                              "--pg-url", url, "--seed", "1", "--ops", "unlimited",
                              "--duration", "120", "-q", "--reports", str(tmp_path / "reports")],
                             cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                             start_new_session=True)
    try:
        deadline = time.monotonic() + 60
        made: list[str] = []
        while not made and time.monotonic() < deadline:
            with psycopg.connect(url) as c:  # the run's tables, once a worker opened the store
                made = [r[0] for r in c.execute(
                    "SELECT table_schema FROM information_schema.tables WHERE table_name = 'turns' "
                    "AND table_schema LIKE 'harness\\_%smoke\\_seed1'").fetchall()]
            time.sleep(0.1)  # polling a server no event of ours can announce
        assert made, "the run made no schema"
    finally:
        coord.send_signal(signal.SIGKILL)
        coord.wait()
    listed = _harness("clean", "--pg-url", url, cwd=tmp_path)
    assert listed.returncode == 0, listed.stderr
    run_id = next(line.split()[0] for line in listed.stdout.splitlines() if "smoke-seed1" in line)
    assert "1 run(s) with a schema" in listed.stdout
    assert "mine" not in listed.stdout  # a schema no run made is not a run's
    deadline = time.monotonic() + 30
    while True:  # the killed workers' connections end as the server notices them gone
        cleaned = _harness("clean", "--pg-url", url, "--run", run_id, cwd=tmp_path)
        if cleaned.returncode == 0 or time.monotonic() > deadline:
            break
    assert cleaned.returncode == 0, cleaned.stderr
    assert f"removed 4 tables of {run_id}" in cleaned.stdout
    assert _state(url) == before


def test_a_password_in_pg_url_never_shows(tmp_path: Path) -> None:
    r = _harness("run", str(REPO / "scenarios" / "postgres-order.toml"), "--pg-url",
                 "postgresql://me:sekret-pw@127.0.0.1:1/db", "-q", cwd=tmp_path)
    assert r.returncode == 2
    assert "sekret-pw" not in r.stdout + r.stderr and "***" in r.stderr, r.stderr
    assert len(r.stderr.strip().splitlines()) == 1
    r = _harness("clean", "--pg-url", "mysql://me:sekret-pw@h/db", cwd=tmp_path)
    assert r.returncode == 2 and "sekret-pw" not in r.stderr and "postgresql://" in r.stderr
