"""The checker's public entry points: ``check`` a merged history, ``check_path`` a stored one."""

from __future__ import annotations

import os
from collections.abc import Sequence

from harness.checker.fast import check_fast
from harness.checker.result import CheckResult
from harness.history import Event, read_history

__all__ = ["check", "check_path"]


def check(events: Sequence[Event], *, exact: bool = False, budget_s: float = 30.0) -> CheckResult:
    """Judge a merged history (``harness.history.merge`` order, ``Event.index`` = position).

    The fast checker always runs; it never reports a violation a correct store can
    produce. With ``exact=True`` each session whose ops the fast checker found no fault
    in is also searched for a linearization (Wing-Gong, per session) within ``budget_s``
    seconds in all; a session the search could not finish makes ``valid`` None (unknown,
    never a pass) unless some violation was found.

    >>> check([]).valid
    True
    """
    flagged: set[str] = set()
    fast = check_fast(events, flagged)
    if not exact:
        return fast
    from harness.checker.exact import check_exact, merge_results

    return merge_results(fast, check_exact(events, budget_s=budget_s, skip=flagged))


def check_path(path: str | os.PathLike[str], *, exact: bool = False, budget_s: float = 30.0) -> CheckResult:
    """Read a history (a run directory, a ``history.jsonl`` or a directory of per-worker
    logs; see ``harness.history.read_history``) and :func:`check` it."""
    return check(read_history(path), exact=exact, budget_s=budget_s)
