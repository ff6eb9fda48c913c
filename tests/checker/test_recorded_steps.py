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
decides in a few thousand steps: 0.7 s for all twelve searches.
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

#: (session file, earliest invocation first) -> steps, 2026-11-29 (eighth session: states
#: apart only in lists no op left can show kept as one, ``frontier._unseen_as_one``).
STEPS = {
    ("w16-s1-c", False): 2_592,  # the look-ahead after 20 backups, then a back-up of 500 depths at once
    ("w16-s1-c", True): 8_765,
    ("w8-restored", False): 6_519,
    ("w8-restored", True): 4_476,
    ("w4-listing", False): 8_700,  # listings tried after the ops a window still takes
    ("w4-listing", True): 5_378,
    ("w16-s1-ghost", False): 2_309,  # ghost appends tried before the rollback that discards them
    ("w16-s1-ghost", True): 10_304,
    ("w16-s0-late", False): 3_446,  # what a snapshot not taken yet may take
    ("w16-s0-late", True): 5_405,
    # a rollback's dozens of choices, copied by snapshots but never shown: one state
    # (12,452 and 14,575 steps with them kept apart)
    ("w16-s0-unseen", False): 4_436,
    ("w16-s0-unseen", True): 5_135,
}


@pytest.mark.parametrize(("name", "early"), list(STEPS))
def test_the_frontier_search_takes_the_steps_it_took(name: str, early: bool) -> None:
    (so,) = group_by_session(read_history(DATA / f"{name}.jsonl.zst"))[0].values()
    ops = session_ops(so, Evidence())
    out = search(ops, time.monotonic() + 300, 4 * STEPS[name, early], early=early)
    assert out.ok is True
    assert replays(certify([ops[k] for k in out.order], out.path))
    assert out.explored == STEPS[name, early]
