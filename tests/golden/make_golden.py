"""Write the golden histories of this folder (run once; the files are the fixtures).

    python tests/golden/make_golden.py

Each history is small and tells one story; ``expected.json`` says what the checker must
find in it. Times look like ``time.monotonic_ns()`` (1 ms apart), pids like real ones.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from harness.history import Event, write_history
from tests.checker.builder import H

HERE = Path(__file__).resolve().parent
T0 = 81_234_000_000_000


def realistic(h: H) -> list[Event]:
    out = []
    for e in h.events:
        pid = 0 if e.process == "nemesis" else 40_000 + sum(map(ord, str(e.process)))
        out.append(Event(e.index, T0 + e.time * 100_000, e.process, e.type, e.f, e.session,
                         e.value, e.error, pid))
    return out


def lost_turn() -> H:
    """Two workers append concurrently with a read-modify-write store: both are
    acknowledged, one of them is gone for good."""
    h = H()
    h.append(0, "conv-1", "w0:1 hello")
    h.inv(0, "append", "conv-1", "w0:2 how are you")
    h.inv(1, "append", "conv-1", "w1:1 fine thanks")
    h.ok(1)
    h.ok(0)
    h.read(1, "conv-1", ["w0:1 hello", "w0:2 how are you"])
    h.read("final", "conv-1", ["w0:1 hello", "w0:2 how are you"])
    return h


def stale_read() -> H:
    """A read that began after an append was acknowledged misses it; the turn shows up
    again later (a replica lagging behind)."""
    h = H()
    h.append(0, "conv-1", "w0:1 hi")
    h.append(0, "conv-1", "w0:2 still there?")
    h.read(1, "conv-1", ["w0:1 hi"])
    h.read(1, "conv-1", ["w0:1 hi", "w0:2 still there?"])
    return h


def vanished_checkpoint() -> H:
    """A rollback whose transaction also wipes the checkpoints table."""
    h = H()
    h.append(0, "conv-1", "w0:1 plan A")
    h.snapshot(0, "conv-1", "snap-1")
    h.append(0, "conv-1", "w0:2 plan B")
    h.snapshot(1, "conv-1", "snap-2")
    h.rollback(1, "conv-1", "snap-1")
    h.list(0, "conv-1", ["snap-1"])
    h.inv(0, "rollback", "conv-1", "snap-2")
    h.fail(0, "SnapshotNotFound: snap-2")
    return h


def indeterminate_append() -> H:
    """Workers killed mid-append: one turn made it, one did not. Both are fine."""
    h = H()
    h.append(0, "conv-1", "w0:1 start")
    h.inv(0, "append", "conv-1", "w0:2 killed after commit")
    h.fault("kill", {"process": 0})
    h.crash(0)
    h.inv(1, "append", "conv-1", "w1:1 connection lost")
    h.info(1, "ConnectionError: server closed the connection")
    h.read(2, "conv-1", ["w0:1 start", "w0:2 killed after commit"])
    h.append(2, "conv-1", "w2:1 after")
    h.read("final", "conv-1", ["w0:1 start", "w0:2 killed after commit", "w2:1 after"])
    h.list("final", "conv-1", [])
    return h


def rollback_explains() -> H:
    """Turns missing after a rollback to an earlier checkpoint: correct."""
    h = H()
    h.append(0, "conv-1", "w0:1 a")
    h.snapshot(0, "conv-1", "snap-1")
    h.append(1, "conv-1", "w1:1 b")
    h.read(0, "conv-1", ["w0:1 a", "w1:1 b"])
    h.inv(1, "rollback", "conv-1", "snap-1")
    h.read(0, "conv-1", ["w0:1 a", "w1:1 b"])  # concurrent: before it
    h.ok(1)
    h.append(0, "conv-1", "w0:2 c")
    h.read("final", "conv-1", ["w0:1 a", "w0:2 c"])
    h.list("final", "conv-1", ["snap-1"])
    return h


def empty_mid_rollback() -> H:
    """A non-atomic rollback (delete all turns, then re-insert the snapshot's) lets a
    concurrent reader see the session empty."""
    h = H()
    h.append(0, "conv-1", "w0:1 a")
    h.append(0, "conv-1", "w0:2 b")
    h.snapshot(0, "conv-1", "snap-1")
    h.append(1, "conv-1", "w1:1 c")
    h.inv(0, "rollback", "conv-1", "snap-1")
    h.read(1, "conv-1", [])
    h.ok(0)
    h.read("final", "conv-1", ["w0:1 a", "w0:2 b"])
    return h


def cross_session_bleed() -> H:
    h = H()
    h.append(0, "conv-1", "w0:1 secret of conv-1")
    h.append(1, "conv-2", "w1:1 hello conv-2")
    h.read(1, "conv-2", ["w1:1 hello conv-2", "w0:1 secret of conv-1"])
    return h


def duplicate_turn() -> H:
    """The store replays its write-ahead log twice after a restart."""
    h = H()
    h.append(0, "conv-1", "w0:1 a")
    h.append(0, "conv-1", "w0:2 b")
    h.read(1, "conv-1", ["w0:1 a", "w0:2 b", "w0:2 b"])
    return h


def phantom_turn() -> H:
    """A turn whose append failed (the store said so) shows up anyway."""
    h = H()
    h.append(0, "conv-1", "w0:1 a")
    h.inv(0, "append", "conv-1", "w0:2 disk full")
    h.fail(0, "OperationalError: database or disk is full")
    h.read(1, "conv-1", ["w0:1 a", "w0:2 disk full"])
    return h


def reordered_turns() -> H:
    h = H()
    h.append(0, "conv-1", "w0:1 question")
    h.append(0, "conv-1", "w0:2 answer")
    h.read(1, "conv-1", ["w0:2 answer", "w0:1 question"])
    return h


def back_dated_turn() -> H:
    """The store orders turns by a timestamp taken before the write waits for the lock: a
    turn committed late shows up behind a turn an earlier read already showed without it."""
    h = H()
    h.append(0, "conv-1", "w0:1 hello")
    h.inv(1, "append", "conv-1", "w1:1 stamped early, committed late")
    h.append(2, "conv-1", "w2:1 stamped later, committed first")
    h.read(0, "conv-1", ["w0:1 hello", "w2:1 stamped later, committed first"])
    h.ok(1)
    h.read(0, "conv-1", ["w0:1 hello", "w1:1 stamped early, committed late",
                         "w2:1 stamped later, committed first"])
    h.read("final", "conv-1", ["w0:1 hello", "w1:1 stamped early, committed late",
                               "w2:1 stamped later, committed first"])
    return h


def incompatible_order() -> H:
    """The same store, but the two reads overlap: which came first, and so whether a turn
    was back-dated or lost, the history cannot tell."""
    h = H()
    h.append(0, "conv-1", "w0:1 hello")
    h.inv(1, "append", "conv-1", "w1:1 stamped early, committed late")
    h.append(2, "conv-1", "w2:1 stamped later, committed first")
    h.inv(3, "read", "conv-1")
    h.read(0, "conv-1", ["w0:1 hello", "w2:1 stamped later, committed first"])
    h.ok(1)
    h.ok(3, ["w0:1 hello", "w1:1 stamped early, committed late",
             "w2:1 stamped later, committed first"])
    return h


def reused_snapshot_id() -> H:
    """Snapshot ids drawn from a per-process counter: two workers get the same id."""
    h = H()
    h.append(0, "conv-1", "w0:1 plan A")
    h.snapshot(0, "conv-1", "snap-1")
    h.append(1, "conv-1", "w1:1 plan B")
    h.snapshot(1, "conv-1", "snap-1")
    h.list("final", "conv-1", ["snap-1"])
    return h


def unreadable() -> H:
    h = H()
    h.append(0, "conv-1", "w0:1 a")
    h.inv(1, "read", "conv-1")
    h.fail(1, "UnpicklingError: invalid load key, '\\x00'.")
    return h


CASES = {
    "lost-turn": (lost_turn, {"valid": False, "kinds": {"lost-turn": 1}}),
    "stale-read": (stale_read, {"valid": False, "kinds": {"lost-turn": 1}}),
    "vanished-checkpoint": (vanished_checkpoint,
                            {"valid": False, "kinds": {"vanished-checkpoint": 1}}),
    "indeterminate-append": (indeterminate_append, {"valid": True, "kinds": {}}),
    "rollback-explains": (rollback_explains, {"valid": True, "kinds": {}}),
    "empty-mid-rollback": (empty_mid_rollback, {"valid": False, "kinds": {"bad-rollback": 1}}),
    "cross-session-bleed": (cross_session_bleed,
                            {"valid": False, "kinds": {"cross-session-bleed": 1}}),
    "duplicate-turn": (duplicate_turn, {"valid": False, "kinds": {"duplicate-turn": 1}}),
    "phantom-turn": (phantom_turn, {"valid": False, "kinds": {"phantom-turn": 1}}),
    "reordered-turns": (reordered_turns, {"valid": False, "kinds": {"reordered-turns": 1}}),
    "unreadable": (unreadable, {"valid": False, "kinds": {"unreadable": 1}}),
    "back-dated-turn": (back_dated_turn, {"valid": False, "kinds": {"back-dated-turn": 1}}),
    "incompatible-order": (incompatible_order,
                           {"valid": False, "kinds": {"incompatible-order": 1}}),
    "reused-snapshot-id": (reused_snapshot_id,
                           {"valid": False, "kinds": {"reused-snapshot-id": 1}}),
}


def main() -> None:
    expected: dict[str, Any] = {}
    for name, (make, want) in CASES.items():
        write_history(HERE / f"{name}.jsonl", realistic(make()))
        story = " ".join((make.__doc__ or name).split())
        expected[f"{name}.jsonl"] = {"story": story, **want}
    # The same lost turn as a run directory of unmerged per-process logs.
    run = HERE / "run-lost-turn" / "history"
    run.mkdir(parents=True, exist_ok=True)
    events = realistic(lost_turn())
    for proc in sorted({str(e.process) for e in events}):
        own = [e for e in events if str(e.process) == proc]
        write_history(run / f"{proc}.jsonl",
                      [Event(i, e.time, e.process, e.type, e.f, e.session, e.value, e.error, e.pid)
                       for i, e in enumerate(own)])
    expected["run-lost-turn"] = {"story": "lost-turn.jsonl as per-process logs",
                                 "valid": False, "kinds": {"lost-turn": 1}}
    (HERE / "expected.json").write_text(json.dumps(expected, indent=2) + "\n")


if __name__ == "__main__":
    main()
