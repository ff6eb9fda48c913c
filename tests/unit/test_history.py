from __future__ import annotations

import os
import shutil
import signal
from collections.abc import Iterator
from itertools import islice
from pathlib import Path
from typing import Any

import multiprocess
import orjson
import pytest
import zstandard
from hypothesis import example, given, settings
from hypothesis import strategies as st

from harness.errors import HistoryError
from harness.history import (
    Event,
    iter_history,
    iter_log,
    iter_merge,
    iter_ops,
    merge,
    pair_ops,
    read_history,
    read_log,
    renumbered,
    turn_token,
    write_history,
)
from harness.history_files import compress_log, compress_logs, log_files
from harness.runner.history_writer import HistoryWriter


def test_turn_token_short_is_identity_long_is_distinct() -> None:
    assert turn_token("w1.2|hi") == "w1.2|hi"
    a, b = "x" * 5000, "x" * 4999 + "y"
    assert turn_token(a) != turn_token(b) and len(turn_token(a)) < 100


def test_torn_last_line_is_dropped_but_a_torn_middle_is_an_error(tmp_path: Path) -> None:
    p = tmp_path / "0.jsonl"
    with HistoryWriter(p, 0) as w:
        w.log("invoke", "append", "s0", ["user", "a"])
        w.log("ok", "append", "s0", ["user", "a"])
    with open(p, "ab") as fh:
        fh.write(b'{"index": 2, "time": 5, "proc')
    assert [e.type for e in read_log(p)] == ["invoke", "ok"]
    p.write_bytes(p.read_bytes() + b'\n{"index": 3}\n')
    with pytest.raises(HistoryError, match="not a history event"):
        read_log(p)


def _writer(path: str, n: int) -> None:
    with HistoryWriter(path, 1) as w:
        for i in range(n):
            w.log("invoke", "append", "s0", ["user", f"w1.{i}|"])
        os.kill(os.getpid(), signal.SIGKILL)


def test_sigkill_loses_nothing_written(tmp_path: Path) -> None:
    p = tmp_path / "1.jsonl"
    proc = multiprocess.get_context("fork").Process(target=_writer, args=(str(p), 2000))
    proc.start()
    proc.join()
    assert proc.exitcode == -signal.SIGKILL
    events = read_log(p)
    assert [e.value[1] for e in events] == [f"w1.{i}|" for i in range(2000)]


def test_merge_orders_by_time_and_pairs_ops(tmp_path: Path) -> None:
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    with HistoryWriter(a, 0) as w:
        w.log("invoke", "read", "s0", time_ns=1)
        w.log("ok", "read", "s0", [], time_ns=4)
        w.log("invoke", "append", "s0", ["user", "x"], time_ns=5)
    with HistoryWriter(b, 1) as w:
        w.log("invoke", "append", "s0", ["user", "y"], time_ns=2)
        w.log("info", "append", "s0", ["user", "y"], "ConnectionError: gone", time_ns=3)
    events = read_history(tmp_path)
    assert [e.time for e in events] == [1, 2, 3, 4, 5]
    assert [e.index for e in events] == list(range(5))
    pairs = list(iter_ops(events))
    assert [(i.f, c.type if c else None) for i, c in pairs] == [
        ("read", "ok"), ("append", "info"), ("append", None)]
    assert merge([]) == []


def test_pair_ops_pairs_per_process_in_completion_order() -> None:
    def ev(i: int, process: int | str, type: str, f: str = "read") -> Event:
        return Event(i, i, process, type, f, "s")

    events = [ev(0, 0, "invoke"), ev(1, 1, "invoke"), ev(2, "nemesis", "info", "kill"),
              ev(3, 1, "ok"),  # 1's op completes before 0's
              ev(4, 0, "invoke"),  # 0 invokes again: its first op never completed
              ev(5, 2, "invoke"), ev(6, 0, "fail"), ev(7, 3, "info", "open"),
              ev(8, 4, "invoke")]  # still open at the end, after 2's
    got = [(i.index, c.index if c else None) for i, c in pair_ops(events)]
    assert got == [(1, 3), (0, None), (4, 6), (5, None), (8, None)]
    assert [(i.index, c.index if c else None) for i, c in iter_ops(events)] == sorted(got)


