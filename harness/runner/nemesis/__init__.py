"""The nemesis: the machinery that applies a run's faults, each one an event of
``process = "nemesis"``. What each kind of fault does, and how, lives in its own module of
:mod:`harness.faults`; this package gives the kinds a clock, the workers and the target
to act through.

Free mode applies the faults at the times the plan drew from the seed, from the
coordinator's wait loop (:meth:`Nemesis.tick`, main thread, so a restarted
``redis-server`` keeps its parent-death signal). Controlled mode applies them from the
grant loop, each before a scheduling decision and lasting a number of decisions
(:class:`SteppedNemesis`). The modules:

- ``timed``: :func:`check_faults` (refuse a fault the backend does not take, or a
  destructive one against a server that is not the harness's), :class:`Slots` (the live
  process of each worker slot, and a killed one's replacement), :class:`Nemesis` (free mode);
- ``stepped``: :class:`SteppedNemesis` (controlled mode);
- ``board``: the workers' side, a :class:`Board` in shared memory (each worker's progress,
  so a killed slot's replacement continues after its op in flight; the disk-full switch);
- ``redis_link``: the nemesis's own connections to Redis (find and cut a worker's
  connections, crash an external server and wait for it);
- ``landed``: :func:`fault_summary` reads the merged history to say where each fault
  landed: which op the target had in flight, and how those ops ended.
"""

from harness.runner.nemesis.board import Board
from harness.runner.nemesis.landed import fault_summary
from harness.runner.nemesis.stepped import SteppedNemesis
from harness.runner.nemesis.timed import Nemesis, Slots, check_faults

__all__ = ["Board", "Nemesis", "Slots", "SteppedNemesis", "check_faults", "fault_summary"]
