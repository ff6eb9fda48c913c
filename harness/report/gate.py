"""``harness gate``: reports judged against a release's rules, one line per run and an
exit code for CI.

A run fails the gate when it did not prove anything (interrupted, its check unknown, a
worker or fault fell short: ``incomplete``), when it found violations beyond the allowed
ones, when it ran fewer ops than asked (``--min-ops``), when no fault landed although faults
were required (``--require-faults``), or when a pair of op kinds overlapped fewer times
than asked (``--min-coverage PAIR=N``; ``--min-coverage default`` asks
:data:`DEFAULT_COVERAGE` of every pair the store can do). A battery's report
(``harness run --store SPEC``) is judged the same way from its own sections.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from harness.errors import InputError

__all__ = ["DEFAULT_COVERAGE", "GateRules", "judge", "load_report"]

#: ``--min-coverage default``: each of these pairs, where the store can do both kinds, must
#: have overlapped at least this often (the pairs where non-atomic code breaks).
DEFAULT_COVERAGE = {"append+append": 10, "append+read": 10, "append+rollback": 1,
                    "read+rollback": 1, "snapshot+rollback": 1, "append+snapshot": 1}


@dataclass(frozen=True, slots=True)
class GateRules:
    """What a run must meet: at most ``max_violations`` violations of kinds not in
    ``allow``; at least ``min_ops`` worker ops; a fault applied if ``require_faults``;
    each ``(pair, n)`` of ``min_coverage`` overlapped at least n times."""

    max_violations: int = 0
    allow: frozenset[str] = frozenset()
    min_ops: int = 0
    require_faults: bool = False
    min_coverage: tuple[tuple[str, int], ...] = ()
    default_coverage: bool = False


def load_report(path: Path) -> dict[str, Any]:
    """The report.json at ``path`` (a file, or a run or battery directory holding one).
    InputError (exit 2) if there is none or it is not a report."""
    file = path / "report.json" if path.is_dir() else path
    try:
        data = orjson.loads(file.read_bytes())
    except FileNotFoundError:
        raise InputError(f"{path}: no report.json there") from None
    except (OSError, orjson.JSONDecodeError) as err:
        raise InputError(f"{file}: not a readable report ({err})") from None
    if not isinstance(data, dict) or "verdict" not in data:
        raise InputError(f"{file}: not a harness report (no verdict)")
    return data


def judge(report: dict[str, Any], rules: GateRules) -> list[str]:
    """Why ``report`` fails the gate (empty: it passes)."""
    battery = report.get("kind") == "battery"
    why: list[str] = []
    verdict = report.get("verdict")
    if verdict in ("interrupted", "unknown", "incomplete"):
        detail = (report.get("problems") or [""])[0] if verdict == "incomplete" else ""
        check = report.get("check", {})
        if verdict == "unknown" and check.get("error"):
            detail = str(check["error"])
        why.append(f"{verdict}" + (f": {detail}" if detail else ""))
    counts = (report.get("first_violation") or {}).get("violations", {}) if battery \
        else report.get("check", {}).get("counts", {})
    bad = {k: n for k, n in counts.items() if k not in rules.allow and n}
    if sum(bad.values()) > rules.max_violations:
        why.append("violations: " + ", ".join(f"{k} x{n}" for k, n in sorted(bad.items())))
    ops = _ops(report, battery)
    if ops < rules.min_ops:
        why.append(f"{ops} worker ops, fewer than --min-ops {rules.min_ops}")
    if rules.require_faults and not _faults_applied(report, battery):
        why.append("no fault was applied (--require-faults)")
    pairs = (report.get("coverage") or {}).get("pairs", {})
    for pair, want in _coverage_rules(report, rules, battery):
        got = int(pairs.get(pair, 0))
        if got < want:
            why.append(f"{pair} overlapped {got} times, fewer than {want}")
    return why


def _ops(report: dict[str, Any], battery: bool) -> int:
    if battery:
        return sum(int(r.get("ops", 0)) for p in report.get("phases", [])
                   for r in p.get("rounds", []))
    stats = report.get("stats", {})
    return int(stats.get("worker_ops", stats.get("ops", 0)))


def _faults_applied(report: dict[str, Any], battery: bool) -> bool:
    if battery:
        return any(g.startswith("fault:") and v.get("reached", 0) > 0
                   for p in report.get("phases", []) for g, v in p.get("goals", {}).items())
    return int((report.get("faults") or {}).get("applied", 0)) > 0


def _coverage_rules(report: dict[str, Any], rules: GateRules,
                    battery: bool) -> list[tuple[str, int]]:
    out = list(rules.min_coverage)
    if rules.default_coverage:
        cov = report.get("coverage") or {}
        kinds = set(cov.get("kinds") or []) if not battery else {
            k for pair in cov.get("pairs", {}) for k in pair.split("+")}
        out += [(pair, n) for pair, n in DEFAULT_COVERAGE.items()
                if set(pair.split("+")) <= kinds and pair not in dict(rules.min_coverage)]
    return out
