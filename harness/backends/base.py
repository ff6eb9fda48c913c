"""What every backend provides: the :class:`Backend` protocol, the :class:`Target` base of
what stores talk to, and the two small interfaces a backend implements for the runner
(:class:`Stepper`, seen by its controlled-mode points; :class:`DiskFull`, its disk-full
switch).

A backend is one module, ``harness/backends/<name>.py``, holding everything specific to one
kind of storage: how a run gets a target, what its driver's exceptions mean, how its
driver's commands become scheduling points, and how its storage is made to refuse growth.
Nothing else in the harness names a storage library.
"""

from __future__ import annotations

from pathlib import Path
from types import TracebackType
from typing import Any, Protocol

__all__ = ["Backend", "DiskFull", "Stepper", "Target"]


class Target:
    """Base of every target: ``url`` for the stores, ``managed`` if harness started it
    (destructive faults are allowed only then), ``kind`` the backend's name, ``note`` to
    tell the user.

    A context manager: entering starts it (TargetError if it cannot be made ready, after
    releasing what was started), leaving stops it, on errors and Ctrl-C too."""

    url: str = ""
    managed: bool = False
    kind: str = ""
    note: str = ""

    def start(self) -> None:
        """Make the target ready; raise TargetError if it cannot be."""

    def stop(self) -> None:
        """Release what start made; must be idempotent."""

    def __enter__(self) -> Target:
        try:
            self.start()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, t: type[BaseException] | None, e: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()


class Stepper(Protocol):
    """A controlled worker's end of the control socket, as a backend's points see it
    (:class:`harness.runner.control.hooks.Client`)."""

    depth: int  # > 0 while inside a point's command: nested commands are not points
    busy_retries: int  # how many times a command refused for a lock is tried again

    def point(self, label: str, busy: bool = False) -> None:
        """Stop until the coordinator grants the next step; ``busy``: retrying after the
        storage refused for a lock."""


class DiskFull(Protocol):
    """A backend's disk-full switch inside one worker process."""

    def apply(self, switch: int) -> None:
        """``switch`` non-zero: make this process's storage refuse to grow (writes fail
        with the storage's own "full" error); zero: undo it. Called between ops, often
        with the same value: a repeated value must cost nothing."""


class Backend(Protocol):
    """One kind of storage. Implemented once per module ``harness/backends/<name>.py`` as
    its ``BACKEND`` object; :func:`harness.backends.backend` finds it by name."""

    name: str  # as a scenario's ``backend = "..."`` and a store's declaration say it

    def target(self, run_dir: Path, namespace: str, url: str = "",
               persistence: str = "always", duration_s: float = 0.0) -> Target:
        """The target of a run (not started yet): a user's server at ``url``, or one the
        harness makes under ``run_dir``. Keys or objects of the run live under
        ``namespace``; ``persistence`` is the backend's durability setting, if it has one;
        ``duration_s`` the scenario's duration (what a user's server must keep keys for)."""
        ...

    def definitely_failed(self, exc: BaseException) -> bool:
        """Whether a write that raised ``exc`` (from this backend's driver) certainly did
        not take effect, so its completion is ``fail`` rather than ``info`` (unknown)."""
        ...

    def transient(self, exc: BaseException) -> bool:
        """Whether ``exc`` means the storage could not be reached or was busy, so a read
        that raised it proves nothing about the store (``info``, not ``unreadable``)."""
        ...

    def install_points(self, client: Stepper) -> None:
        """Controlled mode, inside a worker: from now on every storage command this
        backend's driver sends stops at a point of ``client`` first (idempotent)."""

    def disk_full(self) -> DiskFull | None:
        """Inside a worker: a fresh disk-full switch for this process, or None if the
        backend has none."""
        ...

    def dump(self, url: str, namespace: str = "") -> dict[str, Any]:
        """Everything the store at ``url`` holds (under ``namespace``, where the backend
        has one), raw: ``{"<table or key> (<columns or type>)": rows or value}``, in an
        order that does not depend on the page layout or the server's hashing. The
        golden-state dumps (:mod:`harness.golden`) normalise it; ``TargetError`` when
        there is no store at ``url``."""
        ...