def test_a_store_changing_its_own_list_in_place_is_logged_as_it_was(tmp_path: Path) -> None:
    from harness.plan import Op
    from harness.runner.worker import execute

    class SharedListStore:
        """Hands out its internal list, then rewrites a turn in place (a cache bug)."""

        def __init__(self) -> None:
            self.turns: list[tuple[str, str]] = []

        def append(self, session: str, role: str, content: str) -> None:
            self.turns.append((role, content))
            if content == "c":
                self.turns[0] = ("user", "tampered")

        def history(self, session: str) -> list[tuple[str, str]]:
            return self.turns

    ops = [Op("append", "s", "user", "a"), Op("append", "s", "user", "b"), Op("read", "s"),
           Op("append", "s", "user", "c"), Op("read", "s")]
    with HistoryWriter(tmp_path / "0.jsonl", 0) as w:
        execute(SharedListStore(), ops, w)  # type: ignore[arg-type]
    reads = [e.value for e in read_log(tmp_path / "0.jsonl") if e.f == "read" and e.type == "ok"]
    assert reads[1] == [["user", "tampered"], ["user", "b"], ["user", "c"]]


def test_a_rollback_with_no_known_id_never_lists_on_a_store_that_cannot(tmp_path: Path) -> None:
    """A replacement worker knows no snapshot id yet; it used to ask the store's listing,
    which a store without ``snapshots`` does not have: an AttributeError, reported as an
    unreadable listing (found with the chat-history adapters under the kill fault)."""
    from harness.plan import Op
    from harness.runner.worker import execute

    class NoListing:
        def __init__(self) -> None:
            self.turns: list[tuple[str, str]] = []

        def append(self, session: str, role: str, content: str) -> None:
            self.turns.append((role, content))

        def history(self, session: str) -> list[tuple[str, str]]:
            return list(self.turns)

        def snapshot(self, session: str) -> str:
            return "1"

        def rollback(self, session: str, snapshot_id: str) -> None:
            pass

    ops = [Op("rollback", "s", choice=0), Op("append", "s", "user", "a"), Op("snapshot", "s"),
           Op("rollback", "s", choice=0)]
    with HistoryWriter(tmp_path / "0.jsonl", 0) as w:
        execute(NoListing(), ops, w)  # type: ignore[arg-type]
    done = [(e.f, e.type) for e in read_log(tmp_path / "0.jsonl") if e.type != "invoke"]
    assert done == [("append", "ok"), ("snapshot", "ok"), ("rollback", "ok")]


