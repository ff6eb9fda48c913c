"""Interleaving coverage on literal histories: exact counts per pair and per session, ops
never completed (in flight until their process's next event, the kill that ended it, or
the end), the final reads left out, the pairs never overlapped named; and the sweep equal
to a quadratic count over :func:`harness.history.pair_ops`'s pairs on random histories."""

from __future__ import annotations

import random
from typing import Any

import pytest

from harness.coverage import KINDS, interleavings, pair_name, sentence
from harness.history import Event, pair_ops


class _H:
    """A history written event by event: times and indices in order."""

    def __init__(self) -> None:
        self.events: list[Event] = []

    def __call__(self, process: int | str, type_: str, f: str, session: str | None = "s",
                 value: Any = None) -> _H:
        n = len(self.events)
        self.events.append(Event(n, n * 10, process, type_, f, session, value))
        return self


def test_each_invoke_counts_the_ops_in_flight_on_its_session() -> None:
    h = (_H()(0, "invoke", "append", value=["u", "a"])   # 0: append in flight
         (1, "invoke", "read")                           # read ‖ append
         (2, "invoke", "rollback", value="x")            # rollback ‖ append, rollback ‖ read
         (3, "invoke", "append", "other", ["u", "b"])    # another session: nothing
         (1, "ok", "read", value=[])
         (0, "ok", "append", value=["u", "a"])
         (4, "invoke", "read")                           # read ‖ rollback
         (2, "fail", "rollback", value="x")
         (4, "ok", "read", value=[])
         (3, "ok", "append", "other", ["u", "b"]))
    cov = interleavings(h.events)
    assert cov.kinds == ("append", "read", "rollback")
    assert cov.ops == {"append": 2, "read": 2, "rollback": 1}
    assert cov.totals == {"append+append": 0, "append+read": 1, "append+rollback": 1,
                          "read+read": 0, "read+rollback": 2, "rollback+rollback": 0}
    assert cov.sessions == {"s": {"append+read": 1, "append+rollback": 1, "read+rollback": 2},
                            "other": {}}
    assert [pair_name(a, b) for a, b in cov.never()] == [
        "rollback+rollback", "append+append", "read+read"]


def test_a_kind_with_itself_counts_every_op_in_flight() -> None:
    h = _H()
    for p in range(3):
        h(p, "invoke", "append", value=["u", str(p)])
    for p in range(3):
        h(p, "ok", "append", value=["u", str(p)])
    assert interleavings(h.events).totals == {"append+append": 3}  # 0+1+2


def test_an_op_never_completed_is_in_flight_until_its_process_logs_again() -> None:
    h = (_H()(0, "invoke", "append", value=["u", "a"])  # never completed
         (1, "invoke", "read")(1, "ok", "read", value=[])   # read ‖ the lost append
         (0, "invoke", "read")                              # its process goes on: it ended
         (1, "invoke", "read")(1, "ok", "read", value=[])   # read ‖ read (process 0's)
         (0, "ok", "read", value=[]))
    assert interleavings(h.events).totals == {"append+append": 0, "append+read": 1,
                                              "read+read": 1}


def test_a_killed_op_ends_at_the_kill_and_an_op_left_open_at_the_end() -> None:
    h = (_H()(0, "invoke", "rollback", value="x")
         ("nemesis", "info", "kill", None, {"id": 0, "slot": 0, "process": 0})
         (1, "invoke", "read")(1, "ok", "read", value=[])   # after the kill: no overlap
         (2, "invoke", "append", value=["u", "a"])          # never completed, never killed
         (1, "invoke", "read")(1, "ok", "read", value=[]))  # read ‖ append
    assert interleavings(h.events).totals == {
        "append+append": 0, "append+read": 1, "append+rollback": 0, "read+read": 0,
        "read+rollback": 0, "rollback+rollback": 0}


def test_the_final_reads_are_not_the_workloads() -> None:
    h = (_H()(0, "invoke", "append", value=["u", "a"])
         ("final", "invoke", "read")("final", "ok", "read", value=[]))
    cov = interleavings(h.events)
    assert cov.totals == {"append+append": 0} and cov.ops == {"append": 1}


