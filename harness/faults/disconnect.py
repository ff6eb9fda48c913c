"""The ``disconnect`` fault (Redis, PostgreSQL): cut a worker's connections to the server.

Free mode: ``CLIENT KILL ADDR`` for each TCP connection the worker has to Redis (found with
psutil). A kill that lands between two commands is healed silently by redis-py's
reconnect; so the nemesis aims at the worst moment, after the server has applied a command
and before the client reads the reply: it stalls the server with a busy Lua script for
``stall`` s (default 0.05), during which the worker's next command queues up, and sends the
kill near the end of the stall on a second connection. Redis runs the queued command, then
the kill, and the reply is never sent. ``stall = 0`` sends a plain kill.

On PostgreSQL: ``pg_terminate_backend`` for every server process whose client is one of
the worker's TCP connections (matched on ``client_port`` in ``pg_stat_activity``): the
worker's next statement, or the one in flight, meets a closed connection; a transaction it
had open is rolled back by the server. ``stall`` has no meaning there.

Controlled mode: the same kill, while the worker stands before its command; that command
then meets a closed connection. ``stall`` has no meaning there and is dropped.

Example: ``[[faults]] kind = "disconnect", every = 0.4, stall = 0.05``.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from urllib.parse import urlsplit

from harness.faults.base import Fault, Key, Stepped, Timed, number

__all__ = ["KIND", "Disconnect"]

STALL = Key("stall", 0.05, "between 0 and 1 second", lambda v: number(v) and 0 <= v <= 1)


@dataclass(frozen=True, slots=True)
class Disconnect:
    name: str = "disconnect"
    backends: tuple[str, ...] = ("redis", "postgres")
    destructive: bool = False
    aimed: bool = True
    keys: tuple[Key, ...] = (STALL,)
    for_steps: int | None = None

    def at_time(self, fault: Fault, nemesis: Timed) -> None:
        import redis

        if getattr(nemesis.target, "kind", "") == "postgres":
            _terminate(fault, nemesis)
            return
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


def _terminate(fault: Fault, nemesis: Timed) -> None:
    """PostgreSQL: terminate the server processes serving the aimed worker's connections."""
    import psutil
    import psycopg

    found = nemesis.aim(fault)
    if found is None:
        return
    number, p = found
    port = urlsplit(str(nemesis.target.url)).port or 5432  # libpq's default when none is given
    try:
        ports = [c.laddr.port for c in psutil.Process(p.pid).net_connections(kind="tcp")
                 if c.raddr and c.raddr.port == port]
    except psutil.Error:
        ports = []
    t = time.monotonic_ns()
    error = None
    killed = 0
    try:
        if ports:
            with psycopg.connect(nemesis.target.url, autocommit=True, connect_timeout=10) as conn:
                rows = conn.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                                    "WHERE client_port = ANY(%s)", (ports,)).fetchall()
                killed = sum(1 for (ok,) in rows if ok)
    except psycopg.Error as err:
        error = f"{type(err).__name__}: {str(err).strip()[:200]}"
    nemesis.log(fault, at=t, slot=fault["worker"], process=number, pid=p.pid, clients=killed,
                **({"error": error} if error else {}))


KIND = Disconnect()
