"""The ``restart`` fault (Redis, PostgreSQL): crash the server and bring it back.

Free mode: SIGKILL the harness-managed ``redis-server`` and start it again on the same port
and directory, with the scenario's persistence (AOF replays). Destructive: refused against
an external server unless the user passes ``--allow-destructive-faults``; then it is
``SHUTDOWN NOSAVE`` and a wait of up to 30 s for the server's own supervisor (systemd,
docker) to bring it back.

On PostgreSQL (a managed server only): an immediate shutdown (SIGQUIT, no checkpoint, as
a crash), then a start on the same port and data directory; WAL recovery must bring back
every acknowledged commit (``fsync`` and ``synchronous_commit`` are on).

Controlled mode: the same, between two grants; the new server runs on the stepping CPU.

Example: ``[[faults]] kind = "restart", at = 2.0``.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from harness.faults.base import Fault, Key, Stepped, Timed

__all__ = ["KIND", "RESTART_WAIT_S", "Restart"]

RESTART_WAIT_S = 30.0


@dataclass(frozen=True, slots=True)
class Restart:
    name: str = "restart"
    backends: tuple[str, ...] = ("redis", "postgres")
    destructive: bool = True
    aimed: bool = False
    keys: tuple[Key, ...] = ()
    for_steps: int | None = None

    def at_time(self, fault: Fault, nemesis: Timed) -> None:
        from harness.backends.postgres import ManagedPostgres
        from harness.backends.redis import ManagedRedis

        target, link = nemesis.target, nemesis.link
        nemesis.log(fault, phase="start", pids=list(getattr(target, "pids", [])))
        started = time.monotonic()
        error = None
        try:
            if isinstance(target, ManagedRedis | ManagedPostgres):
                target.restart()
            elif getattr(target, "kind", "") == "postgres":
                error = "a user's PostgreSQL server is never restarted by the harness"
            elif link is not None:
                link.shutdown_and_wait(RESTART_WAIT_S)
        except Exception as err:  # a server that does not come back ends the fault too
            error = f"{type(err).__name__}: {err}"
        if link is not None:
            link.close()
        nemesis.log(fault, phase="end", pids=list(getattr(target, "pids", [])),
                    seconds=round(time.monotonic() - started, 4),
                    **({"error": error} if error else {}))

    def at_step(self, fault: Fault, nemesis: Stepped) -> None:
        self.at_time(fault, nemesis)
        nemesis.pin(list(getattr(nemesis.target, "pids", [])))


KIND = Restart()
