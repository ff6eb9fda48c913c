"""``junit.xml``: one run as a JUnit test suite, in the format pytest writes (xunit2), so a
CI dashboard shows each invariant as a test: one test case per violation kind, plus "run
completed" (every worker ran and nothing fell short) and "check finished" (the checker
decided). A failing case carries the first violations' sentences and the events behind
them, and the reproduce command."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

from harness.checker import KINDS

__all__ = ["SHOWN", "junit_xml", "write_junit"]

SHOWN = 5  # violations of a kind written out in full in its failure


def junit_xml(report: dict[str, Any]) -> bytes:
    """The JUnit XML of a ``report.json`` (as :func:`harness.report.run_dict` makes it)."""
    check = report["check"]
    seconds = float(report.get("stats", {}).get("seconds", 0.0))
    suite_name = f"harness.{report['scenario']}.{report['store']}.seed{report['seed']}"
    cases: list[ET.Element] = []

    def case(name: str, failure: str | None = None, body: str = "",
             skipped: str | None = None) -> None:
        el = ET.Element("testcase", classname=suite_name, name=name, time="0")
        if failure is not None:
            f = ET.SubElement(el, "failure", message=failure)
            f.text = body
        if skipped is not None:
            ET.SubElement(el, "skipped", message=skipped)
        cases.append(el)

    problems = list(report.get("problems", []))
    if report.get("interrupted"):
        problems.insert(0, "the run was interrupted")
    case("run completed", "; ".join(problems) if problems else None,
         "\n".join(problems) + f"\nreproduce: {report['reproduce']}" if problems else "")
    finished = check.get("valid") in (True, False)
    case("check finished", None if finished else f"the check did not finish: "
         f"{check.get('error') or 'unknown'}", "" if finished else str(check.get("error")))
    counts: dict[str, int] = check.get("counts", {})
    for kind in KINDS:
        n = counts.get(kind, 0)
        if n == 0:
            case(f"no {kind}")
            continue
        shown = [v for v in check.get("violations", []) if v["kind"] == kind][:SHOWN]
        lines = [f"{n} {kind} violation{'s' if n != 1 else ''}; reproduce: {report['reproduce']}"]
        for v in shown:
            lines.append("")
            lines.append(v["message"])
            lines += [f"  #{e['index']} p={e['process']} {e['type']} {e['f']} "
                      f"{e.get('session')} {str(e.get('value'))[:120]}" for e in v["events"]]
        case(f"no {kind}", f"{n} x {kind}: {shown[0]['message'] if shown else ''}"[:500],
             "\n".join(lines))
    failures = sum(1 for c in cases if c.find("failure") is not None)
    suites = ET.Element("testsuites")
    suite = ET.SubElement(suites, "testsuite", name=suite_name, tests=str(len(cases)),
                          failures=str(failures), errors="0", skipped="0",
                          time=f"{seconds:.3f}", hostname=str(report.get("host", "")),
                          timestamp=str(report.get("ended", "")))
    suite.extend(cases)
    ET.indent(suites)
    out: bytes = ET.tostring(suites, encoding="utf-8", xml_declaration=True)
    return out + b"\n"


def write_junit(path: Path, report: dict[str, Any]) -> None:
    path.write_bytes(junit_xml(report))
