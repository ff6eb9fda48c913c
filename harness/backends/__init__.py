"""The backends: one module per kind of storage (``sqlite``, ``redis``), each holding what
is specific to it (see :mod:`harness.backends.base`), and the registry that finds them.

A backend module is imported when it is first asked for, so that validating a scenario
does not load a storage driver. Adding a backend = one module ``harness/backends/<name>.py``
with a ``BACKEND`` object (a :class:`Backend`), its name in :data:`NAMES`, and its test.
"""

from __future__ import annotations

import importlib
from functools import cache
from pathlib import Path

from harness.backends.base import Backend, DiskFull, Stepper, Target
from harness.errors import InputError

__all__ = ["NAMES", "Backend", "DiskFull", "Stepper", "Target", "backend", "backends",
           "make_target"]

#: Every backend, in the order they are listed and their hooks installed.
NAMES: tuple[str, ...] = ("sqlite", "redis", "postgres")


@cache
def backend(name: str) -> Backend:
    """The backend called ``name``; InputError (exit 2) for an unknown one."""
    if name not in NAMES:
        raise InputError(f"unknown backend {name!r} (known: {', '.join(NAMES)})")
    found: Backend = importlib.import_module(f"harness.backends.{name}").BACKEND
    return found


def backends() -> tuple[Backend, ...]:
    """Every backend, in :data:`NAMES` order (importing each module)."""
    return tuple(backend(n) for n in NAMES)


def make_target(name: str, run_dir: Path, namespace: str, url: str = "",
                persistence: str = "always", duration_s: float = 0.0) -> Target:
    """The target of a run on backend ``name`` (see :meth:`Backend.target`)."""
    return backend(name).target(run_dir, namespace, url, persistence, duration_s)
