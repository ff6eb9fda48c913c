"""One worker process: open the store (after the fork), run its ops, log every one.

Each op is logged as ``invoke`` before it starts and ``ok`` / ``fail`` / ``info`` after
(see :mod:`harness.history`). What an exception means is decided by :func:`classify`:

- writes (append, snapshot, rollback): ``fail`` only when the op *definitely* did not take
  effect (an unknown snapshot id, or what a backend says is a definite failure: an SQLite
  error, which rolls the transaction back, a Redis error reply); anything else (connection
  lost, timeout, an unexpected exception) is ``info``, since it may have taken effect;
- reads (read, list_snapshots): ``info`` when the infrastructure failed (connection,
  timeout, what a backend calls transient: a locked database, an operational error of
  psycopg or SQLAlchemy, or an exception the store declares ``unavailable``), proving
  nothing; ``fail`` when the store raised anything else or returned malformed data, which
  the checker reports as ``unreadable``.

Every backend and known driver is asked, not only the run's: a store may use any driver
(:mod:`harness.backends.meaning`).
"""

from __future__ import annotations

import signal
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

import orjson

from harness.backends.meaning import definitely_failed, unavailable
from harness.history import TOKEN_INLINE, turn_token
from harness.plan import Op, Plan
from harness.procs import set_pdeathsig
from harness.redact import remember
from harness.runner.history_writer import HistoryWriter
from harness.stores.base import MemoryStore
from harness.stores.registry import StoreInfo, open_store

__all__ = ["WorkerSpec", "classify", "execute", "run_worker"]

WRITES = frozenset({"append", "snapshot", "rollback"})


class MalformedRead(Exception):
    """A read returned something that is not a list of (role, content) strings."""


@dataclass(frozen=True, slots=True)
class WorkerSpec:
    """Everything a worker process needs; picklable. Its ops are ``plan``'s stream of
    ``slot`` when a plan is given (drawn as they run: a worker never holds its whole
    stream), else the few explicit ``ops`` (the final read)."""

    slot: int
    process: int | str
    ops: tuple[Op, ...]
    store: StoreInfo
    url: str
    namespace: str
    log_path: str
    deadline_ns: int  # monotonic ns to stop at; 0: the run's, set when its clock starts
    start: int = 0  # index in ops to start from (a replacement process continues here)
    control: Any = None  # controlled mode: a harness.runner.control.Attach (None: free mode)
    board: Any = None  # faults: a harness.runner.nemesis.Board (progress, disk-full switch)
    plan: Plan | None = None  # where the ops come from (else ``ops``)
    cold_start: bool = False  # wait for the go, then open (every worker at once)
    #: started while the run goes on (a killed slot's replacement, a reader): a backend that
    #: is down for a moment (a restart fault) is waited for, as a supervisor would retry
    patient_open: bool = False

    def op_stream(self) -> Iterator[Op]:
        """This worker's ops from op ``start`` on."""
        if self.plan is not None:
            return self.plan.stream(self.slot, self.start)
        return iter(self.ops[self.start :])


def classify(f: str, exc: BaseException,
             declared: tuple[type[BaseException], ...] = (),
             atomic_writes: bool = True) -> tuple[str, str]:
    """(completion type, error string) for an exception raised by op ``f`` of a store that
    declares ``declared`` as its "backend unavailable" exceptions. A write is ``fail``
    (certainly no effect) only when the driver's error says so and the store does each
    write in one transaction (``atomic_writes``): an op of several transactions that
    fails in its second has done its first."""
    error = f"{type(exc).__name__}: {exc}"[:500]
    if f in WRITES:
        return ("fail" if atomic_writes and definitely_failed(exc) else "info"), error
    return ("info" if unavailable(exc, declared) else "fail"), error


