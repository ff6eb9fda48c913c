"""The file-backed integer arrays the streaming checker's table of retired appends uses
during a run (:mod:`harness.runner.spill`): the same answers as ``array("q")``."""

from __future__ import annotations

import random
from array import array
from pathlib import Path

from harness.checker.owner_table import RetiredOwners
from harness.history import Event
from harness.runner.spill import Spill


def test_a_file_array_answers_as_an_array_does(tmp_path: Path) -> None:
    spill = Spill(tmp_path / "spill")
    a, b = spill.array(), array("q")
    rng = random.Random(1)
    for _ in range(1500):
        op = rng.randrange(3)
        if op == 0 or len(b) < 10:
            vals = [rng.randrange(-2**40, 2**40) for _ in range(rng.randrange(1, 9))]
            a.extend(vals)
            b.extend(vals)
        elif op == 1:
            i, v = rng.randrange(len(b)), rng.randrange(-5, 5)
            a[i] = v
            b[i] = v
        else:
            i = rng.randrange(len(b) - 8)
            assert a[i: i + 8] == b[i: i + 8] and a[i] == b[i] and a[-1] == b[-1]
            vals = array("q", [rng.randrange(100), rng.randrange(100)])
            a[i: i + 2] = vals
            b[i: i + 2] = vals
    assert len(a) == len(b) and a[0: len(b)] == b
    spill.close()
    assert not (tmp_path / "spill").exists()


def test_a_spilled_owner_table_finds_what_an_in_memory_one_finds(tmp_path: Path) -> None:
    spill = Spill(tmp_path / "spill")
    tables = [RetiredOwners(), RetiredOwners(spill.array)]
    for t in tables:
        sid = t.session("s0", 0)
        for n in range(50):
            inv = Event(2 * n, 10 * n, 1, "invoke", "append", "s0", ["user", f"w1.{n}|x"], pid=7)
            ok = Event(2 * n + 1, 10 * n + 5, 1, "ok", "append", "s0", ["user", f"w1.{n}|x"],
                       pid=7)
            t.add(f"w1.{n}|x", sid, (inv, ok))
    for n in (0, 17, 49):
        assert tables[0].of(f"w1.{n}|x") == tables[1].of(f"w1.{n}|x") is not None
    assert tables[1].of("w1.99|x") is None and tables[1].of("other") is None
    spill.close()