@pytest.mark.parametrize("process", [0, 17, "final", 'odd "%d" name'])
def test_fast_lines_are_the_bytes_line_makes(tmp_path: Path, process: int | str,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    import orjson

    import harness.runner.history_writer

    monkeypatch.setattr(harness.runner.history_writer, "monotonic_ns", lambda: 123456789)
    value = ["user", 'quote " percent %s é 🙂\n']
    with HistoryWriter(tmp_path / "0.jsonl", process) as w:
        slow = w.line("ok", "append", "s1.0", value)
        fast = w.fast(b"ok", b"append", orjson.dumps("s1.0"), orjson.dumps(value))
    assert fast == slow.replace(b'"index":0', b'"index":1')
    assert Event.from_dict(orjson.loads(fast)).value == value


def test_a_deferred_event_goes_out_with_the_next_or_at_close(tmp_path: Path) -> None:
    p = tmp_path / "0.jsonl"
    w = HistoryWriter(p, 0)
    w.log("invoke", "append", "s", ["user", "a"])
    w.defer("ok", "append", "s", ["user", "a"])
    assert [e.type for e in read_log(p)] == ["invoke"]  # held, not written yet
    w.log("invoke", "read", "s")
    assert [e.type for e in read_log(p)] == ["invoke", "ok", "invoke"]
    w.defer("ok", "read", "s", [["user", "a"]])
    w.close()
    events = read_log(p)
    assert [e.type for e in events] == ["invoke", "ok", "invoke", "ok"]
    assert [e.index for e in events] == [0, 1, 2, 3]
    assert events[1].time < events[2].time  # the time is taken when deferred, not written


def _run_until_blocked(path: str, blocked: Any, n: int) -> None:
    from harness.plan import Op
    from harness.runner.worker import execute

    class BlocksOnNth:
        """Appends succeed until the ``n``-th, which says so and never returns."""

        def __init__(self) -> None:
            self.count = 0

        def append(self, session: str, role: str, content: str) -> None:
            self.count += 1
            if self.count == n:
                blocked.set()
                signal.pause()

        def history(self, session: str) -> list[tuple[str, str]]:
            return []

    ops = [Op("append" if i % 2 == 0 else "read", "s", "user", f"c{i}") for i in range(2 * n)]
    with HistoryWriter(path, 0) as w:
        execute(BlocksOnNth(), ops, w)  # type: ignore[arg-type]


def test_every_event_is_on_disk_before_the_next_store_call(tmp_path: Path) -> None:
    """Completions are written with the next invoke: a worker killed inside a store call
    has logged every earlier op whole, and the invoke of the op it was killed in."""
    ctx = multiprocess.get_context("fork")
    blocked = ctx.Event()
    p = tmp_path / "0.jsonl"
    proc = ctx.Process(target=_run_until_blocked, args=(str(p), blocked, 5))
    proc.start()
    try:
        assert blocked.wait(30), "the worker never reached the blocking append"
    finally:
        proc.kill()
        proc.join()
    events = read_log(p)
    assert [(e.type, e.f) for e in events] == [
        *[(t, f) for f in ("append", "read") for t in ("invoke", "ok")] * 4,
        ("invoke", "append")]
    assert events[-1].value == ["user", "c8"]


_OK = b'{"index":0,"time":1,"process":0,"pid":1,"type":"invoke","f":"read","session":"s0","value":null}\n'


@pytest.mark.parametrize("content, message", [
    (b"", "no events"),
    (b"\n  \n\t\n", "no events"),
    (b"[1, 2]\n" + _OK, "a JSON list, not an object"),
    (b"5\n" + _OK, "a JSON int, not an object"),
    (b'"x"\n' + _OK, "a JSON str, not an object"),
    (_OK.replace(b'"invoke"', b'"zzz"') + _OK, "unknown type 'zzz'"),
    (_OK.replace(b'"invoke"', b'["ok"]') + _OK, "unknown type \\['ok'\\]"),
    (_OK.replace(b'"read"', b'"frobnicate"') + _OK, "unknown f 'frobnicate'"),
    (_OK.replace(b'"time":1', b'"time":"1"') + _OK, "time, index and pid must be integers"),
    (_OK.replace(b'"time":1', b'"time":4611686018427387904') + _OK, "time 4611686018427387904 out of range"),
    (_OK.replace(b'"time":1', b'"time":-4611686018427387904') + _OK, "out of range"),
    (_OK.replace(b'"process":0', b'"process":null') + _OK, "process must be an integer"),
    (_OK.replace(b'"session":"s0"', b'"session":7') + _OK, "session must be a string"),
    (_OK.replace(b'"session":"s0"', b'"session":null') + _OK, "needs a session"),
    (_OK.replace(b'"invoke"', b'"ok"').replace(b"null}", b"5}") + _OK, "must be a list of turns"),
    (_OK.replace(b'"invoke"', b'"ok"').replace(b"null}", b"[[1, 2]]}"),
     "list of \\[role, token\\] pairs"),
    (_OK.replace(b'"read"', b'"append"') + _OK, "must be \\[role, token\\]"),
])
def test_check_refuses_what_is_not_a_history(tmp_path: Path, content: bytes,
                                             message: str) -> None:
    p = tmp_path / "h.jsonl"
    p.write_bytes(content)
    with pytest.raises(HistoryError, match=message) as err:
        read_history(p)
    assert "\n" not in str(err.value)


def test_dev_null_and_directories_without_logs_are_not_histories(tmp_path: Path) -> None:
    with pytest.raises(HistoryError, match="no events"):
        read_history("/dev/null")
    with pytest.raises(HistoryError, match=r"no history\.jsonl and no"):
        read_history(tmp_path)
    (tmp_path / "history.jsonl").write_bytes(b"")
    with pytest.raises(HistoryError, match="no events"):
        read_history(tmp_path)


def test_fault_events_may_name_any_kind_and_worker_events_only_known_ones(tmp_path: Path) -> None:
    p = tmp_path / "h.jsonl"
    fault = _OK.replace(b'"process":0', b'"process":"nemesis"').replace(b'"invoke"', b'"info"')
    p.write_bytes(fault.replace(b'"read"', b'"a-new-fault-kind"') + _OK)
    assert [e.f for e in read_history(p)] == ["a-new-fault-kind", "read"]
    p.write_bytes(_OK.replace(b'"read"', b'"a-new-fault-kind"') + _OK)
    with pytest.raises(HistoryError, match="unknown f"):
        read_history(p)


def test_the_ops_a_history_knows_are_the_store_capabilities() -> None:
    from harness.history import OP_FS
    from harness.stores.base import ALL_CAPABILITIES

    assert OP_FS == ALL_CAPABILITIES


GOLDEN = Path(__file__).resolve().parents[1] / "golden"


def _killed_log(tmp_path: Path, n: int) -> Path:
    """A log whose writer was SIGKILLed after ``n`` events, its last line then torn."""
    p = tmp_path / "1.jsonl"
    proc = multiprocess.get_context("fork").Process(target=_writer, args=(str(p), n))
    proc.start()
    proc.join()
    assert proc.exitcode == -signal.SIGKILL
    with open(p, "ab") as fh:
        fh.write(b'{"index":%d,"time":9,"process":1,"pid":1,"type":"ok","f":"app' % n)
    return p


def test_a_killed_workers_torn_log_is_compressed_and_read_with_nothing_lost(tmp_path: Path) -> None:
    p = _killed_log(tmp_path, 3000)
    plain = read_log(p)
    assert [e.value[1] for e in plain] == [f"w1.{i}|" for i in range(3000)]
    raw = p.read_bytes()
    z = compress_log(p)
    assert z.name == "1.jsonl.zst" and not p.exists()
    assert z.stat().st_size * 4 < len(raw)  # the point of it
    assert read_log(z) == plain
    assert zstandard.ZstdDecompressor().decompress(z.read_bytes()) == raw  # byte for byte, torn tail too


def test_a_cut_short_zst_yields_every_whole_line_before_the_cut(tmp_path: Path) -> None:
    p = tmp_path / "0.jsonl"
    with HistoryWriter(p, 0) as w:
        for i in range(20000):
            w.log("invoke", "append", "s0", ["user", f"w0.{i}|" + "x" * (i % 50)])
    whole = read_log(p)
    data = compress_log(p).read_bytes()
    cut = tmp_path / "cut.jsonl.zst"
    for frac in (0.1, 0.5, 0.9, 0.999):
        cut.write_bytes(data[: int(len(data) * frac)])
        got = read_log(cut)
        assert 0 < len(got) < len(whole) and got == whole[: len(got)]
        raw = zstandard.ZstdDecompressor().stream_reader(data[: int(len(data) * frac)]).read()
        assert len(got) == raw.count(b"\n")  # every line whose newline made it is there


def test_a_log_that_is_not_zstd_is_a_history_error(tmp_path: Path) -> None:
    p = tmp_path / "0.jsonl.zst"
    p.write_bytes(_OK)
    with pytest.raises(HistoryError, match="not a zstd log"):
        read_log(p)


def test_reading_streams_events_before_a_bad_line_and_merges_lazily(tmp_path: Path) -> None:
    p = tmp_path / "0.jsonl"
    p.write_bytes(_OK * 3 + b"{garbled\n" + _OK)
    it = iter_log(p)
    assert [next(it).type for _ in range(3)] == ["invoke"] * 3  # yielded before the error
    with pytest.raises(HistoryError, match=r"0\.jsonl:4: not a history event"):
        next(it)

    def endless(process: int, step: int) -> Iterator[Event]:
        t = 0
        while True:
            t += step
            yield Event(0, t, process, "invoke", "read", "s0")

    merged = iter_merge([endless(0, 2), endless(1, 3)])  # no list could hold these
    assert [(e.time, e.process, e.index) for e in islice(merged, 5)] == [
        (2, 0, 0), (3, 1, 1), (4, 0, 2), (6, 0, 3), (6, 1, 4)]


def test_a_directory_of_compressed_logs_reads_as_its_plain_one(tmp_path: Path) -> None:
    run = tmp_path / "run"
    shutil.copytree(GOLDEN / "run-lost-turn", run)
    plain = read_history(run)
    assert [p.name for p in compress_logs(run / "history")] == [
        "0.jsonl.zst", "1.jsonl.zst", "final.jsonl.zst"]
    assert sorted(p.name for p in (run / "history").iterdir()) == [
        "0.jsonl.zst", "1.jsonl.zst", "final.jsonl.zst"]
    assert read_history(run) == plain == list(iter_history(run / "history"))
    # killed between the rename and the removal: both copies, the plain one is read
    (run / "history" / "1.jsonl").write_bytes((GOLDEN / "run-lost-turn/history/1.jsonl").read_bytes())
    (run / "history" / "1.jsonl.zst.tmp").write_bytes(b"half a compressed file")
    assert [p.name for p in log_files(run / "history")] == [
        "0.jsonl.zst", "1.jsonl", "final.jsonl.zst"]
    assert read_history(run) == plain


def test_an_old_run_directory_reads_its_merged_history(tmp_path: Path) -> None:
    """A run from before logs were compressed: plain logs and a merged history.jsonl."""
    run = tmp_path / "old"
    shutil.copytree(GOLDEN / "run-lost-turn", run)
    merged = read_history(run)
    write_history(run / "history.jsonl", merged)
    (run / "history" / "0.jsonl").write_bytes(b"")  # proof that the merged copy is what is read
    assert read_history(run) == merged
    assert [orjson.loads(line)["index"] for line in (run / "history.jsonl").read_bytes().splitlines()] == [
        e.index for e in merged]


_EVENTS = st.builds(
    Event, index=st.integers(0, 10**6), time=st.integers(0, 2**63),
    process=st.one_of(st.integers(0, 64), st.text(max_size=8)),
    type=st.sampled_from(["invoke", "ok", "fail", "info"]), f=st.sampled_from(["append", "read", "open"]),
    session=st.one_of(st.none(), st.text(max_size=4)),
    value=st.one_of(st.none(), st.lists(st.text(max_size=3), max_size=3)),
    error=st.one_of(st.none(), st.text(max_size=6)), pid=st.integers(0, 2**31))


@given(e=_EVENTS, index=st.integers(0, 10**6))
def test_an_event_made_by_its_slots_is_the_dataclass_s_own(e: Event, index: int) -> None:
    """``renumbered`` and ``Event.from_dict`` set an event's slots directly (a history's
    every event is made that way): equal to what the dataclass makes, field for field."""
    from dataclasses import astuple, replace

    got = renumbered(e, index)
    assert got == replace(e, index=index) and astuple(got) == astuple(replace(e, index=index))
    assert type(got) is Event
    back = Event.from_dict(e.to_dict())
    assert back == e and astuple(back) == astuple(e)


_KEYS = ("time", "process", "type", "f", "session", "value", "error", "index", "pid")
_ANY = st.one_of(st.none(), st.integers(-2, 2), st.booleans(), st.sampled_from(
    ["invoke", "ok", "fail", "info", "append", "read", "snapshot", "rollback", "list_snapshots",
     "open", "crash", "nemesis", "s", ""]),
    st.lists(st.sampled_from(["u", "t"]), max_size=2), st.just([["user", "t"]]), st.just({}))


_VALID = {"time": 5, "process": 1, "type": "ok", "f": "append", "session": "s",
          "value": ["user", "t"], "index": 0, "pid": 7}


@given(d=st.one_of(
    _ANY, st.dictionaries(st.sampled_from(_KEYS), _ANY),
    # a valid event with some keys dropped or given other values (near misses)
    st.builds(lambda drop, put: {**{k: v for k, v in _VALID.items() if k not in drop}, **put},
              st.sets(st.sampled_from(_KEYS), max_size=2), st.dictionaries(st.sampled_from(_KEYS), _ANY,
                                                                           max_size=3))))
@example({**_VALID, "type": "invoke", "value": None})  # an append's invoke needs its value
@example({**_VALID, "type": "fail", "value": None})
@example({**_VALID, "type": "invoke", "f": "read", "value": None})
@example({**_VALID, "f": "read", "value": [["user", "t"]]})
@example({**_VALID, "session": None})
@example({**_VALID, "time": True})
@example({**_VALID, "time": 1 << 62})
@example({**_VALID, "time": (1 << 62) - 1})
@settings(max_examples=500)
def test_the_quick_check_of_an_event_says_what_the_long_one_says(d: Any) -> None:
    """``event_problem`` judges an op event of exact types in one pass: on any parsed line,
    near-events included, its answer is the long way's (which says what is wrong): a dict
    subclass never takes the quick way."""
    import harness.history as history

    sub = type("D", (dict,), {})(d) if type(d) is dict else d
    assert history.event_problem(d) == history.event_problem(sub)


_ITEMS = st.one_of(st.lists(st.sampled_from(["user", "t", 1, None]), max_size=3),
                   st.tuples(st.just("user"), st.just("t")), st.sampled_from(["ab", 2, None]))


@given(v=st.lists(_ITEMS, max_size=5))
def test_a_read_s_turns_are_pairs_as_each_item_says(v: list[Any]) -> None:
    """``_pairs`` checks a read's items in passes over the list: the same answer as
    checking each item (``_pair``)."""
    import harness.history as history

    assert history._pairs(v) == all(map(history._pair, v))


@pytest.mark.parametrize("on", [True, False])
def test_gc_is_paused_inside_and_as_it_was_after_even_on_an_error(on: bool) -> None:
    """``gc_paused`` (reading a history, the checks): off inside, then as it was, also when
    the work inside raises; it never turns on a collector that was off."""
    import gc

    from harness.history import gc_paused

    was = gc.isenabled()
    try:
        (gc.enable if on else gc.disable)()
        with pytest.raises(KeyError), gc_paused():
            assert not gc.isenabled()
            raise KeyError("x")
        assert gc.isenabled() is on
    finally:
        (gc.enable if was else gc.disable)()


def test_a_process_s_event_timed_before_the_one_before_it_is_refused(tmp_path: Path) -> None:
    """A process runs one op at a time on one monotonic clock: an ok timed before its own
    invoke (or any event of a process before the one before it) is no history, refused in
    one line naming the event; events of other processes may interleave as they will."""
    ok = (b'{"index":0,"time":10,"process":0,"pid":1,"type":"invoke","f":"read","session":"s0","value":null}\n'
          b'{"index":1,"time":5,"process":1,"pid":2,"type":"invoke","f":"read","session":"s0","value":null}\n'
          b'{"index":2,"time":12,"process":0,"pid":1,"type":"ok","f":"read","session":"s0","value":[]}\n'
          b'{"index":3,"time":6,"process":1,"pid":2,"type":"ok","f":"read","session":"s0","value":[]}\n')
    p = tmp_path / "h.jsonl"
    p.write_bytes(ok)
    assert len(read_history(p)) == 4
    p.write_bytes(ok.replace(b'"time":12', b'"time":9'))
    with pytest.raises(HistoryError, match=r"event 2 \(0 ok read\).* 9 is before .* \(10\)") as err:
        read_history(p)
    assert "\n" not in str(err.value)
