"""``harness trend``: runs side by side across nights, read from their report.json files
only (hundreds in well under a second): date, scenario, store, seed, duration, ops, ops/s,
faults applied, violations by kind, verdict; as a table and as ``trend.html`` with plots
over time (ops/s, violations) per scenario and store."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson

from harness.report.html import templates

__all__ = ["rows", "trend_html"]


def rows(reports_dir: Path) -> list[dict[str, Any]]:
    """One row per run under ``reports_dir`` (its direct subdirectories holding a
    report.json: runs and batteries), oldest first; what is not a readable report is
    skipped."""
    out = []
    for f in sorted(reports_dir.glob("*/report.json")):
        try:
            r = orjson.loads(f.read_bytes())
        except (OSError, orjson.JSONDecodeError):
            continue
        if not isinstance(r, dict) or "verdict" not in r:
            continue
        st = r.get("stats", {})
        counts = (r.get("check") or {}).get("counts") or \
            (r.get("first_violation") or {}).get("violations") or {}
        seconds = float(st.get("seconds") or r.get("seconds") or 0.0)
        ops = int(st.get("worker_ops", st.get("ops", 0)))
        out.append({"run": f.parent.name, "date": r.get("ended") or f.parent.name[:15],
                    "scenario": r.get("scenario") or r.get("kind", "?"),
                    "store": r.get("store", "?"), "seed": r.get("seed"),
                    "seconds": round(seconds, 1), "ops": ops,
                    "ops_s": round(ops / seconds) if seconds > 0 else 0,
                    "faults": int((r.get("faults") or {}).get("applied", 0)),
                    "violations": dict(counts), "verdict": r["verdict"]})
    out.sort(key=lambda row: str(row["date"]))
    return out


def trend_html(data: list[dict[str, Any]]) -> str:
    """The page: a plot per (scenario, store) of ops/s and violations per run, and the
    table."""
    series: dict[str, list[dict[str, Any]]] = {}
    for row in data:
        series.setdefault(f"{row['scenario']} · {row['store']}", []).append(row)
    return templates().get_template("trend.html.j2").render(
        rows=data, series_json=orjson.dumps(series).decode())
