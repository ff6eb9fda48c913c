"""The fault kind: what a kind declares and how it applies (:class:`FaultKind`), the scenario
keys it may take (:class:`Key`), what the two nemeses offer a kind to act through
(:class:`Timed`, :class:`Stepped`), and :class:`NoOp`, the smallest kind.

A kind is one module of :mod:`harness.faults` holding ``KIND``, an object that satisfies
:class:`FaultKind`. Everything else (scenario validation, the plan, the ``[control]
faults`` parser, the refusal of faults that do not apply, both nemeses) reads the
declaration; nothing elsewhere names a kind.

A scheduled fault is a plain dict (as the plan writes it): ``id``, ``kind``, then ``at``
(seconds, free mode) or ``at_step`` (a scheduling decision, controlled mode), ``worker``
for an aimed kind, the kind's own keys (free mode) or ``for_steps`` (controlled mode, a
lasting kind).

This module imports nothing of the runner: validating a scenario imports the catalog, and
must not start multiprocess, psutil or redis. Apply code imports what it needs inside its
functions, or acts through the nemesis it is given.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, TypeVar

__all__ = ["Fault", "FaultKind", "Key", "NoOp", "Stepped", "Timed", "duration", "number"]

#: One scheduled fault, as the plan holds it.
Fault = dict[str, Any]
T = TypeVar("T")


def number(v: Any) -> bool:
    """An int or a float, not a bool (TOML's true is no number of seconds)."""
    return isinstance(v, int | float) and not isinstance(v, bool)


@dataclass(frozen=True, slots=True)
class Key:
    """A scenario key of one fault kind (besides ``kind``, the timing keys and ``worker``):
    its default, and what a given value must be. A bad value is refused with
    ``"<name> must be <must>, got <value>"``."""

    name: str
    default: float
    must: str
    ok: Callable[[Any], bool]


def duration(default: float) -> Key:
    """``duration``: how long a lasting fault lasts, in seconds (> 0). In controlled mode
    it maps onto scheduling decisions (:func:`harness.plan.stepped_faults`)."""
    return Key("duration", default, "a positive number of seconds", lambda v: number(v) and v > 0)


class Timed(Protocol):
    """What the free-mode nemesis (:class:`harness.runner.nemesis.Nemesis`) offers a kind.
    It applies faults at times from its clock, in the coordinator's main thread."""

    @property
    def target(self) -> Any:
        """The run's target (:mod:`harness.backends`): the SQLite file or the Redis server."""
        ...

    @property
    def link(self) -> Any:
        """The nemesis's own connections to a Redis target
        (:class:`harness.runner.nemesis.redis_link.ServerLink`); None on SQLite."""
        ...

    @property
    def board(self) -> Any:
        """The workers' shared :class:`harness.runner.nemesis.Board` (progress, disk full)."""
        ...

    @property
    def mp(self) -> Any:
        """The multiprocess context, to start helper processes with."""
        ...

    @property
    def history(self) -> Path:
        """The run's history directory (a helper process writes its own log there)."""
        ...

    def log(self, fault: Fault, **value: Any) -> None:
        """Log a nemesis event of this fault: ``f`` is the kind, ``value`` is ``{"id",
        **value}``. ``at=`` (monotonic ns) says when it happened, if before now."""
        ...

    def later(self, span: float, end: Callable[[bool], None]) -> None:
        """Call ``end(cut)`` after ``span`` (seconds here; decisions in controlled mode):
        ``cut`` is True when the run ended first and the nemesis ends it early."""
        ...

    def aim(self, fault: Fault) -> tuple[int, Any] | None:
        """(process number, process) running the fault's ``worker`` slot, or None after
        logging the fault as skipped (the slot has finished)."""
        ...

    def replace(self, slot: int) -> tuple[int, Any] | None:
        """After the slot's process was killed: start a new process (a new process number)
        continuing the slot after its op in flight; None when no op is left."""
        ...

    def memo(self, key: str, make: Callable[[], T]) -> T:
        """A value this nemesis keeps for the run under ``key`` (made on first use): a
        kind's own state between its faults, such as the processes it paused."""
        ...

    def at_close(self, fn: Callable[[], None]) -> None:
        """Call ``fn()`` when the run ends, once every fault still on has ended."""
        ...

    def helper(self, fault: Fault, proc: Any, cut: Callable[[], None],
               log: Path | None = None) -> None:
        """Track a started helper process of this fault: reaped once it exits; at the end
        of the run killed if still alive, then ``cut()`` is called. ``log``: the history
        log it writes, if any, which is finished once it has been reaped (so the run's
        history can be merged past it while the run goes on)."""
        ...


class Stepped(Timed, Protocol):
    """What the controlled-mode nemesis (:class:`harness.runner.nemesis.SteppedNemesis`)
    offers a kind: the free-mode offer, with ``later`` counting decisions, ``log`` adding
    the decision (``step``) and where an aimed fault found its worker, and ``aim`` asking
    the grant loop first; plus the grant loop's side."""

    @property
    def step(self) -> int:
        """The decision the fault lands before."""
        ...

    @property
    def holds(self) -> dict[int, Callable[[bool], None]]:
        """Slots granted nothing (paused), each with the call that ends its hold. The
        grant loop skips them, and ends them all if only they could go on."""
        ...

    def again(self, fault: Fault, skipped: str) -> None:
        """Apply this fault again before the next decision (it could not land now); if the
        run ends first, log it as skipped with the reason ``skipped``."""
        ...

    def replaced(self, slot: int, proc: Any | None) -> None:
        """Tell the grant loop the slot's process was killed and ``proc`` (None: no op
        left) continues it; returns once the new one stands at its start."""
        ...

    def unlock(self) -> None:
        """Tell the grant loop an SQLite lock was released outside any grant."""
        ...

    def pin(self, pids: list[int]) -> None:
        """Run these processes (a restarted server) on the stepping CPU."""
        ...


class FaultKind(Protocol):
    """One kind of fault. The declarations drive validation and planning; ``at_time``
    and ``at_step`` apply one scheduled fault."""

    @property
    def name(self) -> str:
        """The ``kind`` of a ``[[faults]]`` table, e.g. ``"disk-full"``."""
        ...

    @property
    def backends(self) -> tuple[str, ...]:
        """The backends (``sqlite``, ``redis``) it applies to; a run on another is refused."""
        ...

    @property
    def destructive(self) -> bool:
        """Whether it destroys server state: only on a server the harness started (and can
        restart), unless the user passes ``--allow-destructive-faults``."""
        ...

    @property
    def aimed(self) -> bool:
        """Whether it is aimed at one worker slot (takes ``worker``, drawn from the seed
        when the scenario leaves it out)."""
        ...

    @property
    def keys(self) -> tuple[Key, ...]:
        """Its own scenario keys, with their defaults (free mode)."""
        ...

    @property
    def for_steps(self) -> int | None:
        """None if the fault is over once applied; else it lasts, takes ``duration``
        (seconds, a :func:`duration` key) and, in controlled mode, ``for_steps``
        decisions (this default when ``[control] faults`` does not say)."""
        ...

    def at_time(self, fault: Fault, nemesis: Timed) -> None:
        """Apply ``fault`` now (free mode): log at least one event (its start, or why it
        was skipped); a lasting fault schedules its end with ``nemesis.later``."""
        ...

    def at_step(self, fault: Fault, nemesis: Stepped) -> None:
        """Apply ``fault`` before decision ``nemesis.step`` (controlled mode), while no
        worker runs, the same way for the same decision every time."""
        ...


@dataclass(frozen=True, slots=True)
class NoOp:
    """The smallest kind: applies everywhere, does nothing, and logs that it landed (so a
    schedule of them shows where faults would land). Not in the catalog; tests register
    it (:func:`harness.faults.registered`) to drive the machinery with a harmless fault."""

    name: str = "no-op"
    backends: tuple[str, ...] = ("sqlite", "redis", "postgres")
    destructive: bool = False
    aimed: bool = False
    keys: tuple[Key, ...] = ()
    for_steps: int | None = None

    def at_time(self, fault: Fault, nemesis: Timed) -> None:
        nemesis.log(fault)

    def at_step(self, fault: Fault, nemesis: Stepped) -> None:
        nemesis.log(fault)
