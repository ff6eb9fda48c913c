"""Scheduling points inside a controlled worker process, at storage-command granularity.

:func:`attach` connects the worker to the coordinator's control socket and, in this
process only:

- asks every backend to install its points (:meth:`harness.backends.Backend.install_points`):
  each storage command of its driver then stops at a point of this worker's
  :class:`Client` first (``sqlite3``: :mod:`harness.backends.sqlite_points`, which also
  turns waiting for a lock into busy points; redis-py: :mod:`harness.backends.redis_points`);
- seeds ``random`` and ``uuid.uuid4`` from the run's seed, the worker slot and (for
  the replacement of a killed process) the process number, so ids a store draws
  (snapshot ids) are the same in a replay and differ between processes.

Stores opened afterwards, built-in or third-party, are covered without changes as long
as they reach their driver through the module attributes the backends patch.

Wire format (worker -> coordinator): ``h`` + slot (int32) once; then per point
``p`` (or ``b``: retrying after SQLITE_BUSY) + op index (int32) + label length (uint8) +
label; ``d`` when done. Coordinator -> worker: one byte ``g`` per grant.
"""

from __future__ import annotations

import contextlib
import os
import random
import socket
import struct
import threading
import uuid
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from harness.backends import backends

__all__ = ["Attach", "Client", "attach"]

_POINT = struct.Struct("<ciB")

CLIENT: Client | None = None


@dataclass(frozen=True, slots=True)
class Attach:
    """What a worker needs to join a controlled run (a field of its WorkerSpec)."""

    address: str  # the coordinator's control socket
    seed: int
    busy_retries: int = 1000
    cpu: int = -1  # the CPU to run on (-1: wherever)


class Client:
    """This worker's end of the control socket."""

    def __init__(self, address: str, slot: int, busy_retries: int) -> None:
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.connect(address)
        self.fd = self.sock.fileno()
        self.op = -1  # index of the op being run, sent with every point
        self.depth = 0  # > 0 while inside a point's command (nested sends are not points)
        self.busy_retries = busy_retries
        self.points = 0
        self.lock = threading.Lock()
        os.write(self.fd, b"h" + struct.pack("<i", slot))

    def point(self, label: str, busy: bool = False) -> None:
        """Stop here until the coordinator grants this worker its next step."""
        lb = label.encode("utf-8", "replace")[:200]
        # A store's own threads take their points one at a time (one message in flight).
        with self.lock:
            os.write(self.fd, _POINT.pack(b"b" if busy else b"p", self.op, len(lb)) + lb)
            self.points += 1
            if os.read(self.fd, 1) != b"g":
                os._exit(4)  # the coordinator is gone: stop without touching the store

    def ops(self, ops: Iterable[Any], start: int = 0) -> Iterator[Any]:
        """``ops`` (a stream from op ``start`` on), telling each point which op (by its
        index in the whole stream) it is in."""
        for i, op in enumerate(ops, start):
            self.op = i
            yield op

    def done(self) -> None:
        with contextlib.suppress(OSError):
            os.write(self.fd, b"d")
        self.sock.close()


def attach(how: Attach, slot: int, process: int | str | None = None) -> Client:
    """Connect to the coordinator, install the hooks, and stop at the ``start`` point."""
    global CLIENT
    if how.cpu >= 0:
        with contextlib.suppress(OSError):
            os.sched_setaffinity(0, {how.cpu})
    key = f"{how.seed}:{slot}" if process in (None, slot) else f"{how.seed}:{slot}:{process}"
    random.seed(key)
    rng = random.Random(f"{key}:uuid")
    uuid.uuid4 = lambda: uuid.UUID(int=rng.getrandbits(128), version=4)
    CLIENT = Client(how.address, slot, how.busy_retries)
    for b in backends():
        b.install_points(CLIENT)
    CLIENT.point("start")
    return CLIENT
