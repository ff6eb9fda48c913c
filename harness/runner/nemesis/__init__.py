"""The faults: kill, pause, disconnect, server restart, disk full and held locks, applied
at the times the plan drew from the seed, each one an event of ``process = "nemesis"``.

Free mode runs them from the coordinator's wait loop (:meth:`Nemesis.tick`, main thread,
so a restarted ``redis-server`` keeps its parent-death signal); controlled mode from the
grant loop, each before a scheduling decision and lasting a number of decisions
(:class:`SteppedNemesis`, module ``stepped``). The modules: ``faults`` applies them,
``stepped`` does so at decisions, ``board`` is the workers' side (progress, disk full),
``redis_link`` holds the nemesis's own connections to Redis, ``landed`` reads where faults
landed in a history. What each kind does (in free mode; ``stepped`` says what differs):

- ``kill``: SIGKILL the slot's worker process, whatever it is doing. Its op in flight stays
  an invoke without completion (unknown). A new process, with a new process number,
  continues the slot after that op: every worker marks on a shared :class:`Board` the
  index of the op it is about to run.
- ``pause``: SIGSTOP the worker (``psutil.suspend``), SIGCONT it ``duration`` s later: longer
  than lock leases and cache TTLs, as a GC pause or a swapped-out VM would be.
- ``disconnect``: ``CLIENT KILL ADDR`` for each TCP connection the worker has to Redis
  (found with psutil). A kill that lands between two commands is healed silently by
  redis-py's reconnect; so the nemesis aims at the worst moment, after the server has
  applied a command and before the client reads the reply: it stalls the server with a
  busy Lua script for ``stall`` s (default 0.05), during which the worker's next command
  queues up, and sends the kill near the end of the stall on a second connection. Redis
  runs the queued command, then the kill, and the reply is never sent. ``stall = 0``
  sends a plain kill.
- ``restart``: SIGKILL the harness-managed ``redis-server`` and start it again on the same
  port and directory, with the scenario's persistence (AOF replays). Destructive: refused
  against an external server unless the user passes ``--allow-destructive-faults``; then
  it is ``SHUTDOWN NOSAVE`` and a wait of up to 30 s for the server's own supervisor
  (systemd, docker) to bring it back.
- ``disk-full``: every SQLite connection in every worker gets ``PRAGMA max_page_count``
  set to the file's current page count, for ``duration`` s: a write that must grow the
  database fails with SQLITE_FULL ("database or disk is full"), SQLite's own out-of-space
  path. Why not a real full disk: filling a filesystem hurts every process on the
  machine, the harness's own logs first; ``RLIMIT_FSIZE`` gives EFBIG, which SQLite
  reports as an I/O error, not SQLITE_FULL. ``max_page_count`` is per connection, so the
  workers apply it themselves at their next op when the :class:`Board` says so (they
  find the store's connections with the garbage collector, no store cooperation needed).
- ``lock-hold``: a helper process opens the database and holds ``BEGIN EXCLUSIVE`` for
  ``duration`` s, as a backup job or a migration would. In WAL mode readers go on;
  writers wait for their busy timeout. The helper logs its own start and end events.

:func:`fault_summary` then reads the merged history to say where each fault landed: which
op the target had in flight, and how those ops ended.
"""

from harness.runner.nemesis.board import Board
from harness.runner.nemesis.faults import APPLIES, DESTRUCTIVE, Nemesis, Slots, check_faults
from harness.runner.nemesis.landed import fault_summary
from harness.runner.nemesis.stepped import SteppedNemesis

__all__ = ["APPLIES", "DESTRUCTIVE", "Board", "Nemesis", "Slots", "SteppedNemesis",
           "check_faults", "fault_summary"]
