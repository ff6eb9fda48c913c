"""What Ctrl-C, SIGTERM and SIGHUP do to a run: they ask it to stop, and a stopped run still
checks and writes what it has.

The coordinator runs the whole run inside :func:`stop_signals_as_interrupt` and calls
:func:`check_stop` in its loops; a launcher starts each worker inside
:func:`holding_stop_signals`, so a signal that lands during a fork is remembered rather
than raised there. Once the workers have stopped (:func:`winding_down`) a signal raises
nothing: the merge, the check and the report writing go on, and it is said on stderr.
Only within :func:`cuttable` (the check) does a second signal cut short what runs there,
with :class:`CutShort`.
"""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from typing import Any

__all__ = ["CutShort", "Interrupted", "check_stop", "cuttable", "holding_stop_signals", "late_signals",
           "stop_signals_as_interrupt", "winding_down"]


class Interrupted(Exception):
    """SIGTERM (or SIGINT) asked the run to stop; what exists is still checked and written."""


class CutShort(BaseException):
    """A second stop signal cut the check short (a BaseException: a checker's own
    ``except Exception`` must not swallow it)."""


_STOP: list[str] = []  # the signal that asked the run to stop, once one has
_HOLD = [False]  # while a worker is forked: remember a stop signal, raise nothing
_PHASE = ["run"]  # "run", then "after" once the workers stopped, "check" within cuttable()
_LATE: list[str] = []  # signals that came after the workers stopped
_IN_CHECK = [0]  # signals that came during the check


def late_signals() -> list[str]:
    """The stop signals that came after the workers had stopped, in order."""
    return list(_LATE)


def _say(msg: str) -> None:
    """One line on stderr from a signal handler (os.write: no buffered I/O re-entered)."""
    with suppress(OSError):
        os.write(2, f"harness: {msg}\n".encode())


def winding_down() -> None:
    """From here on (the workers have stopped) until :func:`stop_signals_as_interrupt`'s
    block ends, a stop signal raises nothing: it is remembered, said on stderr, and the
    report is still written."""
    _PHASE[0] = "after"


@contextmanager
def cuttable() -> Iterator[None]:
    """The check: a first stop signal lets it finish (said on stderr), a second raises
    :class:`CutShort` wherever the check is."""
    before, _PHASE[0] = _PHASE[0], "check"
    _IN_CHECK[0] = 0
    try:
        yield
    finally:
        _PHASE[0] = before


def _late(name: str) -> None:
    """A stop signal after the workers stopped."""
    _LATE.append(name)
    if _PHASE[0] != "check":
        _say(f"{name}: the workers have stopped; the check and the report are still written")
        return
    _IN_CHECK[0] += 1
    if _IN_CHECK[0] == 1:
        _say(f"{name}: letting the check finish (send it again to cut the check short: "
             "the verdict is then unknown)")
        return
    _say(f"{name} again: cutting the check short; the verdict is unknown")
    raise CutShort(name)


def check_stop() -> None:
    """Raise Interrupted if a stop signal came, even if its exception was swallowed."""
    if _STOP:
        raise Interrupted(_STOP[0])


@contextmanager
def holding_stop_signals() -> Iterator[None]:
    """Within the block a stop signal is only remembered: raised there, inside a fork, it
    would come out of an at-fork hook, which prints it and drops it. The caller's next
    :func:`check_stop` raises it, once the new process is in its list to be reaped."""
    _HOLD[0] = True
    try:
        yield
    finally:
        _HOLD[0] = False


@contextmanager
def stop_signals_as_interrupt() -> Iterator[None]:
    """SIGTERM and SIGHUP raise Interrupted, SIGINT KeyboardInterrupt; all three are
    remembered for :func:`check_stop`.

    Remembered because Python runs a signal handler wherever the main thread happens to be,
    and some places drop its exception and go on: a Ctrl-C that landed while a worker was
    forked raised inside ``logging``'s at-fork hook, was printed as "Exception ignored", and
    the run carried on to its end (2 runs in 15 in the Ctrl-C test; now one landing during
    a fork is only remembered, see :func:`holding_stop_signals`); a restart fault catches
    ``Exception`` while it waits for the server. The coordinator's loops check.
    SIGHUP too: a closed terminal or ssh session must still leave a checked report."""
    def handler(signum: int, frame: Any) -> None:
        name = signal.Signals(signum).name
        if _PHASE[0] != "run":
            _late(name)
            return
        if not _STOP:
            _STOP.append(name)
        if _HOLD[0]:
            return
        if signum == signal.SIGINT:  # as Python's own handler: Ctrl-C before the workers
            raise KeyboardInterrupt  # start still ends as click's "Aborted!"
        raise Interrupted(name)

    _STOP.clear()
    _LATE.clear()
    _PHASE[0] = "run"
    old = {sig: signal.signal(sig, handler)
           for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)}
    try:
        yield
    finally:
        for sig, h in old.items():
            signal.signal(sig, h)
        _STOP.clear()
        _LATE.clear()
        _PHASE[0] = "run"
