"""The live view (:mod:`harness.report.live`): what a person watching a run sees, on a
terminal and in a CI log, from the coordinator's progress events."""

from __future__ import annotations

import io

import pytest
from rich.console import Console

import harness.report.live as live
from harness.report.live import SHOW_MAX, LiveView, line

PROGRESS = {"done": 0, "workers": 4, "ops": 1200, "elapsed_s": 12.0, "duration_s": 60.0,
            "ops_per_s": 100, "faults": 3, "violations": {"lost-turn": 2}, "rss_mb": 88.4}
VIOLATION = {"kind": "lost-turn", "session": "s0", "sentence": "Turn 'w0.1|' was lost.",
             "events": [3, 9], "reproduce": "harness run x.toml --seed 1"}


def _view(terminal: bool, quiet: bool = False) -> tuple[LiveView, io.StringIO]:
    out = io.StringIO()
    con = Console(file=out, force_terminal=terminal, width=200, highlight=False)
    return LiveView(con, quiet), out


def test_a_progress_line_says_time_ops_faults_violations_and_memory() -> None:
    assert line(PROGRESS) == ("12s elapsed, 48s left · 1200 ops (100/s) · 3 faults · "
                              "lost-turn x2 · coordinator 88 MiB")
    assert line({"ops": 5}) == "5 ops · no violation so far"  # a run from before


def test_plain_mode_prints_a_line_every_30_s_and_violations_at_once(
        monkeypatch: pytest.MonkeyPatch) -> None:
    clock = [1000.0]
    monkeypatch.setattr(live.time, "monotonic", lambda: clock[0])
    view, out = _view(terminal=False)
    with view:
        view.say("started", {"workers": 4, "ops": None})
        for t in range(1, 70):  # two progress events a second for 35 s
            clock[0] = 1000.0 + t / 2
            view.say("progress", PROGRESS | {"ops": t})
        view.say("violation", VIOLATION)
        view.say("check", {"events": 10})
    text = out.getvalue()
    assert text.count(" ops (100/s)") == 2  # one after 30 s, one at the end
    assert "violation lost-turn (session s0): Turn 'w0.1|' was lost." in text
    assert "reproduce: harness run x.toml --seed 1" in text
    assert "\x1b[" not in text  # no escape codes in a log


def test_terminal_mode_redraws_one_line_and_prints_violations_above_it() -> None:
    view, out = _view(terminal=True)
    with view:
        view.say("started", {"workers": 4, "ops": None})
        view.say("progress", PROGRESS)
        assert view.live is not None
        view.say("violation", VIOLATION)
        view.say("check", {"events": 10})
        assert view.live is None  # the check's line stands alone
    text = out.getvalue()
    assert "1200 ops (100/s)" in text and "lost-turn" in text


def test_violations_past_the_cap_are_counted_not_printed() -> None:
    view, out = _view(terminal=False, quiet=True)
    for _ in range(SHOW_MAX + 5):
        view.say("violation", VIOLATION)
    view.say("progress", PROGRESS)  # quiet: no progress lines
    text = out.getvalue()
    assert text.count("violation lost-turn") == SHOW_MAX
    assert "are counted, not printed" in text and "elapsed" not in text
    assert text.count("reproduce:") == 1
