"""The fault catalog: every kind of fault, one module each, found by looking at this package.

A kind is a module here with a module-level ``KIND`` that satisfies
:class:`harness.faults.base.FaultKind`: its name, the backends it applies to, whether it
is destructive, aimed at a worker slot or lasting, its scenario keys with their defaults,
and how it applies at a time (free mode) and before a scheduling decision (controlled
mode). :data:`CATALOG` holds them by name; scenario validation (:mod:`harness.faults.tables`),
the plan, the ``[control] faults`` parser and both nemeses read it and nothing else, so
adding a kind is adding one module (and its test).

The built-in kinds: ``kill``, ``pause``, ``disconnect``, ``restart``, ``disk-full``,
``lock-hold`` (each module's docstring says what it does). :class:`~harness.faults.base.NoOp`
is the smallest kind, kept out of the catalog; :func:`registered` adds kinds for a block
(tests).

Importing this package imports the kinds' modules, which import no runner module (no
multiprocess, psutil or redis): their apply code imports those when it runs.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Iterable, Iterator
from contextlib import contextmanager

from harness.faults.base import Fault, FaultKind, Key, NoOp, Stepped, Timed

__all__ = ["CATALOG", "Fault", "FaultKind", "Key", "NoOp", "Stepped", "Timed", "discover",
           "fault_kind", "registered"]


def discover(paths: Iterable[str], package: str) -> dict[str, FaultKind]:
    """The kinds of the modules of ``package`` (found on ``paths``) that hold ``KIND``, by
    name, in module-name order. Raises ValueError on two kinds of one name, or a lasting
    kind without a ``duration`` key."""
    found: dict[str, FaultKind] = {}
    for info in sorted(pkgutil.iter_modules(list(paths)), key=lambda m: m.name):
        kind = getattr(importlib.import_module(f"{package}.{info.name}"), "KIND", None)
        if kind is None:
            continue
        _check(kind, found)
        found[kind.name] = kind
    return found


def _check(kind: FaultKind, known: dict[str, FaultKind]) -> None:
    if kind.name in known:
        raise ValueError(f"two fault kinds are named {kind.name!r}")
    if kind.for_steps is not None and "duration" not in {k.name for k in kind.keys}:
        raise ValueError(f"fault kind {kind.name!r} lasts, so it needs a duration key")


#: Every fault kind by name (``kind`` in a ``[[faults]]`` table).
CATALOG: dict[str, FaultKind] = discover(__path__, __name__)


def fault_kind(name: str) -> FaultKind:
    """The kind named ``name`` (a validated scenario names only known ones)."""
    return CATALOG[name]


@contextmanager
def registered(*kinds: FaultKind) -> Iterator[None]:
    """Add ``kinds`` to the catalog for the block (tests: a kind defined elsewhere, such as
    :class:`~harness.faults.base.NoOp`)::

        with registered(NoOp()):
            run(from_dict({"faults": [{"kind": "no-op", "every": 0.5}]}))
    """
    for kind in kinds:
        _check(kind, CATALOG)
    CATALOG.update({k.name: k for k in kinds})
    try:
        yield
    finally:
        for kind in kinds:
            CATALOG.pop(kind.name, None)
