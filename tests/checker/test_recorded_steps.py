"""The frontier search's effort on recorded sessions, pinned: its steps, not only its verdict.

A verdict test cannot see a search that got slower but still decides: the look-ahead
turned on at the wrong backup, a failed configuration remembered without the reasons it
failed, a set of states kept as a tuple where it is compared as a set. Each of those
changes how many steps the search takes on a recorded session, so the steps each session
took when this was written are asserted exactly, in both orders of trying, as the default
check begins the search (the same steps under every string hashing tried: 0, 1, 2 and
random). A change to the order of trying or to a reduction that moves them is one to
measure (``bench/exact.py``) and then to record here.

The sessions are those of ``test_recorded.py`` (see its docstring) that the search
decides in a few thousand steps: 0.3 s for all ten searches.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from harness.checker.evidence import Evidence
from harness.checker.exact import replays, session_ops
from harness.checker.frontier import search
from harness.checker.lazy import certify
from harness.checker.ops import group_by_session
from harness.history import read_history

DATA = Path(__file__).parent / "data"

#: (session file, earliest invocation first) -> steps, 2026-11-29 (seventh session: the
#: backups of configurations that entered none no longer counted towards the look-ahead).
STEPS = {
    ("w16-s1-c", False): 2_612,  # the look-ahead after 20 backups, then a back-up of 500 depths at once
    ("w16-s1-c", True): 9_229,
    ("w8-restored", False): 6_519,
    ("w8-restored", True): 4_476,
    ("w4-listing", False): 8_808,  # listings tried after the ops a window still takes
    ("w4-listing", True): 5_553,
    ("w16-s1-ghost", False): 2_309,  # ghost appends tried before the rollback that discards them
    ("w16-s1-ghost", True): 10_458,
    ("w16-s0-late", False): 3_466,  # what a snapshot not taken yet may take
    ("w16-s0-late", True): 5_785,
}


@pytest.mark.parametrize(("name", "early"), list(STEPS))
def test_the_frontier_search_takes_the_steps_it_took(name: str, early: bool) -> None:
    (so,) = group_by_session(read_history(DATA / f"{name}.jsonl.zst"))[0].values()
    ops = session_ops(so, Evidence())
    out = search(ops, time.monotonic() + 300, 4 * STEPS[name, early], early=early)
    assert out.ok is True
    assert replays(certify([ops[k] for k in out.order], out.path))
    assert out.explored == STEPS[name, early]
