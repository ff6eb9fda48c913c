"""Renderers of one result: JSON file and console (HTML and JUnit come with ``gate``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from harness.report.console import print_check, print_run
from harness.report.json_report import check_dict, run_dict, write_json

if TYPE_CHECKING:
    from harness.result import RunResult

__all__ = ["check_dict", "print_check", "print_run", "run_dict", "write_json", "write_reports"]


def write_reports(res: RunResult) -> None:
    """Write every file report of a run into its run directory."""
    write_json(res.run_dir / "report.json", run_dict(res))
