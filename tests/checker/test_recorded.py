"""Recorded sessions of 16 writers that the searches once could not decide.

Each file in ``data/`` is one session of a recording of ``harness run scenarios/smoke.toml
--workers 16`` (``-a``, ``-b``: ``--ops 1000``, 1,380 ops, 133 rollbacks, about 5.6 ops
pending at each invocation; ``-c``: ``--ops 200 --seed 1``, 1,124 ops), its events
renumbered. Before a failed search's states were compared by
their candidate contents (``frontier._covered``) and a set's states one snapshot apart
were merged (``lazy.merge``), the frontier search left ``w16-s1-a`` undecided (150,000
configurations, its memory bound, after 455,000 steps) and needed 234,000 steps for ``w16-s1-b`` (its sets
held 182-364 states, a product of rollbacks whose contents no read had told apart yet).
``w16-s1-c`` takes the frontier search 281,000 steps trying ops earliest completion
first, and about 137,000 trying them earliest invocation first (a rollback that ran for
12 ms belongs before the next rollback overwrote it, where it began).

``w16-s1-ghost`` is session ``s0`` of another recording of ``--ops 200 --seed 1`` (1,084
ops): an append that ran for 463 ms and a rollback for 468 ms, among hundreds of others,
and appends no read shows that a rollback discarded. Trying such an append after the
rollback, as earliest completion first put it, made the frontier search back up through a
dozen ops at every step (15,802 steps).

``w8-rollbacks`` is the one session of a recording of ``tests/e2e/test_many_seeds.py``'s
seed 96 on Redis (8 writers, 1,102 ops, a third of them rollbacks), and ``w8-final-read``
session ``s0`` of its seed 89 (262 ops, no read but the final one): sessions the searches
did not decide; the first still is not, the second is proven since listings are tried in
their place.

``w8-restored`` is session ``s2`` of a recording of ``test_many_seeds``' seed 92 on Redis
(8 writers, 538 ops, 109 of them rollbacks, 3.0 ops pending at an invocation): appends and
reads whose turns only a rollback can have set, to a snapshot whose window had to take
them hundreds of ops before; neither order of the frontier search decided it in 30 s
(750,000 steps or more) until it looked ahead at those (``frontier._unexplained``).

``w32-s1`` is session ``s1`` of a recording of ``--workers 32 --ops 200 --seed 2``
(2026-11-29; 2,178 ops, 167 rollbacks, 8.0 ops pending at an invocation), its events
renumbered: the search tried two overlapping rollbacks in the wrong order where ops that
ran for 100-190 ms (an append, two rollbacks) could make that good for another hundred
ops, and built that path before it looked ahead.

``w16-s0-unseen`` is session ``s0`` of a recording of ``--workers 16 --ops 200 --seed 19``
(2026-11-29; 984 ops, 76 rollbacks): a rollback to a snapshot whose window passed through
28 lists restores one of them, which snapshots copy and rollbacks restore again for
hundreds of ops but no read shows; kept apart, the 28 choices (correlated, so not merged)
made the frontier search carry 20-29 states through 331 configurations (12,452
steps), until states apart only in lists no op shows were kept as one (4,435).

``w16-s1-long`` is session ``s1`` of a recording of ``--workers 16 --ops 200 --seed 1``
(2026-11-29, ninth session; 1,125 ops, 111 rollbacks): a rollback that ran for 232 ms,
the only op that explains an append at its very end, seemed to explain it wherever it was
placed, since it left the turns at that append's parent; tried to explain another append
125 ops before, it failed only at the end of its run, at every depth it was placed
(37,592 steps), until turns that show a list explain it only once the ops that returned
before it began are placed (``frontier._may_explain``: 8,393), and a rollback that must be
the last op to set the turns before one read is none of those of reads it cannot be the
last before as well (``frontier._pinned``: 2,385).

``w16-s1-chain`` is session ``s1`` of a recording of ``--workers 16 --ops 200 --seed 13``
(2026-11-29, ninth session; 1,085 ops, 94 rollbacks): a listing tried before an append
that ran for 6 ms closed the window of the snapshot whose content a read 300 ops on needs;
a rollback that ran for 38 ms seemed to explain that read too, through a snapshot that
other rollbacks may fill, until depth 543, where the search backed up to; from there it
went back through 200 depths of dead ends (7,091 steps). That rollback is the only one a
read of another list at the end of its run may follow, so it cannot explain the first
(``frontier._pinned``: 2,977).

``w16-s1-first`` is session ``s1`` of a recording of ``--workers 16 --ops 200 --seed 7``
(2026-11-30; 1,047 ops, 111 rollbacks): when the search turned its look-ahead on, at
depth 572, its path had already lost the way to explain several reads, the first of
them at depth 215; going back to where the first it found had (507), and from there one
backup at a time, it took 5,443 steps; going back at once to where the first of them did
(``frontier._stranded``), 2,921.

``w16-s1-knot`` and ``w16-s1-carried`` are session ``s1`` of recordings of ``--workers 16
--ops 200`` with ``--seed 1`` and ``--seed 2`` (2026-11-30, on a machine slower than the
others, where eight recordings of each took the default check 2.6-6.9x the fast rules'
time; 1,124 ops and 111 rollbacks, 1,083 and 80): the two of the sixteen far past 3x.
Both are proven, but not straight through: the first backs up 1,385 times, 1,149 of them
between depths 300 and 400, among ops that ran for up to 184 ms; the second backs up
about 200 times and carries several states for long stretches (9,265 steps for 1,083
ops). They are the shapes a faster exact path has to take straight through. The second
took 4,318 steps once the states a rollback leaves from a set of several were joined
where they differ only in lists no op left shows (2026-12-01).

``w16-s0-empty`` is session ``s0`` of another recording of ``--workers 16 --ops 200 --seed
1`` (2026-12-01; 1,083 ops, 85 rollbacks), one of three of sixteen past 3x that day (4.6x
on its own): a read of the empty list, 100 ms on, that only a rollback to a snapshot taken
while a rollback that ran for 11 ms emptied the turns explains. Reads of the empty list
were not looked ahead at then (the start holds that list too), so the search placed that
long rollback after the snapshot's window, met the read 600 depths on and backed up one
depth at a time (8,958 steps); looked at where an append or rollback returned before the
read began, 2,286.

``w16-s0-shown`` is session ``s0`` of a recording of ``--workers 16 --ops 200 --seed 34``
(2026-12-01; 1,070 ops, 94 rollbacks; 5.5x the fast rules' time that day): an append
that ran for 3.3 ms, whose parent only a rollback explains, and whose turn a read shows
that returned 3.1 ms before the append did. Bounded by its own return, it seemed
explainable by a rollback invoked after that read returned, so the look-ahead did not
see the path lose it 430 depths before the read failed, and the search backed up 2,319
times (10,058 steps); bounded by the read's return (``exact._tighten``), 3,060.

``w4-listing`` is the one session of a recording of ``test_many_seeds``' seed 61 on Redis
(4 writers, 533 ops, 173 of them rollbacks): a listing that shows snapshot 10, tried before
the append invoked while snapshot 10 ran, ended its window before the turns that the
rollbacks to 10 restore 24 ms later; the frontier search did not decide it in 60 s (2.5
million steps, either order of trying) until such appends were tried before the listing.
"""

