"""Renderers of one result: report.json, junit.xml and the console; ``gate`` judges reports."""

from __future__ import annotations

from typing import TYPE_CHECKING

from harness.report.console import print_check, print_run
from harness.report.json_report import check_dict, run_dict, write_json

if TYPE_CHECKING:
    from harness.report.html import Timeline
    from harness.result import RunResult

__all__ = ["check_dict", "print_check", "print_run", "run_dict", "write_json", "write_reports"]


def write_reports(res: RunResult, timeline: Timeline | None = None) -> None:
    """Write every file report of a run into its run directory: ``report.json``,
    ``junit.xml`` and ``report.html`` (from ``timeline``, folded while the run went on;
    without one, read back from the run's logs)."""
    from harness.report.html import WINDOWS, timeline_of, write_html
    from harness.report.junit import write_junit

    if timeline is None:
        timeline = timeline_of(res.run_dir, res.scenario.duration / WINDOWS)
    report = run_dict(res) | {"perf": timeline.perf_section()}
    write_json(res.run_dir / "report.json", report)
    write_junit(res.run_dir / "junit.xml", report)
    write_html(res.run_dir, report, timeline)