def _read_value(turns: Any) -> Any:
    """The logged value of a read: ``[[role, token], ...]``; MalformedRead if not turns.

    Hot path (reads return whole sessions): one plain loop checks every turn and spots
    long contents. It measured faster than the seven C-level passes (``map``, ``set``) it
    replaced, each of which cost about as much as the loop: 1.4 vs 6.4 µs for a 15-turn
    read, 22 vs 40 µs for 250 turns. Short contents are logged as they are.
    """
    if not isinstance(turns, list | tuple):
        raise MalformedRead(f"expected a list of turns, got {type(turns).__name__}")
    long = False
    plain = True  # every turn a plain tuple or list, which orjson serializes
    for turn in turns:
        t = type(turn)
        if t is not tuple and t is not list:
            if not isinstance(turn, list | tuple):
                raise MalformedRead(f"expected (role, content) pairs, got {turns!r:.80}")
            plain = False  # a namedtuple, say: valid, but orjson refuses tuple subclasses
        if len(turn) != 2:
            raise MalformedRead(f"expected (role, content) pairs, got {turns!r:.80}")
        role, content = turn
        if (type(role) is not str and not isinstance(role, str)) or (
                type(content) is not str and not isinstance(content, str)):
            raise MalformedRead(f"expected (role, content) strings, got {turns!r:.80}")
        if len(content) > TOKEN_INLINE:
            long = True
    if plain and not long:
        return turns
    # Only the long contents need a token; the same turn comes back in every later read
    # of its session, so tokens are cached rather than hashed again.
    out: list[Any] = []
    for role, content in turns:
        if len(content) > TOKEN_INLINE:
            tok = _TOKENS.get(content)
            if tok is None:
                if len(_TOKENS) >= _TOKENS_MAX:
                    _TOKENS.clear()
                tok = _TOKENS[content] = turn_token(content)
            content = tok
        out.append((role, content))
    return out


_TOKENS: dict[str, str] = {}  # long content -> its token, in this worker process
_TOKENS_MAX = 20_000


def _ids_value(ids: Any) -> list[str]:
    if type(ids) is list and (not ids or set(map(type, ids)) == _STR):  # the usual case, in C
        return ids
    if not isinstance(ids, list | tuple) or not all(isinstance(i, str) for i in ids):
        raise MalformedRead(f"expected a list of snapshot ids, got {ids!r:.80}")
    return list(ids)


_STR = {str}


class _Runner:
    """Runs ops against one store, logging each, remembering snapshot ids per session.

    With ``coalesce``, completions are deferred (:meth:`HistoryWriter.defer`) and go out
    with the next op's invoke; :func:`execute` flushes the last one. Every op's lines are
    built by :meth:`HistoryWriter.fast` (each value serialized once, no dict, no closure);
    only a failed op takes the slower :meth:`HistoryWriter.line`."""

    def __init__(self, store: MemoryStore, log: HistoryWriter, coalesce: bool = True,
                 unavailable: tuple[type[BaseException], ...] = (),
                 atomic_writes: bool = True) -> None:
        self.store = store
        self.unavailable = unavailable
        self.atomic_writes = atomic_writes
        self.log = log
        self.done = log.defer if coalesce else log.log
        self.hold = log.hold if coalesce else log.emit
        self.known: dict[str, dict[str, None]] = {}  # session -> its snapshot ids, in order
        self._sessions: dict[str, bytes] = {}  # session -> its JSON

    def _remember(self, session: str, ids: list[str]) -> None:
        k = self.known.get(session)
        if k is None:
            k = self.known[session] = {}
        for i in ids:  # a dict as an ordered set: a session's ids keep growing
            k[i] = None

    def _session_json(self, session: str) -> bytes:
        sj = self._sessions.get(session)
        if sj is None:
            if len(self._sessions) >= 10_000:
                self._sessions.clear()
            sj = self._sessions[session] = orjson.dumps(session)
        return sj

    def _failed(self, f: str, session: str, invoke_value: Any, exc: Exception) -> None:
        """Log op ``f``'s completion after it raised: ``fail`` for a malformed read, else
        what :func:`classify` says (off the hot path: only a failed op comes here)."""
        if isinstance(exc, MalformedRead):
            self.done("fail", f, session, None, f"MalformedRead: {exc}")
        else:
            kind, error = classify(f, exc, self.unavailable, self.atomic_writes)
            self.done(kind, f, session, invoke_value, error)

    def run_op(self, op: Op) -> None:
        f, s, log = op.f, op.session, self.log
        if f == "append":
            assert op.role is not None and op.content is not None
            sj = self._session_json(s)
            vj = orjson.dumps([op.role, turn_token(op.content)])
            log.emit(log.fast(b"invoke", b"append", sj, vj))
            try:
                self.store.append(s, op.role, op.content)
            except Exception as exc:
                self._failed("append", s, [op.role, turn_token(op.content)], exc)
                return
            self.hold(log.fast(b"ok", b"append", sj, vj))
        elif f == "read":
            sj = self._session_json(s)
            log.emit(log.fast(b"invoke", b"read", sj, b"null"))
            try:
                value = _read_value(self.store.history(s))
            except Exception as exc:
                self._failed("read", s, None, exc)
                return
            self.hold(log.fast(b"ok", b"read", sj, orjson.dumps(value)))
        elif f == "snapshot":
            sj = self._session_json(s)
            log.emit(log.fast(b"invoke", b"snapshot", sj, b"null"))
            try:
                sid = self.store.snapshot(s)
                if type(sid) is not str:
                    sid = str(sid)  # a user's __str__ may raise too
            except Exception as exc:
                self._failed("snapshot", s, None, exc)
                return
            self.hold(log.fast(b"ok", b"snapshot", sj, orjson.dumps(sid)))
            self._remember(s, [sid])
        elif f == "list_snapshots":
            sj = self._session_json(s)
            log.emit(log.fast(b"invoke", b"list_snapshots", sj, b"null"))
            try:
                ids = _ids_value(self.store.snapshots(s))
            except Exception as exc:
                self._failed("list_snapshots", s, None, exc)
                return
            self.hold(log.fast(b"ok", b"list_snapshots", sj, orjson.dumps(ids)))
            self._remember(s, ids)
        elif f == "rollback":
            # an id to roll back to: one this worker saw, else the store's listing, if it
            # has one (a store without it, after a kill, has this worker skip rollbacks
            # until it takes a snapshot; never a call the store does not have)
            if not self.known.get(s) and callable(getattr(self.store, "snapshots", None)):
                self.run_op(Op("list_snapshots", s))
            known = self.known.get(s)
            if known:
                sid = list(known)[(op.choice or 0) % len(known)]
                sj = self._session_json(s)
                vj = orjson.dumps(sid)
                log.emit(log.fast(b"invoke", b"rollback", sj, vj))
                try:
                    self.store.rollback(s, sid)
                except Exception as exc:
                    self._failed("rollback", s, sid, exc)
                    return
                self.hold(log.fast(b"ok", b"rollback", sj, vj))
        else:
            raise ValueError(f"unknown op {f!r}")