from __future__ import annotations

import time
from dataclasses import replace
from pathlib import Path

import pytest

from harness.checker import check
from harness.checker.evidence import Evidence
from harness.checker.exact import SESSION_STEPS, replays, session_ops
from harness.checker.fast import check_fast
from harness.checker.frontier import search
from harness.checker.lazy import certify
from harness.checker.ops import group_by_session
from harness.history import Event, read_history

DATA = Path(__file__).parent / "data"


def _events(name: str) -> list[Event]:
    return read_history(DATA / f"{name}.jsonl.zst")


def _proven_within(name: str, steps: int, early: bool = False) -> None:
    """The frontier search, as the default check begins it (or trying early ops first),
    proves the recorded session ``name`` within ``steps``, its proof replayed."""
    (so,) = group_by_session(_events(name))[0].values()
    ops = session_ops(so, Evidence())
    out = search(ops, time.monotonic() + 300, steps, early=early)
    assert out.ok is True
    assert replays(certify([ops[k] for k in out.order], out.path))


# the steps each took when this was written (24,262 and 12,794), with room to spare
@pytest.mark.parametrize(("name", "steps"), [("w16-s1-a", 50_000), ("w16-s1-b", 30_000)])
def test_the_frontier_search_proves_a_recorded_16_writer_session(name: str, steps: int) -> None:
    _proven_within(name, steps)


