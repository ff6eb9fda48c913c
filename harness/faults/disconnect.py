"""The ``disconnect`` fault (Redis): cut a worker's connections to the server.

Free mode: ``CLIENT KILL ADDR`` for each TCP connection the worker has to Redis (found with
psutil). A kill that lands between two commands is healed silently by redis-py's
reconnect; so the nemesis aims at the worst moment, after the server has applied a command
and before the client reads the reply: it stalls the server with a busy Lua script for
``stall`` s (default 0.05), during which the worker's next command queues up, and sends the
kill near the end of the stall on a second connection. Redis runs the queued command, then
the kill, and the reply is never sent. ``stall = 0`` sends a plain kill.

Controlled mode: the same kill, while the worker stands before its command; that command
then meets a closed connection. ``stall`` has no meaning there and is dropped.

Example: ``[[faults]] kind = "disconnect", every = 0.4, stall = 0.05``.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from harness.faults.base import Fault, Key, Stepped, Timed, number

__all__ = ["KIND", "Disconnect"]

STALL = Key("stall", 0.05, "between 0 and 1 second", lambda v: number(v) and 0 <= v <= 1)


@dataclass(frozen=True, slots=True)
class Disconnect:
    name: str = "disconnect"
    backends: tuple[str, ...] = ("redis",)
    destructive: bool = False
    aimed: bool = True
    keys: tuple[Key, ...] = (STALL,)
    for_steps: int | None = None

    def at_time(self, fault: Fault, nemesis: Timed) -> None:
        import redis

        found = nemesis.aim(fault)
        link = nemesis.link
        if found is None or link is None:
            return
        number, p = found
        addrs = link.client_addrs(p.pid)
        t = time.monotonic_ns()
        try:
            killed, t = link.kill_clients(addrs, fault.get("stall", 0.0))
            error = None
        except redis.RedisError as err:
            killed, error = 0, f"{type(err).__name__}: {err}"
        nemesis.log(fault, at=t, slot=fault["worker"], process=number, pid=p.pid,
                    clients=killed, stall=fault.get("stall", 0.0),
                    **({"error": error} if error else {}))

    def at_step(self, fault: Fault, nemesis: Stepped) -> None:
        self.at_time(fault, nemesis)


KIND = Disconnect()