def execute(store: MemoryStore, ops: Iterable[Op], log: HistoryWriter,
            deadline_ns: int | None = None, *, coalesce: bool = True,
            unavailable: tuple[type[BaseException], ...] = (),
            atomic_writes: bool = True) -> None:
    """Run ``ops`` in order against an open store, logging each; stop at the deadline.

    With ``coalesce`` (free mode), each op's completion is written with the next op's
    invoke, before the next store call, and the last one before this returns. Controlled
    mode turns it off: there a worker can wait at a scheduling point between two ops (the
    disk-full switch runs SQL there), and a completion must not wait with it.
    ``unavailable``: the store's declared "backend unavailable" exceptions;
    ``atomic_writes``: whether each write is one transaction (see :func:`classify`)."""
    runner = _Runner(store, log, coalesce, unavailable, atomic_writes)
    try:
        for op in ops:
            if deadline_ns is not None and time.monotonic_ns() > deadline_ns:
                break
            runner.run_op(op)
    finally:
        log.flush()


#: Opens a cold-start worker tries before it gives up (as a supervisor restarting a
#: process whose set-up failed would), and the first pause between two, doubled each time.
COLD_OPENS = 5
COLD_PAUSE_S = 0.05


def _open_cold(spec: WorkerSpec, log: HistoryWriter) -> MemoryStore:
    """Open the store at the go. Each failure is a ``fail`` ``open`` event (value
    ``{"cold_start": true, "attempt": n}``, the error): a finding, the checker's
    ``setup-race``; the worker tries again, :data:`COLD_OPENS` times in all, then ends as a
    worker that could not open (``info`` ``open``, exit 3)."""
    t0 = time.monotonic()
    pause = COLD_PAUSE_S
    for attempt in range(1, COLD_OPENS + 1):
        try:
            store = open_store(spec.store, spec.url, spec.namespace)
        except Exception as exc:
            error = f"{type(exc).__name__}: {exc}"[:500]
            log.log("fail", "open", None, {"cold_start": True, "attempt": attempt}, error)
            time.sleep(pause)  # a restarted process comes back a moment later
            pause *= 2
            continue
        log.log("ok", "open", None, {"seconds": round(time.monotonic() - t0, 6),
                                     "cold_start": True, "attempts": attempt})
        return store
    log.log("info", "open", None, None, error)
    raise SystemExit(3)


