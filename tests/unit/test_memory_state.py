"""harness.golden.memory_state on real SQLite files: what it normalises (ids in order of
appearance, timestamps, namespace, volatile patterns, binary and long values) and what it
keeps (every table, rows in the order they were written)."""

from __future__ import annotations

import sqlite3
import time
import uuid
from pathlib import Path

import pytest

from harness.errors import InputError, TargetError
from harness.golden import memory_state


def _db(path: Path, rows: list[tuple[object, ...]]) -> str:
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE t (id TEXT, ref TEXT, at, body)")
    conn.executemany("INSERT INTO t VALUES (?, ?, ?, ?)", rows)
    conn.commit()
    conn.close()
    return f"sqlite:///{path}"


def test_ids_are_numbered_in_order_of_appearance_and_keep_their_number(tmp_path: Path) -> None:
    a, b = uuid.uuid4().hex, str(uuid.uuid4())
    url = _db(tmp_path / "a.db", [(a, None, 1, "x"), (b, a, 2, "y")])
    assert memory_state(url) == {"t (id, ref, at, body)": [
        "'<id-1>', NULL, 1, 'x'", "'<id-2>', '<id-1>', 2, 'y'"]}


def test_two_runs_with_other_ids_and_times_give_the_same_state(tmp_path: Path) -> None:
    def run(name: str) -> dict[str, object]:
        # (an id holds a letter and a digit: 16 random hex digits are all digits, a
        # number to memory_state, once in about 1,850 runs)
        sid = uuid.uuid4().hex[:14] + "a0"
        return memory_state(_db(tmp_path / name, [
            (sid, "2026-11-24T10:00:00Z", time.time(), f"snapshot {sid} taken"),
            ("s", None, time.time_ns(), b"\x80\x04\x95 a pickle")]))
    first = run("1.db")
    assert first == run("2.db")
    assert first["t (id, ref, at, body)"] == [
        "'<id-1>', '<time>', <time>, 'snapshot <id-1> taken'", "'s', NULL, <time>, <12 bytes>"]


def test_namespace_volatile_and_long_values(tmp_path: Path) -> None:
    url = _db(tmp_path / "a.db", [("ns:run-7:k", "req-123", 5, "z" * 300)])
    row = memory_state(url, "ns:run-7", volatile=[r"req-\d+"])["t (id, ref, at, body)"][0]
    assert row.startswith("'<ns>:k', '<volatile>', 5, 'zzz")
    assert row.endswith("… (300 chars)'")


def test_rows_stay_in_the_order_they_were_written(tmp_path: Path) -> None:
    url = _db(tmp_path / "a.db", [("b", None, 1, "1"), ("a", None, 2, "2")])
    assert [r[:3] for r in memory_state(url)["t (id, ref, at, body)"]] == ["'b'", "'a'"]


def test_bad_input_is_one_clear_error(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no backend for 'mongodb' URLs"):
        memory_state("mongodb://x")
    with pytest.raises(TargetError, match="no SQLite file at"):
        memory_state(f"sqlite:///{tmp_path / 'none.db'}")
    assert not (tmp_path / "none.db").exists()  # a dump never creates a file
