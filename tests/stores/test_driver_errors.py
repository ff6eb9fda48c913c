"""Errors of drivers that have no backend of their own, raised for real: SQLAlchemy's and
psycopg's operational errors mean "backend unavailable" (a read is ``info``, never an
``unreadable`` violation), a decoding or malformed-data error stays ``unreadable``, and
classifying never imports a driver."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import psycopg
import sqlalchemy
import sqlalchemy.exc
import sqlalchemy.pool

from harness.backends.meaning import driver_errors, unavailable
from harness.runner.worker import classify

REPO = Path(__file__).resolve().parents[2]


def _raised(call: Callable[[], object]) -> BaseException:
    try:
        call()
    except Exception as err:
        return err
    raise AssertionError("it did not raise")


def _sqlalchemy_errors(tmp_path: Path) -> dict[str, BaseException]:
    gone = sqlalchemy.create_engine(f"sqlite:///{tmp_path / 'no-such-dir' / 'x.db'}")
    unreachable = _raised(gone.connect)  # the file cannot be opened
    db = tmp_path / "a.db"
    holder = sqlite3.connect(db, isolation_level=None)
    holder.execute("CREATE TABLE t (v)")
    holder.execute("BEGIN EXCLUSIVE")  # another process holding the write lock
    busy_engine = sqlalchemy.create_engine(f"sqlite:///{db}", connect_args={"timeout": 0})
    with busy_engine.connect() as conn:
        locked = _raised(lambda: conn.execute(sqlalchemy.text("SELECT * FROM t")).all())
    holder.execute("ROLLBACK")
    pool_engine = sqlalchemy.create_engine(f"sqlite:///{db}", poolclass=sqlalchemy.pool.QueuePool,
                                           pool_size=1, max_overflow=0, pool_timeout=0.05)
    with pool_engine.connect():
        exhausted = _raised(pool_engine.connect)  # the one connection is taken
    assert isinstance(unreachable, sqlalchemy.exc.OperationalError)
    assert isinstance(locked, sqlalchemy.exc.OperationalError) and "locked" in str(locked)
    assert isinstance(exhausted, sqlalchemy.exc.TimeoutError)
    return {"sa-unreachable": unreachable, "sa-locked": locked, "sa-pool": exhausted,
            "sa-disconnect": sqlalchemy.exc.DisconnectionError("connection invalidated")}


def test_operational_errors_of_other_drivers_are_info(tmp_path: Path) -> None:
    errors = _sqlalchemy_errors(tmp_path)
    errors["psycopg-closed-port"] = _raised(lambda: psycopg.connect(
        "host=127.0.0.1 port=1 dbname=x user=x connect_timeout=2"))
    assert isinstance(errors["psycopg-closed-port"], psycopg.OperationalError)
    for name, err in errors.items():
        assert classify("read", err)[0] == "info", name
        assert classify("list_snapshots", err)[0] == "info", name
        assert classify("append", err)[0] == "info", name  # it may have happened


def test_decoding_and_data_errors_stay_unreadable() -> None:
    garbled = {
        "json": _raised(lambda: json.loads("{not json")),
        "utf8": _raised(lambda: b"\xff\xfe".decode("utf-8")),
        "psycopg-data": psycopg.DataError("invalid input syntax for type json"),
        "sa-statement": sqlalchemy.exc.StatementError("bad value", "SELECT 1", {}, ValueError()),
    }
    for name, err in garbled.items():
        assert classify("read", err)[0] == "fail", name  # the checker's `unreadable`


def test_a_store_declared_exception_is_unavailable() -> None:
    class Down(Exception):
        pass

    assert not unavailable(Down("x"))
    assert unavailable(Down("x"), (Down,))
    assert classify("read", Down("x"), (Down,))[0] == "info"
    assert classify("read", Down("x"))[0] == "fail"


def test_classifying_imports_no_driver() -> None:
    code = ("import sys\nfrom harness.runner.worker import classify\n"
            "assert classify('read', ValueError('x'))[0] == 'fail'\n"
            "print(sorted(m for m in ('sqlalchemy', 'psycopg', 'psycopg2') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env={**os.environ, "PYTHONPATH": str(REPO)}).stdout
    assert out.strip() == "[]"
    assert {sqlalchemy.exc.OperationalError, psycopg.OperationalError} <= set(driver_errors())
