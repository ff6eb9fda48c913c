"""Command windows of a controlled run: how often another worker's op on the same session
ran between the first and last storage command of an op that issues several (a pure
function of the trace and the plan).

Non-atomic code breaks exactly there: a rollback that deletes, then re-inserts turn by
turn; a snapshot that copies the turns in two steps. Interleaving coverage
(:mod:`harness.coverage`) sees ops overlap in time; this sees one op's commands land
inside another's, which only controlled mode can tell (free mode does not record commands).

``command_windows(trace, ops)`` returns ``{"multi_command_ops": n, "entered": m,
"pairs": {"<inner> inside <outer>": k, ...}}``: the ops granted two commands or more, those
of them some other op of their session ran inside, and per pair of kinds the number of
(outer op, inner op) couples. An op is counted inside when one of its commands was granted
strictly between the outer op's first and last command. A grant whose statement met
``SQLITE_BUSY`` (the worker's next grant retries it) ran nothing and is not counted.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any

from harness.runner.control.trace import Trace

__all__ = ["command_windows"]


def command_windows(trace: Trace,
                    ops: Callable[[int, int], tuple[str, str] | None]) -> dict[str, Any]:
    """See the module docstring. ``ops(slot, n)`` is (kind, session) of planned op ``n`` of
    worker ``slot`` (None if unknown: such ops are not counted)."""
    span: dict[tuple[int, int], list[int]] = {}  # (slot, op) -> [first grant, last grant]
    ran = _ran(trace)
    for k, (slot, n) in enumerate(zip(trace.grants, trace.ops, strict=True)):
        if n < 0 or k not in ran:
            continue
        s = span.setdefault((slot, n), [k, k])
        s[1] = k
    pairs: Counter[str] = Counter()
    multi = entered = 0
    for (slot, n), (first, last) in span.items():
        outer = ops(slot, n)
        if outer is None or last == first:
            continue
        multi += 1
        inner = {(trace.grants[k], trace.ops[k]) for k in range(first + 1, last)
                 if k in ran and trace.grants[k] != slot and trace.ops[k] >= 0}
        hit = False
        for t, m in sorted(inner):
            other = ops(t, m)
            if other is not None and other[1] == outer[1]:
                pairs[f"{other[0]} inside {outer[0]}"] += 1
                hit = True
        entered += hit
    return {"multi_command_ops": multi, "entered": entered, "pairs": dict(sorted(pairs.items()))}


def _ran(trace: Trace) -> set[int]:
    """The grants whose command ran: all but those the same worker's next grant retries
    after ``SQLITE_BUSY`` (``trace.busy``)."""
    busy = set(trace.busy)
    nxt: dict[int, int] = {}  # slot -> its next grant, filled walking backwards
    ran = set()
    for k in range(len(trace.grants) - 1, -1, -1):
        slot = trace.grants[k]
        if nxt.get(slot) not in busy:
            ran.add(k)
        nxt[slot] = k
    return ran
