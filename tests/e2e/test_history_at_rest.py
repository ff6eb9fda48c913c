"""A run's history at rest: only its per-process logs, zstd-compressed, and ``harness check``
on them gives the verdict the run gave; old plain run directories still check."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import zstandard

from harness.history import read_history, write_history
from harness.history_files import ZST
from harness.runner.coordinator import run
from harness.scenario import load_scenario

ROOT = Path(__file__).resolve().parents[2]


def _check(path: Path) -> tuple[int, dict[str, Any]]:
    """``harness check PATH`` as a user runs it: its exit code and recheck.json."""
    r = subprocess.run([sys.executable, "-m", "harness", "check", str(path)], cwd=path.parent,
                       text=True, capture_output=True, timeout=300)
    assert r.returncode in (0, 1), r.stdout + r.stderr
    recheck = json.loads((path / "recheck.json").read_text())
    del recheck["stats"]["seconds"]  # the one thing two checks of one history may differ in
    # the kinds whose pairs count come from report.json when there is one (the store's
    # capabilities), else from the history: compare the overlaps, which are the history's
    recheck["coverage"] = {p: n for p, n in recheck["coverage"]["pairs"].items() if n}
    return r.returncode, recheck


def test_a_run_keeps_only_compressed_logs_and_checks_the_same(tmp_path: Path) -> None:
    sc = load_scenario(ROOT / "scenarios" / "redis-append-race.toml").with_overrides(
        store="zoo.redis-rmw-append", seed=4)
    res = run(sc, reports=tmp_path / "r")
    assert res.exit_code == 1 and res.result.counts()
    d = res.run_dir
    assert not (d / "history.jsonl").exists()
    names = sorted(p.name for p in (d / "history").iterdir())
    assert "final.jsonl.zst" in names and all(n.endswith(ZST) for n in names), names
    assert len(read_history(d)) == res.stats["events"]
    code, recheck = _check(d)
    assert (code, recheck["counts"]) == (res.exit_code, res.result.counts())
    # the same run as a run directory from before compression: plain logs and a merged copy
    old = tmp_path / "old"
    (old / "history").mkdir(parents=True)
    for p in (d / "history").iterdir():
        plain = zstandard.ZstdDecompressor().decompress(p.read_bytes())
        (old / "history" / p.name.removesuffix(".zst")).write_bytes(plain)
    write_history(old / "history.jsonl", read_history(old / "history"))
    assert _check(old) == (code, recheck)
    (old / "history.jsonl").unlink()  # plain logs alone (a coordinator killed before compressing)
    assert _check(old) == (code, recheck)


def test_an_old_plain_golden_run_still_checks(tmp_path: Path) -> None:
    run_dir = tmp_path / "run-lost-turn"
    shutil.copytree(ROOT / "tests" / "golden" / "run-lost-turn", run_dir)
    code, recheck = _check(run_dir)
    assert (code, recheck["counts"]) == (1, {"lost-turn": 1})
