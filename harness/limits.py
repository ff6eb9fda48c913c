"""The upper bounds a scenario must stay within, fixed ones and those of this machine.

A scenario past any of these is bad input (exit 2, one line) before anything starts: without
them ``--workers 1000000000`` forks until the OS refuses. Fixed bounds (so a scenario valid
here is valid on a bigger machine too):

=====================  =================================================================
workers                1024, and no more than the OS lets this user start (RLIMIT_NPROC)
sessions               10 000 at once; 1 000 000 over a run with finite ops (sessions x
                       generations: its final read covers every generation)
ops                    100 000 000 per worker, a sanity cap on a typo; ``"unlimited"``
                       has none and runs as many as fit in the duration. No memory
                       bound: the plan is drawn lazily (:mod:`harness.plan`)
payload.max_bytes      64 MiB
duration               finite, at most 7 days
seed                   0 <= seed < 2**64
scenario name          a directory name: no ``/`` or NUL, not ``.`` or ``..``, at most 100
                       bytes of UTF-8 (the run id adds a date and the seed to it)
=====================  =================================================================
"""

from __future__ import annotations

import os
import resource

__all__ = ["MAX_DURATION_S", "MAX_NAME_BYTES", "MAX_OPS", "MAX_PAYLOAD_BYTES", "MAX_SEED",
           "MAX_SESSIONS", "MAX_SESSION_NAMES", "MAX_WORKERS", "name_problem", "process_room",
           "workers_problem"]

MAX_WORKERS = 1024
MAX_SESSIONS = 10_000
MAX_SESSION_NAMES = 1_000_000
MAX_OPS = 100_000_000
MAX_PAYLOAD_BYTES = 64 * 2**20
MAX_DURATION_S = 7 * 24 * 3600.0
MAX_SEED = 2**64 - 1
MAX_NAME_BYTES = 100

#: Below this many workers nobody asks the OS: every machine can start them.
_FEW_WORKERS = 64
#: Processes a run starts besides its workers (coordinator helpers, redis-server, restarts).
_HELPERS = 16


def process_room() -> int | None:
    """How many more processes this user may start (RLIMIT_NPROC less those it runs now),
    or None when the OS sets no limit."""
    soft, _hard = resource.getrlimit(resource.RLIMIT_NPROC)
    if soft == resource.RLIM_INFINITY:
        return None
    uid = os.getuid()
    running = 0
    for entry in os.scandir("/proc") if os.path.isdir("/proc") else ():
        if entry.name.isdigit():
            try:
                running += entry.stat().st_uid == uid
            except OSError:  # it ended meanwhile
                continue
    return max(0, soft - running - _HELPERS)


def workers_problem(workers: int) -> str | None:
    """Why ``workers`` processes cannot be started here, or None."""
    if workers > MAX_WORKERS:
        return f"workers must be at most {MAX_WORKERS}, got {workers}"
    if workers > _FEW_WORKERS:
        room = process_room()
        if room is not None and workers > room:
            return (f"workers = {workers} is more processes than this user may still start "
                    f"(about {room} under RLIMIT_NPROC)")
    return None


def name_problem(name: str) -> str | None:
    """Why ``name`` cannot be a scenario name (it becomes part of a directory name), or None."""
    if not name or name in (".", ".."):
        return f"name must be a usable directory name, got {name!r}"
    if "/" in name or "\0" in name:
        return f"name must not contain '/' or a NUL character, got {name!r}"
    try:
        size = len(name.encode("utf-8"))
    except UnicodeEncodeError:
        return f"name must be valid Unicode text, got {name!r}"
    if size > MAX_NAME_BYTES:
        return f"name must be at most {MAX_NAME_BYTES} bytes of UTF-8, got {size}"
    return None