def test_an_append_no_read_shows_is_tried_before_the_rollback_that_discards_it() -> None:
    """``w16-s1-ghost``: 2,309 steps with the ghost appends tried before the first
    rollback among the candidates (``frontier._ghosts_first``), 15,802 without."""
    _proven_within("w16-s1-ghost", 5_000)


@pytest.mark.parametrize(("early", "steps"), [(False, 16_498), (True, 5_650)])
def test_an_append_a_window_still_takes_is_tried_before_the_listing_that_ends_it(
        early: bool, steps: int) -> None:
    """``w4-listing``: proven in the steps it took when this was written (room to spare
    for a change in the order of trying elsewhere: twice), and by the default check."""
    events = _events("w4-listing")
    (so,) = group_by_session(events)[0].values()
    ops = session_ops(so, Evidence())
    out = search(ops, time.monotonic() + 300, 2 * steps, early=early)
    assert out.ok is True
    assert replays(certify([ops[k] for k in out.order], out.path))
    got = check(events)
    assert (got.valid, got.stats["exact"]["sessions_unknown"]) == (True, [])


# the steps each took when this was written, looking ahead from the start (5,696 and
# 2,587, the same under every string hashing tried), with an eighth to spare: the
# look-ahead skipped in configurations of several states takes 6,734 and 3,608
@pytest.mark.parametrize(("early", "steps"), [(False, 5_696), (True, 2_587)])
def test_a_turn_only_a_rollback_restores_is_looked_ahead_at(early: bool, steps: int) -> None:
    """``w8-restored``: proven when the search looks ahead from the start (as the default
    check's search trying early ops first does), not in 20,000 steps without it, and by
    the default check."""
    events = _events("w8-restored")
    (so,) = group_by_session(events)[0].values()
    ops = session_ops(so, Evidence())
    out = search(ops, time.monotonic() + 300, steps + steps // 8, early=early, ahead=0)
    assert out.ok is True
    assert replays(certify([ops[k] for k in out.order], out.path))
    assert search(ops, time.monotonic() + 300, 20_000, early=early, ahead=1 << 62).ok is None
    got = check(events)
    assert (got.valid, got.stats["exact"]["sessions_unknown"]) == (True, [])


def test_the_default_search_looks_ahead_after_20_backups() -> None:
    """``w8-restored`` by the search as the default check begins it: 6,726 steps when this
    was written (2026-11-29, the same in every process), looking ahead after 20 backups;
    11,009 after a tenth of a backup per op (54), as it did before."""
    _proven_within("w8-restored", 8_000)


def test_a_path_built_before_looking_ahead_is_looked_at_when_it_turns_on() -> None:
    """``w32-s1``: two overlapping rollbacks tried in the wrong order at depth 404, which
    three ops pending for 100-190 ms make good for a while (the search turns back at depth
    516, then 17,000 times under it). 79,340 steps when this was written (2026-11-29, in
    every process); 94,942 before every read was looked at where the look-ahead turns on;
    75,979 with what a snapshot not taken yet may take (``frontier._takers``)."""
    _proven_within("w32-s1", 85_000)


def test_a_snapshot_not_taken_yet_explains_only_what_its_takers_may_set() -> None:
    """``w16-s0-late`` (W16 N200 S1 recorded on 2026-11-29, session s0, 1,084 ops): a
    snapshot tried at depth 156 ends another's window before an append adds the list a
    rollback 575 ops on restores; a rollback running for 54 ms to a snapshot not taken yet
    seemed to explain it until depth 219, where that snapshot was taken. No op that may set
    what that snapshot takes sets that list (``frontier._takers``): 3,483 steps when this
    was written, 12,525 without."""
    _proven_within("w16-s0-late", 5_000)


def test_a_rollback_that_ran_for_long_is_not_taken_to_explain_what_is_still_far_off() -> None:
    """``w16-s1-long``: 2,385 steps when this was written; 37,592 when turns that already
    showed an append's parent explained it with hundreds of ops still to come before it,
    8,393 when the rollback that alone may explain that append seemed to explain reads of
    its list 125 ops before it as well."""
    _proven_within("w16-s1-long", 4_000)


def test_a_rollback_another_read_pins_is_not_taken_to_explain_a_far_read() -> None:
    """``w16-s1-chain``: 2,977 steps when this was written, 7,091 when a rollback that must
    be the last op to set the turns before one read counted among those of another."""
    _proven_within("w16-s1-chain", 4_000)


def test_the_search_backs_up_to_the_first_of_the_reads_its_path_lost() -> None:
    """``w16-s1-first``: 2,921 steps when this was written, 5,443 when, turning the
    look-ahead on at depth 572, the search went back to where the first of the reads the
    path had lost (by snapshot id) lost its way, depth 507, and then one backup at a
    time through 150 more depths, not at once to where the first of them did (215)."""
    _proven_within("w16-s1-first", 4_000)


def test_the_frontier_search_trying_early_ops_first_proves_another() -> None:
    _proven_within("w16-s1-c", SESSION_STEPS, early=True)


@pytest.mark.parametrize("name", ["w16-s1-a", "w16-s1-b", "w16-s0-unseen"])
def test_the_default_check_proves_a_recorded_16_writer_session(name: str) -> None:
    got = check(_events(name))
    assert got.valid is True
    exact = got.stats["exact"]
    assert (exact["sessions_proven"], exact["sessions_unknown"]) == (1, [])


def test_a_rollback_retargeted_in_a_recorded_session_is_refuted() -> None:
    """The rollback of event 1193 made to target another snapshot of the session: the
    fast rules find nothing, the default check refutes the session."""
    events = _events("w16-s1-a")
    rb = events[1193]
    assert (rb.f, rb.type) == ("rollback", "invoke")
    assert any(e.f == "snapshot" and e.type == "ok" and e.value == "0e5a30df99e94b19" for e in events)
    events[1193] = replace(rb, value="0e5a30df99e94b19")
    assert check_fast(events).valid is True
    got = check(events)
    assert got.valid is False
    assert got.stats["exact"]["sessions_refuted"] == 1
    assert set(got.totals) == {"bad-rollback"}


def test_a_session_the_searches_do_not_decide_is_named_never_passed_as_proven() -> None:
    """``w8-rollbacks``: the one session of ``test_many_seeds``' seed 96 on Redis (8
    writers, 1,102 ops of which 354 rollbacks, 7.4 ops pending at an invocation), which
    no search decides (docs/checker.md, "What the searches do not decide"). Its first 898
    events are proven at once; with the read of event 898, which shows a turn appended
    some 250 events before and restored by a rollback to a snapshot that could have taken
    it then, the session is undecided. Its verdict says so: unknown with ``exact``, a pass
    named as not proven by default, the session named in both. (It is linearizable:
    ``--exact`` with minutes of budget proves it by the solver, harness.checker.smt.)"""
    events = _events("w8-rollbacks")
    assert len(events) == 2204 and check_fast(events).valid is True
    assert check(events[:898], exact=True, budget_s=20).valid is True
    for exact in (True, False):
        got = check(events, exact=exact, budget_s=1.0)
        assert got.valid is (None if exact else True)
        proof = got.proof()
        assert proof is not None and not proof["proven"]
        assert proof["sessions_unknown"] == ["s0"]


def test_a_session_whose_only_read_is_the_final_one_is_proven() -> None:
    """``w8-final-read``: the session ``s0`` of ``test_many_seeds``' seed 89 (8 writers,
    262 ops, no read but the final one), which the searches did not decide while
    listings were tried last with a snapshot's window open (2026-11-26: none alone in 12
    s of CPU). It has a linearization: with a read of the final list added between
    events 188 and 198 (where, worked out by hand, a rollback restored that list and the
    snapshot that the run's last rollback restores took it), which can only remove
    linearizations, the searches proved it then in 307,346 steps. Now the frontier search
    trying ops earliest invocation first proves it alone in 18,760 steps, and the
    session with the added read in 16,629: both must be proven, never refuted."""
    events = _events("w8-final-read")
    final = events[521]
    assert (final.f, final.type, final.process) == ("read", "ok", "final")
    # a generous budget: one session gets half of it, its searches share that, and a
    # loaded machine (a test beside it on each core) must not make it undecided
    got = check(events, exact=True, budget_s=300)
    assert got.valid is True
    assert got.stats["exact"]["sessions_proven"] == 1
    read = [Event(index=-1, time=events[188].time + 1, process="x", type="invoke", f="read",
                  session="s0", value=None),
            Event(index=-1, time=events[198].time - 1, process="x", type="ok", f="read",
                  session="s0", value=final.value)]
    more = sorted(events + read, key=lambda e: e.time)
    more = [replace(e, index=i) for i, e in enumerate(more)]
    assert check(more, exact=True, budget_s=300).valid is True
