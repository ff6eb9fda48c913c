"""Valid histories by construction: a correct memory store driven by random concurrency.

Several processes each run one op at a time; at every step one random process moves its op
one stage on: invoke, take effect (the linearization point: the model is applied
atomically there), complete. Any stage may instead end in a crash (no completion, a new
process number takes the slot), an ``info`` completion (before or after taking effect) or,
for writes, a ``fail`` before taking effect. Times only grow, sometimes not at all (ties),
so overlapping intervals and equal timestamps both occur. Finally a ``final`` process reads
every session and lists its snapshots. Optionally (off by default, so that a seed keeps its
history): a process whose write ended ``info`` or ``fail`` retries it with the same value
(``p_retry``: an append retried shows its turn once or twice), and a rollback targets any
id the store holds, one a snapshot of unknown outcome made included (``p_any_id``).

Every history this produces is one a correct store can produce, so a sound checker must
find nothing in it.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

from harness.history import Event

WEIGHTS = {"append": 34, "read": 26, "snapshot": 12, "rollback": 12, "list_snapshots": 8}


@dataclass
class Params:
    procs: int = 3
    sessions: int = 2
    steps: int = 80
    p_crash: float = 0.03
    p_info: float = 0.05
    p_fail: float = 0.05
    ties: bool = True
    p_retry: float = 0.0
    p_any_id: float = 0.0
    weights: dict[str, int] = field(default_factory=lambda: dict(WEIGHTS))
    #: a bug of the store, one of BUGS (None: a correct store)
    bug: str | None = None


#: Store bugs the simulator can have, each one way real stores break (the zoo's families):
#: ``rmw-append`` reads the turns and writes them back with the new one, two steps apart;
#: ``back-dated-append`` puts the turn where the list ended when the append was invoked;
#: ``rollback-in-two-steps`` empties the turns, then restores the snapshot's, two steps
#: apart; ``wrong-snapshot`` restores another snapshot of the session when there is one;
#: ``snapshot-in-two-steps`` copies the first half of the turns, and the rest a step later.
BUGS = ("rmw-append", "back-dated-append", "rollback-in-two-steps", "wrong-snapshot",
        "snapshot-in-two-steps")
#: Bugs added later (kept apart so that BUGS' seeds keep their histories):
#: ``retried-append`` appends a turn two or three times (a client library retrying a write
#: that had taken effect); ``lost-snapshot`` forgets a snapshot's id half the time, so a
#: rollback to it fails and a listing leaves it out; ``rollback-keeps-tail`` restores the
#: snapshot but keeps the turns appended after it.
MORE_BUGS = ("retried-append", "lost-snapshot", "rollback-keeps-tail")
#: An op mix with rollbacks enough for the rollback bugs to show in 30-50 steps.
BUGGY_MIX = {"append": 25, "read": 30, "snapshot": 15, "rollback": 20, "list_snapshots": 5}


def buggy_params(rng: random.Random, bug: str) -> Params:
    """Parameters for a small history of a store with ``bug``, long enough for the bug
    to show in some seeds and short enough for brute force (2-3 processes, 30-50 steps)."""
    return Params(procs=rng.randint(2, 3), sessions=1, steps=rng.randint(30, 50),
                  p_crash=0.02, p_info=0.03, p_fail=0.02, bug=bug, weights=BUGGY_MIX)


@dataclass
class _Op:
    f: str
    s: str
    value: Any
    applied: bool = False
    result: Any = None
    error: str | None = None
    half: Any = None  # a two-step bug: what the first step did
    at: int = 0  # back-dated-append: the list's length at the invocation


class _Sim:
    def __init__(self, rng: random.Random, prm: Params) -> None:
        self.rng, self.prm = rng, prm
        self.names = [f"s{i}" for i in range(prm.sessions)]
        self.turns: dict[str, list[list[str]]] = {s: [] for s in self.names}
        self.snaps: dict[str, dict[str, list[list[str]]]] = {s: {} for s in self.names}
        self.known: dict[str, list[str]] = {s: [] for s in self.names}
        self.events: list[Event] = []
        self.t = 0
        self.procs: dict[int, _Op | None] = {p: None for p in range(prm.procs)}
        self.next_proc = prm.procs
        self.n = 0

    def emit(self, p: int | str, type: str, f: str, s: str, value: Any = None,
             error: str | None = None) -> None:
        self.t += self.rng.choice((0, 1, 1, 2)) if self.prm.ties else 1
        self.events.append(Event(index=len(self.events), time=self.t, process=p, type=type,
                                 f=f, session=s, value=value, error=error))

    def run(self) -> list[Event]:
        for _ in range(self.prm.steps):
            p = self.rng.choice(sorted(self.procs))
            op = self.procs[p]
            if op is None:
                self.invoke(p)
            else:
                self.advance(p, op)
        for s in self.names:
            self.emit("final", "invoke", "read", s)
            self.emit("final", "ok", "read", s, [list(x) for x in self.turns[s]])
            self.emit("final", "invoke", "list_snapshots", s)
            self.emit("final", "ok", "list_snapshots", s, sorted(self.snaps[s]))
        return self.events

    def invoke(self, p: int) -> None:
        rng = self.rng
        fs = list(self.prm.weights)
        f = rng.choices(fs, [self.prm.weights[x] for x in fs])[0]
        s = rng.choice(self.names)
        value: Any = None
        if f == "append":
            self.n += 1
            value = [rng.choice(("user", "assistant")), f"w{p}:{self.n}"]
        elif f == "rollback":
            ids = self.known[s]
            if self.prm.p_any_id and self.snaps[s] and rng.random() < self.prm.p_any_id:
                ids = sorted(self.snaps[s])  # one a snapshot of unknown outcome made, too
            value = rng.choice(ids) if ids and rng.random() < 0.9 else "nope"
        self._invoke(p, f, s, value)

    def _invoke(self, p: int, f: str, s: str, value: Any) -> None:
        self.emit(p, "invoke", f, s, value)
        self.procs[p] = _Op(f, s, value, at=len(self.turns[s]))

    def _ended(self, p: int, op: _Op) -> None:
        """``op`` of ``p`` ended info or fail: ``p`` may retry it, with the same value."""
        self.procs[p] = None
        if (self.prm.p_retry and op.f in ("append", "snapshot", "rollback")
                and self.rng.random() < self.prm.p_retry):
            self._invoke(p, op.f, op.s, op.value)

    def advance(self, p: int, op: _Op) -> None:
        r = self.rng.random()
        prm = self.prm
        if r < prm.p_crash:
            del self.procs[p]
            self.procs[self.next_proc] = None
            self.next_proc += 1
        elif r < prm.p_crash + prm.p_info:
            self.emit(p, "info", op.f, op.s, None, "ConnectionError: lost")
            self._ended(p, op)
        elif not op.applied and r < prm.p_crash + prm.p_info + prm.p_fail and op.f in (
            "append", "snapshot", "rollback"):
            self.emit(p, "fail", op.f, op.s, None, "OperationalError: database is locked")
            self._ended(p, op)
        elif not op.applied:
            self.apply(op)
        else:
            if op.error is not None:
                self.emit(p, "fail", op.f, op.s, None, op.error)
            else:
                self.emit(p, "ok", op.f, op.s, op.result)
                if op.f == "snapshot":
                    self.known[op.s].append(op.result)
                elif op.f == "list_snapshots":
                    self.known[op.s].extend(x for x in op.result if x not in self.known[op.s])
            self.procs[p] = None

    def apply(self, op: _Op) -> None:
        turns, snaps = self.turns[op.s], self.snaps[op.s]
        bug = self.prm.bug
        if op.half is None and (
                (bug == "rmw-append" and op.f == "append")
                or (bug == "rollback-in-two-steps" and op.f == "rollback" and op.value in snaps)
                or (bug == "snapshot-in-two-steps" and op.f == "snapshot")):
            # the first of two steps; the op takes its second step when it next moves
            if op.f == "append":
                op.half = [list(x) for x in turns]
            elif op.f == "rollback":
                op.half = True
                turns[:] = []
            else:
                op.half = [list(x) for x in turns[:len(turns) // 2]]
            return
        op.applied = True
        if op.half is not None and op.f == "append":
            turns[:] = [*op.half, list(op.value)]
            op.result = list(op.value)
            return
        if op.half is not None and op.f == "snapshot":
            self.n += 1
            sid = f"snap{self.n}"
            snaps[sid] = [*op.half, *[list(x) for x in turns[len(op.half):]]]
            op.result = sid
            return
        if bug == "retried-append" and op.f == "append" and self.rng.random() < 0.5:
            turns.extend(list(op.value) for _ in range(self.rng.choice((2, 3))))
            op.result = list(op.value)
            return
        if bug == "lost-snapshot" and op.f == "snapshot" and self.rng.random() < 0.5:
            self.n += 1
            op.result = f"snap{self.n}"  # acknowledged, never stored
            return
        if bug == "rollback-keeps-tail" and op.f == "rollback" and op.value in snaps:
            kept = snaps[op.value]
            turns[:] = [*(list(x) for x in kept), *turns[len(kept):]]
            op.result = op.value
            return
        if bug == "back-dated-append" and op.f == "append":
            turns.insert(min(op.at, len(turns)), list(op.value))
            op.result = list(op.value)
            return
        if bug == "wrong-snapshot" and op.f == "rollback" and op.value in snaps and len(snaps) > 1:
            other = sorted(k for k in snaps if k != op.value)[0]
            turns[:] = [list(x) for x in snaps[other]]
            op.result = op.value
            return
        if op.f == "append":
            turns.append(list(op.value))
            op.result = list(op.value)
        elif op.f == "read":
            op.result = [list(x) for x in turns]
        elif op.f == "snapshot":
            self.n += 1
            sid = f"snap{self.n}"
            snaps[sid] = [list(x) for x in turns]
            op.result = sid
        elif op.f == "rollback":
            if op.value in snaps:
                turns[:] = [list(x) for x in snaps[op.value]]
                op.result = op.value
            else:
                op.error = f"SnapshotNotFound: {op.value}"
        elif op.f == "list_snapshots":
            op.result = sorted(snaps)


def simulate(seed: int, prm: Params | None = None) -> list[Event]:
    """A valid merged history (see the module docstring)."""
    return _Sim(random.Random(seed), prm or Params()).run()
