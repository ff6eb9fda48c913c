"""``report.json``: the machine-readable result of one run (or one re-check)."""

from __future__ import annotations

import platform
import socket
import sqlite3
import time
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from harness.checker import CheckResult

if TYPE_CHECKING:
    from harness.result import RunResult

__all__ = ["MAX_VIOLATIONS", "SCHEMA_VERSION", "check_dict", "run_dict", "write_json"]

#: The version of report.json's shape (``harness/report/report.schema.json``): raised when
#: a key changes meaning or goes away; added keys keep it.
SCHEMA_VERSION = 1

#: Violations written with their evidence; the counts always cover all of them.
MAX_VIOLATIONS = 200
#: Parts of a run's stats that get a section of their own: where the faults landed
#: (harness.runner.nemesis.fault_summary), what every process used (harness.runner.supervise)
#: which op kinds overlapped on a session (harness.coverage) and how long the slots spent
#: opening their stores (harness.runner.opening).
SECTIONS = ("faults", "resources", "coverage", "opening")


def check_dict(result: CheckResult) -> dict[str, Any]:
    """The check section: ``counts`` are true totals per kind; ``violations`` holds the
    evidence of at most MAX_VIOLATIONS of them (the first of every kind always), and
    ``shown``, ``violations_shown`` and ``truncated`` say how much of it is there."""
    d: dict[str, Any] = result.to_dict()
    if len(d["violations"]) > MAX_VIOLATIONS:
        firsts: set[int] = set()
        kinds: set[str] = set()
        for n, v in enumerate(d["violations"]):
            if v["kind"] not in kinds:
                kinds.add(v["kind"])
                firsts.add(n)
        room = MAX_VIOLATIONS - len(firsts)
        keep = []
        for n, v in enumerate(d["violations"]):
            if n in firsts or room > 0:
                room -= n not in firsts
                keep.append(v)
        shown: dict[str, int] = {}
        for v in keep:
            shown[v["kind"]] = shown.get(v["kind"], 0) + 1
        d.update(violations=keep, shown=shown, violations_shown=len(keep), truncated=True)
    return d


def run_dict(res: RunResult) -> dict[str, Any]:
    sc = res.scenario
    ended = time.time()
    return {
        "schema_version": SCHEMA_VERSION,
        "harness_version": _version("harness"),
        "host": socket.gethostname(),
        "started": _iso(ended - float(res.stats.get("seconds", 0.0))),
        "ended": _iso(ended),
        "libraries": _libraries(res.store.backend),
        "run_id": res.run_id,
        "scenario": sc.name,
        "scenario_file": sc.source,
        "store": res.store.spec,
        "seed": res.seed,
        "worker_slots": sc.workers,
        "ops_per_worker": sc.ops,
        "sessions": sc.sessions,
        "target": res.target_note,
        "interrupted": res.interrupted,
        "reproduce": res.reproduce,
        "verdict": res.verdict,
        "exit_code": res.exit_code,
        "problems": list(res.problems),
        "workers": list(res.workers),
        "stats": {k: v for k, v in res.stats.items() if k not in SECTIONS},
        "check": check_dict(res.result),
        **{k: res.stats[k] for k in SECTIONS if k in res.stats},
    }


def _iso(t: float) -> str:
    return datetime.fromtimestamp(t, UTC).isoformat(timespec="seconds")


def _version(dist: str) -> str | None:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return None


def _libraries(backend: str | None) -> dict[str, str | None]:
    """The versions of what the store's backend talks through, where known."""
    if backend == "sqlite":
        return {"sqlite": sqlite3.sqlite_version, "python": platform.python_version()}
    if backend == "redis":
        return {"redis-py": _version("redis"), "python": platform.python_version()}
    return {"python": platform.python_version()}


def write_json(path: Path, data: dict[str, Any]) -> None:
    path.write_bytes(orjson.dumps(data, option=orjson.OPT_INDENT_2) + b"\n")