#: How long a patient open waits for a backend that is down, at most (the coordinator's
#: ``open_timeout`` may stop it sooner), and its first pause, doubled up to a second.
PATIENT_S = 60.0


def _open(spec: WorkerSpec) -> MemoryStore:
    """Open the store; with ``spec.patient_open``, an error its backend calls transient
    (the server restarting: connection refused) is retried until :data:`PATIENT_S` passed.
    At a run's start it is not: a wrong URL there is a setup error, said at once."""
    end = time.monotonic() + PATIENT_S
    pause = COLD_PAUSE_S
    while True:
        try:
            return open_store(spec.store, spec.url, spec.namespace)
        except Exception as exc:
            if not (spec.patient_open and unavailable(exc, spec.store.unavailable)
                    and time.monotonic() + pause < end):
                raise
        time.sleep(pause)  # nothing to await: the server says nothing when it is back
        pause = min(pause * 2, 1.0)


def run_worker(spec: WorkerSpec, gate: Any = None) -> None:
    """Process entry point. Returns normally when its ops are done or its deadline passed.

    Opens the store first and logs how long that took (an ``ok`` ``open`` event, value
    ``{"seconds": s}``); then, with a ``gate`` (:class:`harness.runner.launch.Gate`), says
    it is ready and waits for the run's clock to start, whose deadline it then keeps
    (when ``spec.deadline_ns`` is 0; else its own). A store that cannot open is an ``info``
    ``open`` event with the store's own message, and exit 3; one that raises what no op
    classifies (an exception the worker cannot go on from, such as KeyboardInterrupt) is an
    ``info`` ``crash`` event with its message before the process ends."""
    set_pdeathsig()
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the coordinator owns Ctrl-C
    for sig in (signal.SIGTERM, signal.SIGHUP):  # not the coordinator's handlers, forked in
        signal.signal(sig, signal.SIG_DFL)
    remember(spec.url)  # its password is scrubbed from the errors this process logs
    ctl = None
    if spec.control is not None:  # controlled mode: points in sqlite3/redis-py, then wait
        from harness.runner.control.hooks import attach

        ctl = attach(spec.control, spec.slot, spec.process)
    if spec.board is not None:  # faults: the disk-full switches watch the store open
        spec.board.prepare()
    with HistoryWriter(spec.log_path, spec.process) as log:
        if spec.cold_start and gate is not None:
            # every worker says ready before opening, so all open at the go, at once
            run_deadline_ns = gate.ready(0.0)
            store = _open_cold(spec, log)
        else:
            t0 = time.monotonic()
            try:
                store = _open(spec)
            except BaseException as exc:  # the store cannot even open (sys.exit() in its
                # constructor included): say so in the history, with the store's own message
                log.log("info", "open", None, None, f"{type(exc).__name__}: {exc}"[:500])
                raise SystemExit(3) from None
            opened = time.monotonic() - t0
            log.log("ok", "open", None, {"seconds": round(opened, 6)})
            # ready, then wait for the run's clock (at once if it runs already: a replacement)
            run_deadline_ns = gate.ready(opened) if gate is not None else 0
        deadline_ns = spec.deadline_ns or run_deadline_ns
        try:
            ops = spec.op_stream() if ctl is None else ctl.ops(spec.op_stream(), spec.start)
            if spec.board is not None:  # faults: mark progress, honour the disk-full switch
                ops = spec.board.track(ops, spec.slot, spec.start)
            execute(store, ops, log, deadline_ns or None, coalesce=ctl is None,
                    unavailable=spec.store.unavailable, atomic_writes=spec.store.atomic_writes)
        except BaseException as exc:  # the store ended the worker (KeyboardInterrupt, say):
            # say so, so the run's account names it; the op in flight stays unknown
            log.log("info", "crash", None, None, f"{type(exc).__name__}: {exc}"[:500])
            raise
        finally:
            try:
                store.close()
            except Exception as exc:
                log.log("info", "close", None, None, f"{type(exc).__name__}: {exc}"[:500])
    if spec.board is not None and isinstance(spec.process, int) and spec.slot >= 0:
        spec.board.finished[spec.slot] = spec.process + 1  # ran to its end (the run's account)
    if ctl is not None:
        ctl.done()
