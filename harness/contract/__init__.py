"""The contract suite: what every memory store must do, in three layers, against any spec.

``harness contract SPEC`` runs it and prints a table by layer and case;
:func:`run_contract` is the same from Python; ``pytest --pyargs harness.contract
--harness-store SPEC`` (or one import in a test file, see :mod:`harness.contract.test_store`)
runs it inside a pytest session. Each case states in one line the bug it catches
(:mod:`harness.contract.cases`).

- **sequential**: a hypothesis state machine drives the store against the model (appends,
  reads, snapshots, rollbacks, listings, over two sessions) and shrinks a failure to the
  smallest sequence of calls;
- **edge**: odd content (unicode, emoji, NUL, quotes, newlines; 1 MB; empty), session
  isolation, many sessions, appends and snapshots of one session by several processes at
  once, a rollback to an unknown id, a snapshot of an empty session, a store reopened by
  another process, a backend that is down, TTLs. Every clause that can have several
  writers has several writer processes, started together;
- **concurrency**: short harness runs across real processes that must be clean: free,
  controlled, and under the backend's faults.

The store runs against a target of its own (a fresh SQLite file, or a redis-server
started for the suite), in a temporary directory removed at the end. Adding a case: a
function of :class:`~harness.contract.cases.Ctx` in ``cases.py`` and a line in ``CASES``.
"""

from __future__ import annotations

import tempfile
import traceback
import uuid
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.contract.cases import CASES, Case, Ctx, NotApplicable

__all__ = ["CASES", "Case", "Ctx", "NotApplicable", "Outcome", "contract_ctx", "contract_summary",
           "contract_table", "run_case", "run_contract"]


@dataclass(frozen=True, slots=True)
class Outcome:
    """One case's result: ``status`` is ``pass``, ``fail`` or ``n/a``; ``detail`` says what
    went wrong (or why the case does not apply) in one paragraph."""

    layer: str
    name: str
    catches: str
    status: str
    detail: str = ""

    @property
    def ok(self) -> bool:
        return self.status != "fail"


@contextmanager
def contract_ctx(spec: str) -> Iterator[Ctx]:
    """A context for the cases: the store resolved, its own target started (a SQLite file,
    or a redis-server on a free port) in a temporary directory, all removed at the end.
    An unknown spec raises ``StoreSpecError`` (an ``InputError``) before anything starts."""
    from harness.backends import make_target
    from harness.stores import resolve

    info = resolve(spec)
    namespace = f"harness:contract:{uuid.uuid4().hex[:8]}"
    with tempfile.TemporaryDirectory(prefix="harness-contract-") as d, \
            make_target(info.backend or "sqlite", Path(d) / "run", namespace) as target:
        yield Ctx(spec, info, target.url, namespace, Path(d))


def run_case(case: Case, ctx: Ctx) -> Outcome:
    """Run one case; whatever it raises becomes the outcome's detail."""
    try:
        case.check(ctx)
        return Outcome(case.layer, case.name, case.catches, "pass")
    except NotApplicable as why:
        return Outcome(case.layer, case.name, case.catches, "n/a", str(why))
    except Exception as err:  # a case's failure, whatever raised it, is its detail
        detail = (str(err) if isinstance(err, AssertionError) and str(err)
                  else "".join(traceback.format_exception_only(err)).strip())
        return Outcome(case.layer, case.name, case.catches, "fail", detail)


def run_contract(spec: str, on_case: Callable[[Outcome], None] | None = None,
                 layers: Iterable[str] = ()) -> list[Outcome]:
    """Run every case (of ``layers``, if given) against a store spec; ``on_case`` is told
    each outcome as it comes."""
    only = set(layers)
    outcomes = []
    with contract_ctx(spec) as ctx:
        for case in CASES:
            if only and case.layer not in only:
                continue
            out = run_case(case, ctx)
            outcomes.append(out)
            if on_case is not None:
                on_case(out)
    return outcomes


def contract_table(outcomes: list[Outcome]) -> Any:
    """A rich ``Table``: layer, case, result, and the bug it catches (or what went wrong)."""
    from rich.table import Table

    table = Table("layer", "case", "result", "catches / what went wrong", show_edge=False)
    for o in outcomes:
        shown = {"pass": "pass", "n/a": "n/a", "fail": "[bold red]FAIL[/]"}[o.status]
        table.add_row(o.layer, o.name, shown, o.catches if o.status == "pass" else o.detail,
                      style="red" if o.status == "fail" else None)
    return table


def contract_summary(spec: str, outcomes: list[Outcome]) -> str:
    """``SPEC: P of N cases passed`` (and how many do not apply, when some do not)."""
    passed = sum(o.status == "pass" for o in outcomes)
    na = sum(o.status == "n/a" for o in outcomes)
    tail = f" ({na} not applicable)" if na else ""
    return f"{spec}: {passed} of {len(outcomes) - na} cases passed{tail}"
