"""Fault tables as a scenario writes them, checked against the catalog: a ``[[faults]]``
table (at times) and a ``[control] faults`` entry (at scheduling decisions). The checks
common to every kind live here once (the timing keys, ``worker``, ``at_step``,
``for_steps``); a kind's own keys are checked by what it declares (:class:`Key`).

Example::

    [[faults]]
    kind = "pause"     # a kind of harness.faults.CATALOG
    every = 0.5        # seconds (or at = 1.0 for one fault); with every: start, stop, count
    worker = 1         # an aimed kind: the slot (default: drawn from the seed)
    duration = 0.6     # the kind's own keys (harness.faults.<kind>)
"""

from __future__ import annotations

from typing import Any

from harness import faults  # the package's CATALOG, read when a table is checked
from harness.errors import ScenarioError
from harness.faults.base import FaultKind, number

__all__ = ["TIMING", "check_fault", "check_stepped_fault"]

#: The keys that place a ``[[faults]]`` rule in time, for every kind.
TIMING = frozenset({"at", "every", "start", "stop", "count"})


def _need(ok: bool, where: str, msg: str) -> None:
    if not ok:
        raise ScenarioError(f"{where}: {msg}")


def _kind(table: dict[str, Any], where: str) -> FaultKind:
    name = table.get("kind")
    if name not in faults.CATALOG:
        raise ScenarioError(f"{where}: unknown fault kind {name!r} "
                            f"(known: {', '.join(faults.CATALOG)})")
    return faults.CATALOG[name]


def check_fault(fault: dict[str, Any], workers: int, where: str) -> None:
    """One ``[[faults]]`` table: a known kind, its own keys only, sane numbers. ``where``
    starts every error (``"<file>: faults[2]"``)."""
    kind = _kind(fault, where)
    own = {k.name: k for k in kind.keys}
    known = set(own) | TIMING | {"kind"} | ({"worker"} if kind.aimed else set())
    unknown = sorted(set(fault) - known)
    if unknown:
        raise ScenarioError(f"{where}: unknown key {unknown[0]!r} for a {kind.name} fault "
                            f"(known: {', '.join(sorted(known))})")
    if ("at" in fault) == ("every" in fault):
        raise ScenarioError(f"{where}: a {kind.name} fault needs exactly one of at = SECONDS "
                            "or every = SECONDS")
    if "at" in fault:
        extra = sorted(set(fault) & {"start", "stop", "count"})
        _need(not extra, where, f"{extra[0] if extra else ''!r} goes with every, not at")
        _need(number(fault["at"]) and fault["at"] >= 0, where,
              f"at must be a number of seconds >= 0, got {fault['at']!r}")
    else:
        _check_every(fault, where)
    if "worker" in fault:
        w = fault["worker"]
        _need(isinstance(w, int) and not isinstance(w, bool) and 0 <= w < workers, where,
              f"worker must be a worker slot from 0 to {workers - 1}, got {w!r}")
    for key in kind.keys:
        if key.name in fault:
            _need(key.ok(fault[key.name]), where,
                  f"{key.name} must be {key.must}, got {fault[key.name]!r}")


def _check_every(fault: dict[str, Any], where: str) -> None:
    _need(number(fault["every"]) and fault["every"] >= 0.01, where,
          f"every must be a number of seconds >= 0.01, got {fault['every']!r}")
    start = fault.get("start", 0)
    _need(number(start) and start >= 0, where,
          f"start must be a number of seconds >= 0, got {start!r}")
    if "stop" in fault:
        _need(number(fault["stop"]) and fault["stop"] > start, where,
              f"stop must be a number of seconds after start, got {fault['stop']!r}")
    if "count" in fault:
        c = fault["count"]
        _need(isinstance(c, int) and not isinstance(c, bool) and c >= 1, where,
              f"count must be an integer >= 1, got {c!r}")


def check_stepped_fault(fault: dict[str, Any], where: str) -> None:
    """One ``[control] faults`` entry: ``kind``, ``at_step``, ``worker`` (an aimed kind)
    and ``for_steps`` (a lasting kind; default: the kind's). The worker's range is
    checked against the scenario's workers by :func:`harness.scenario.control_spec`."""
    kind = _kind(fault, where)
    lasts = kind.for_steps is not None
    known = {"kind", "at_step"} | ({"worker"} if kind.aimed else set()) | (
        {"for_steps"} if lasts else set())
    unknown = sorted(set(fault) - known)
    if unknown:
        raise ScenarioError(f"{where}: unknown key {unknown[0]!r} for a {kind.name} fault at "
                            f"a scheduling decision (known: {', '.join(sorted(known))})")
    for key, lo, need in (("at_step", 0, True), ("worker", 0, kind.aimed),
                          ("for_steps", 1, False)):
        if key not in fault:
            if need:
                raise ScenarioError(f"{where}: a {kind.name} fault needs {key}")
            continue
        x = fault[key]
        if not isinstance(x, int) or isinstance(x, bool) or x < lo:
            raise ScenarioError(f"{where}: {key} must be an integer >= {lo}, got {x!r}")
