"""What each backend owns, on real parts: the classification of real driver errors into
``fail`` and ``info``, SQLite's disk-full switch on a real file, and the backend registry
that scenarios and the coordinator read."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest
import redis

from harness.backends import NAMES, backend, backends, make_target
from harness.backends.redis import ExternalRedis
from harness.backends.sqlite import PageLimit, SqliteTarget
from harness.errors import InputError, ScenarioError, SnapshotNotFound
from harness.runner.worker import classify
from harness.scenario import Scenario, validate


def _raised(call: Callable[[], object]) -> BaseException:
    try:
        call()
    except Exception as err:
        return err
    raise AssertionError("it did not raise")


def _sqlite_errors(tmp_path: Path) -> tuple[BaseException, BaseException]:
    db = tmp_path / "e.db"
    conn = sqlite3.connect(db, isolation_level=None)
    conn.execute("CREATE TABLE t (k INTEGER PRIMARY KEY)")
    conn.execute("INSERT INTO t VALUES (1)")
    integrity = _raised(lambda: conn.execute("INSERT INTO t VALUES (1)"))
    holder = sqlite3.connect(db, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")  # as another process holding the lock
    waiter = sqlite3.connect(db, timeout=0, isolation_level=None)
    busy = _raised(lambda: waiter.execute("SELECT * FROM t"))
    holder.execute("ROLLBACK")
    assert isinstance(integrity, sqlite3.IntegrityError)
    assert isinstance(busy, sqlite3.OperationalError) and "locked" in str(busy)
    return integrity, busy


def _redis_errors(url: str) -> tuple[BaseException, BaseException, BaseException]:
    r = redis.Redis.from_url(url)
    r.set("b:str", "x")
    wrongtype = _raised(lambda: r.rpush("b:str", "y"))  # refused: nothing written
    script = _raised(lambda: r.eval(  # a script that wrote, then failed
        "redis.call('SET', KEYS[1], 'z'); return redis.call('RPUSH', KEYS[1], 'w')", 1, "b:str"))
    assert r.get("b:str") == b"z"
    r.close()
    refused = _raised(lambda: redis.Redis(port=1, socket_connect_timeout=0.5).ping())
    assert isinstance(wrongtype, redis.ResponseError) and isinstance(script, redis.ResponseError)
    assert isinstance(refused, redis.ConnectionError)
    return wrongtype, script, refused


def test_classification_of_real_driver_errors(tmp_path: Path, redis_url: str) -> None:
    integrity, busy = _sqlite_errors(tmp_path)
    wrongtype, script, refused = _redis_errors(redis_url)
    writes = {"integrity": integrity, "busy": busy, "wrongtype": wrongtype, "script": script,
              "refused": refused, "unknown id": SnapshotNotFound("s1"), "oserror": OSError(5, "EIO"),
              "bug": ValueError("x")}
    assert {k: classify("append", e)[0] for k, e in writes.items()} == {
        "integrity": "fail", "busy": "fail", "wrongtype": "fail", "script": "info",
        "refused": "info", "unknown id": "fail", "oserror": "info", "bug": "info"}
    reads = {"busy": busy, "refused": refused, "timeout": redis.TimeoutError("t"),
             "oserror": OSError(5, "EIO"), "integrity": integrity, "wrongtype": wrongtype,
             "bug": ValueError("x")}
    assert {k: classify("read", e)[0] for k, e in reads.items()} == {
        "busy": "info", "refused": "info", "timeout": "info", "oserror": "info",
        "integrity": "fail", "wrongtype": "fail", "bug": "fail"}
    assert classify("read", busy)[1].startswith("OperationalError: database is locked")


def test_sqlite_disk_full_switch_on_a_real_file(tmp_path: Path) -> None:
    conn = sqlite3.connect(tmp_path / "full.db", isolation_level=None)
    conn.execute("CREATE TABLE t (v TEXT)")
    switch = backend("sqlite").disk_full()
    assert isinstance(switch, PageLimit) and backend("redis").disk_full() is None
    switch.apply(1)
    with pytest.raises(sqlite3.OperationalError, match="full"):
        conn.execute("INSERT INTO t VALUES (?)", ("x" * 100_000,))
    switch.apply(1)  # the same value again: nothing changes
    switch.apply(0)
    conn.execute("INSERT INTO t VALUES (?)", ("x" * 100_000,))
    assert conn.execute("SELECT COUNT(*) FROM t").fetchone() == (1,)


def test_the_disk_full_switch_tracks_connections_instead_of_scanning_the_heap(
        tmp_path: Path) -> None:
    """B measured 0.1-0.48 s for the heap scan in a worker forked from a large process,
    enough to use up a 0.4 s fault before any write saw it; the tracked connections make
    turning the switch on cost far less than that scan, whatever the heap."""
    import gc
    import time

    from harness.backends.sqlite import connections

    switch = PageLimit()  # as a worker makes it, before its store opens
    conn = sqlite3.connect(str(tmp_path / "t.db"), isolation_level=None)  # positional path
    conn.execute("CREATE TABLE t (v TEXT)")
    assert conn in connections() and isinstance(conn, sqlite3.Connection)
    heap = [[i] for i in range(2_000_000)]  # a large inherited heap, as under pytest
    t0 = time.perf_counter()
    scanned = [o for o in gc.get_objects() if isinstance(o, sqlite3.Connection)]
    scan_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    switch.apply(1)
    apply_s = time.perf_counter() - t0
    assert conn in scanned and len(heap) == 2_000_000
    assert apply_s < scan_s / 10, (apply_s, scan_s)
    with pytest.raises(sqlite3.OperationalError, match="full"):
        conn.execute("INSERT INTO t VALUES (?)", ("x" * 100_000,))
    switch.apply(0)
    conn.execute("INSERT INTO t VALUES (?)", ("x" * 100_000,))
    conn.close()


def test_registry_names_targets_and_scenarios(tmp_path: Path) -> None:
    assert [b.name for b in backends()] == list(NAMES) == ["sqlite", "redis", "postgres"]
    with pytest.raises(InputError, match="unknown backend 'nope'"):
        backend("nope")
    t = make_target("sqlite", tmp_path, "ns")
    assert isinstance(t, SqliteTarget) and t.url == f"sqlite:///{tmp_path.resolve()}/target/store.db"
    ext = make_target("redis", tmp_path, "ns", url="redis://127.0.0.1:1/0")
    assert isinstance(ext, ExternalRedis) and not ext.managed and "keys under ns:*" in ext.note
    with pytest.raises(ScenarioError, match="backend must be 'sqlite' or 'redis' or 'postgres', got 'nope'"):
        validate(Scenario(backend="nope"))