def test_capabilities_name_the_pairs_the_history_never_exercised() -> None:
    h = (_H()(0, "invoke", "append", value=["u", "a"])(1, "invoke", "read")
         (1, "ok", "read", value=[])(0, "ok", "append", value=["u", "a"]))
    cov = interleavings(h.events, KINDS)
    never = {pair_name(a, b) for a, b in cov.never()}
    assert "read+rollback" in never and "append+read" not in never
    assert len(never) == 14
    assert cov.never()[0] == ("rollback", "rollback")  # the most disturbing pair first
    d = cov.to_dict()
    assert d["pairs"]["read+rollback"] == 0 and d["overlaps"] == 1
    assert {"pair": "read+rollback", "sentence": "rollback never overlapped a read: this run "
            "says nothing about what readers see during a rollback"} in d["never"]
    assert d["ops"]["rollback"] == 0


def test_sessions_are_capped_most_overlapped_first_with_totals() -> None:
    h = _H()
    for n in range(5):
        s = f"s{n}"
        for p in range(n + 1):
            h(p, "invoke", "read", s)
        for p in range(n + 1):
            h(p, "ok", "read", s, [])
    d = interleavings(h.events).to_dict(top=2)
    assert list(d["sessions"]) == ["s4", "s3"]
    assert d["sessions"]["s4"] == {"read+read": 10}
    assert (d["sessions_total"], d["sessions_shown"], d["pairs"]["read+read"]) == (5, 2, 20)


def test_every_pair_has_a_sentence_saying_what_is_unknown() -> None:
    sentences = {sentence(a, b) for a in KINDS for b in KINDS}
    assert len(sentences) == 15
    assert sentence("append", "read") == sentence("read", "append")
    assert sentence("snapshot", "snapshot").startswith("snapshot never overlapped another")


def _quadratic(events: list[Event]) -> dict[str, int]:
    """The reference count: for each pair from pair_ops, its end (completion, the process's
    next event, a kill of its process, or past the end); then every ordered pair of ops on
    one session where one's invoke falls inside the other's flight."""
    nxt: dict[int, int] = {}
    last: dict[object, int] = {}
    for e in events:
        if e.process in last:
            nxt.setdefault(last[e.process], e.index)  # a kill may have ended it first
        last[e.process] = e.index
        if e.f == "kill":
            killed = last.get(e.value["process"])
            if killed is not None and killed not in nxt:
                nxt[killed] = e.index
    ops = []
    for inv, comp in pair_ops(events):
        if inv.process == "final":
            continue
        end = comp.index if comp is not None else nxt.get(inv.index, len(events))
        ops.append((inv.index, end, inv.session, inv.f))
    out: dict[str, int] = {}
    for a in ops:
        for b in ops:
            if a is not b and a[2] == b[2] and b[0] < a[0] < b[1]:
                p = pair_name(a[3], b[3])
                out[p] = out.get(p, 0) + 1
    return out


def _random_history(rng: random.Random) -> list[Event]:
    h = _H()
    open_: dict[int, bool] = {}
    for _ in range(rng.randrange(5, 60)):
        p = rng.randrange(4)
        if p in open_ and rng.random() < 0.7:
            h(p, rng.choice(["ok", "fail", "info"]), "read", open_.pop(p), [])
        elif rng.random() < 0.08 and open_:
            victim = rng.choice(list(open_))
            del open_[victim]
            h("nemesis", "info", "kill", None, {"id": 0, "process": victim})
        else:
            open_.pop(p, None)
            s = rng.choice("ab")
            h(p, "invoke", rng.choice(KINDS), s)
            open_[p] = s  # type: ignore[assignment]
    return h.events


@pytest.mark.parametrize("seed", range(200))
def test_the_sweep_equals_a_quadratic_count_over_pair_ops(seed: int) -> None:
    events = _random_history(random.Random(seed))
    got = {p: n for p, n in interleavings(events).totals.items() if n}
    assert got == _quadratic(events)
