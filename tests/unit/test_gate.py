"""The start barrier's gate (:class:`harness.runner.launch.Gate`): a process started after
the go never waits on the go's lock, which a process SIGKILLed inside ``Event.wait`` (a
kill fault landing on a replacement still starting) left taken, hanging every later
replacement and reader of a long chaos run."""

from __future__ import annotations

import multiprocess

from harness.runner.launch import Gate


def _ready(gate: Gate, out: object) -> None:
    out.value = gate.ready(0.0)  # type: ignore[attr-defined]


def test_a_process_started_after_the_go_does_not_wait_on_its_lock() -> None:
    ctx = multiprocess.get_context("fork")
    go, deadline = ctx.Event(), ctx.Value("q", 0, lock=False)
    deadline.value = 123456789
    go.set()
    go._cond.acquire()  # as a process killed inside go.wait() leaves it
    try:
        reader, writer = ctx.Pipe(duplex=False)
        out = ctx.Value("q", 0, lock=False)
        p = ctx.Process(target=_ready, args=(Gate(writer, go, deadline), out))
        p.start()
        writer.close()
        p.join(10)
        hung = p.is_alive()
        if hung:
            p.kill()
            p.join()
        assert not hung and out.value == 123456789
        assert reader.recv() == 0.0  # it said it opened
    finally:
        go._cond.release()
