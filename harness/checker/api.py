"""The checker's public entry points: ``check`` a merged history, ``check_path`` a stored one."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import replace

from harness.checker.fast import check_fast
from harness.checker.result import CheckResult
from harness.history import Event, read_history

__all__ = ["check", "check_path"]


def check(events: Sequence[Event], *, exact: bool = False, budget_s: float = 30.0) -> CheckResult:
    """Judge a merged history (``harness.history.merge`` order, ``Event.index`` = position).

    Each session is first proven if it can be quickly: without rollbacks on its raw pairs
    (:mod:`harness.checker.plain`), with rollbacks by a short search whose proof is
    replayed. The fast rules run on the others; they never report a
    violation a correct store can produce. Every session they find nothing in is then
    decided exactly (:class:`harness.checker.exact.Prover`): proven linearizable, or
    refuted with the ops that cannot be ordered. By default each session gets at most
    :data:`~harness.checker.exact.SESSION_STEPS` steps of search and all of them
    ``budget_s`` seconds; a session
    left undecided keeps the fast verdict and is named in
    ``stats["exact"]["sessions_unknown"]`` (a pass, not a proof), with how far the
    searches got in ``stats["exact"]["sessions_unknown_detail"]``. With ``exact=True`` the
    sessions share ``budget_s`` and an undecided one makes ``valid`` None (unknown, never a
    pass) unless some violation was found.

    >>> check([]).valid
    True
    """
    from harness.checker.exact import SESSION_STEPS, Prover

    prover = Prover(total_s=budget_s, session_steps=None if exact else SESSION_STEPS)
    res = check_fast(events, prover=prover)
    if exact and res.valid and prover.tally.unknown:
        return replace(res, valid=None)
    return res


def check_path(path: str | os.PathLike[str], *, exact: bool = False, budget_s: float = 30.0) -> CheckResult:
    """Read a history (a run directory, a ``history.jsonl`` or a directory of per-worker
    logs; see ``harness.history.read_history``) and :func:`check` it."""
    return check(read_history(path), exact=exact, budget_s=budget_s)
