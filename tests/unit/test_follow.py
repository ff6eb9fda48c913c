"""The follower (:mod:`harness.runner.follow`): logs read while they grow, in any pattern of
writes (half lines included), give exactly the batch merge, indices and all."""

from __future__ import annotations

import random
from pathlib import Path

import orjson
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.history import iter_log, merge
from harness.history_files import compress_log, log_files
from harness.runner.follow import Ended, Follower
from harness.runner.streaming import RunStream


def _line(process: int | str, time: int, n: int) -> bytes:
    return orjson.dumps({"index": n, "time": time, "process": process, "pid": 1,
                         "type": "invoke", "f": "read", "session": "s0", "value": None}) + b"\n"


#: A log: its name, the time its writer started, and its events' time steps (ties allowed).
logs_st = st.lists(
    st.tuples(st.sampled_from(["0", "1", "2", "10", "final", "nemesis", "read-1"]),
              st.integers(0, 50), st.lists(st.integers(0, 3), max_size=25)),
    min_size=1, max_size=5, unique_by=lambda t: t[0])


@settings(max_examples=150, deadline=None)
@given(logs=logs_st, seed=st.integers(0, 2**32))
def test_following_growing_logs_gives_the_batch_merge(tmp_path_factory: object, logs: list[
        tuple[str, int, list[int]]], seed: int) -> None:
    d = Path(tmp_path_factory.mktemp("h"))  # type: ignore[attr-defined]
    rng = random.Random(seed)
    data: dict[str, bytes] = {}
    times: dict[str, list[int]] = {}
    for name, start, steps in logs:
        t, ts = start, []
        for s in steps:
            t += s
            ts.append(t)
        times[name] = ts
        data[name] = b"".join(_line(name, x, i) for i, x in enumerate(ts))
    written = dict.fromkeys(data, 0)
    ended: set[str] = set()
    follower = Follower(d)
    out: list[object] = []

    def bounds() -> dict[str, int | None]:
        b: dict[str, int | None] = {}
        for name, start, _ in logs:
            if name in ended:
                b[name] = None
                continue
            # a true lower bound of what the writer will still write: its start, or the
            # time of the last whole line it wrote (its log is in time order)
            done = data[name][: written[name]].count(b"\n")
            b[name] = times[name][done - 1] if done else start
        return b

    while len(ended) < len(data):
        name = rng.choice(sorted(set(data) - ended))
        left = len(data[name]) - written[name]
        if left == 0:
            ended.add(name)
        else:
            k = rng.randint(1, min(left, 90))  # half lines too
            with open(d / f"{name}.jsonl", "ab") as fh:
                fh.write(data[name][written[name]: written[name] + k])
            written[name] += k
        if rng.random() < 0.3:
            out += follower.poll(bounds())
    out += follower.poll(bounds())
    events = [e for e in out if not isinstance(e, Ended)]
    expect = merge(iter_log(p) for p in log_files(d))
    assert events == expect
    assert follower.late == 0
    assert sorted(e.stem for e in out if isinstance(e, Ended)) == sorted(data)


def test_a_finished_run_is_read_lazily_compressed_or_not(tmp_path: Path) -> None:
    for name, t0 in (("0", 5), ("1", 3), ("nemesis", 4)):
        (tmp_path / f"{name}.jsonl").write_bytes(
            b"".join(_line(name, t0 + 2 * i, i) for i in range(3000)))
    compress_log(tmp_path / "1.jsonl")
    (tmp_path / "0.jsonl").open("ab").write(b'{"index": 9, "ti')  # a torn tail: dropped
    expect = merge(iter_log(p) for p in log_files(tmp_path))
    out = list(Follower(tmp_path).poll({}, default=None))
    assert [e for e in out if not isinstance(e, Ended)] == expect
    assert [e for e in out if isinstance(e, Ended)][-1] in (
        Ended("0", "0"), Ended("1", "1"), Ended("nemesis", "nemesis"))


def test_a_writer_that_breaks_its_bound_is_counted_late(tmp_path: Path) -> None:
    (tmp_path / "0.jsonl").write_bytes(_line(0, 10, 0))
    f = Follower(tmp_path)
    assert [e.time for e in f.poll({"0": None, "1": 20}) if not isinstance(e, Ended)] == [10]
    (tmp_path / "1.jsonl").write_bytes(_line(1, 5, 0))  # earlier than its bound said
    assert [e.time for e in f.poll({"1": None}) if not isinstance(e, Ended)] == [5]
    assert f.late == 1


class _Sink:
    def __init__(self) -> None:
        self.events: list[object] = []

    def feed(self, e: object) -> None:
        self.events.append(e)


@settings(max_examples=60, deadline=None)
@given(logs=logs_st, seed=st.integers(0, 2**32))
def test_a_merge_cut_short_goes_on_where_it_stopped(tmp_path_factory: object, logs: list[
        tuple[str, int, list[int]]], seed: int) -> None:
    """The coordinator's merge stops when a fault is due (``until``) and goes on at the next
    poll: polls cut short after one event, with the logs growing between them and new
    bounds each time, give the batch merge all the same."""
    d = Path(tmp_path_factory.mktemp("h"))  # type: ignore[attr-defined]
    rng = random.Random(seed)
    data = {name: b"".join(_line(name, start + sum(steps[:i + 1]), i) for i in range(len(steps)))
            for name, start, steps in logs}
    written = dict.fromkeys(data, 0)
    sink = _Sink()
    stream = RunStream(d, sinks=[sink], compress=False)
    cut = 0
    while any(written[n] < len(data[n]) for n in data):
        name = rng.choice(sorted(n for n in data if written[n] < len(data[n])))
        k = rng.randint(1, len(data[name]) - written[name])
        with open(d / f"{name}.jsonl", "ab") as fh:
            fh.write(data[name][written[name]: written[name] + k])
        written[name] += k
        # bounds: each writer's start, or the time of the last whole line it wrote
        bounds: dict[str, int | None] = {}
        for n, start, _ in logs:
            lines = data[n][: written[n]].splitlines()
            bounds[n] = orjson.loads(lines[-1])["time"] if lines and data[n][: written[n]].endswith(b"\n") else start
        cut += not stream.poll(bounds, None, until=0.0 if rng.random() < 0.7 else None)
    while not stream.poll({}, None, until=0.0):
        cut += 1
    expect = merge(iter_log(p) for p in log_files(d))
    assert sink.events == expect
    assert stream.follower.late == 0
    assert cut > 0 or len(expect) <= 1
