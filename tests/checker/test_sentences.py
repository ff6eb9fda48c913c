"""Every violation's sentence against its own evidence: the sentence names only events that
are in the evidence, and what it claims of them holds there.

A reader acts on the sentence, so it must be checkable without trusting the checker: each
"process P at event N" and "event N" it mentions is one of the violation's events (with that
process), and for each kind the claim is re-derived from those events alone (a lost turn is
absent from the later read cited, a back-dated turn present in it before a turn the earlier
read showed without it, and so on). Checked on the golden histories, on literal shapes, and
on generated histories damaged at random.
"""

from __future__ import annotations

import ast
import json
import random
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from harness.checker import Violation, check
from harness.checker.exact import check_exact
from harness.history import Event, read_history
from tests.checker.builder import H
from tests.checker.examples import examples
from tests.checker.mutate import MUTATIONS, scramble
from tests.checker.simulate import Params, simulate
from tests.checker.test_kinds import back_dated

GOLDEN = Path(__file__).resolve().parents[1] / "golden"
_QUOTED = re.compile(r"'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"")
_PROC_AT = re.compile(r"process (\S+) at event (\d+)")
_EVENT = re.compile(r"\bevent (\d+)")


def quoted(msg: str) -> list[str]:
    return [ast.literal_eval(q) for q in _QUOTED.findall(msg)]


def same(q: str, tok: object) -> bool:
    """``q`` names ``tok`` (a long token is shortened with a trailing ellipsis)."""
    if not isinstance(tok, str):
        return q == repr(tok) or (q.endswith("…") and repr(tok).startswith(q[:-1]))
    return q == tok or (q.endswith("…") and tok.startswith(q[:-1]))


def toks(e: Event) -> list[str]:
    return [x[1] for x in e.value] if isinstance(e.value, list) else []


def has(e: Event, q: str) -> bool:
    return any(same(q, t) for t in toks(e))


def reads(v: Violation) -> list[Event]:
    """The ok read completions of the evidence, in history order."""
    return [e for e in v.events if e.f == "read" and e.type == "ok"]


def invoke_of(v: Violation, comp: Event) -> Event:
    return max((e for e in v.events if e.process == comp.process and e.type == "invoke"
                and e.index < comp.index), key=lambda e: e.index)


def pos(e: Event, q: str) -> int:
    return next(i for i, t in enumerate(toks(e)) if same(q, t))


# -- each kind's claim, from its evidence alone --------------------------------------------------


def lost(v: Violation) -> bool:
    x = quoted(v.message)[0]
    later = reads(v)[-1]
    lo = invoke_of(v, later).time
    acked = any(e.f == "append" and e.type == "ok" and same(x, e.value[1]) and e.time < lo
                for e in v.events)
    shown = any(has(r, x) and r.time < lo for r in reads(v)[:-1])
    return not has(later, x) and (acked or shown)


def back_dated_claim(v: Violation) -> bool:
    c, t = quoted(v.message)[:2]
    early, late = reads(v)[0], reads(v)[-1]
    return (has(late, c) and has(late, t) and pos(late, c) < pos(late, t)
            and has(early, t) and not has(early, c) and early.time < invoke_of(v, late).time)


def incompatible(v: Violation) -> bool:
    t, x = quoted(v.message)[:2]
    a, b = reads(v)[0], reads(v)[-1]
    one, other = (a, b) if has(a, x) else (b, a)
    overlap = a.time >= invoke_of(v, b).time and b.time >= invoke_of(v, a).time
    return (has(one, x) and pos(one, x) < pos(one, t) and has(other, t)
            and not has(other, x) and overlap)


def reused(v: Violation) -> bool:
    sid = quoted(v.message)[1]
    return sum(e.f == "snapshot" and e.type == "ok" and e.value == sid for e in v.events) == 2


def reordered(v: Violation) -> bool:
    a, b = quoted(v.message)[:2]
    rs = [r for r in reads(v) if has(r, a) and has(r, b)]
    if "acknowledged" in v.message:  # t acknowledged before a was appended; a read: a < t
        t, a = a, b
        t_ok = next(e for e in v.events if e.f == "append" and e.type == "ok" and same(t, e.value[1]))
        a_inv = next(e for e in v.events if e.f == "append" and e.type == "invoke"
                     and same(a, e.value[1]))
        return t_ok.time < a_inv.time and any(pos(r, a) < pos(r, t) for r in rs)
    return (any(pos(r, a) < pos(r, b) for r in rs) and any(pos(r, b) < pos(r, a) for r in rs))


def duplicate(v: Violation) -> bool:
    x = quoted(v.message)[0]
    return any(sum(same(x, t) for t in toks(r)) >= 2 for r in reads(v))


def phantom(v: Violation) -> bool:
    return any(has(r, quoted(v.message)[0]) for r in reads(v))


def bleed(v: Violation) -> bool:
    x = quoted(v.message)[0]
    r = reads(v)[-1]
    app = next(e for e in v.events if e.f == "append" and same(x, e.value[1]))
    return has(r, x) and app.session != r.session


def vanished(v: Violation) -> bool:
    sid = quoted(v.message)[0]
    known = [e for e in v.events if e.type == "ok" and (
        (e.f == "snapshot" and e.value == sid) or (e.f == "list_snapshots" and sid in e.value))]
    later = v.events[-1]
    gone = ((later.f == "list_snapshots" and later.type == "ok" and sid not in later.value)
            or (later.f == "rollback" and later.type == "fail"))
    return bool(known) and gone and known[0].index < later.index


CLAIMS: dict[str, Callable[[Violation], bool]] = {
    "lost-turn": lost,
    "back-dated-turn": back_dated_claim,
    "incompatible-order": incompatible,
    "reused-snapshot-id": reused,
    "reordered-turns": reordered,
    "duplicate-turn": duplicate,
    "phantom-turn": phantom,
    "cross-session-bleed": bleed,
    "vanished-checkpoint": vanished,
    "bad-rollback": lambda v: any(e.f == "rollback" for e in v.events),
    "unreadable": lambda v: v.events[-1].type == "fail" or v.events[-1].type == "ok",
}


def assert_true_sentence(v: Violation) -> None:
    by_index = {e.index: e for e in v.events}
    for proc, n in _PROC_AT.findall(v.message):
        assert int(n) in by_index, (v.kind, v.message)
        assert str(by_index[int(n)].process) == proc, (v.kind, v.message)
    for n in _EVENT.findall(v.message):
        assert int(n) in by_index, (v.kind, v.message)
    if v.message.startswith("No order of"):
        return  # the exact search's dead end: where it gave up, not a claim about two ops
    assert CLAIMS[v.kind](v), (v.kind, v.message, [e.to_dict() for e in v.events])


# -- where the violations come from -------------------------------------------------------------


def _lost_seen_then_gone() -> H:
    h = H()
    h.inv(0, "append", "s", "a")
    h.info(0)
    h.read(1, "s", ["a"])
    h.read(2, "s", [])
    return h


def _lost_by_later_read() -> H:
    h = H()
    h.inv(0, "append", "s", "a")
    h.inv(1, "append", "s", "b")
    h.read(2, "s", ["a", "b"])
    h.read(3, "s", ["b"])
    return h


def _reordered_by_reads() -> H:
    h = H()
    h.inv(0, "append", "s", "a")
    h.inv(1, "append", "s", "b")
    h.ok(0)
    h.ok(1)
    h.read(2, "s", ["a", "b"])
    h.read(3, "s", ["b", "a"])
    return h


LITERAL: dict[str, Callable[[], H]] = {
    "back-dated": lambda: back_dated(overlap=False),
    "overlapping": lambda: back_dated(overlap=True),
    "lost-seen-then-gone": _lost_seen_then_gone,
    "lost-by-later-read": _lost_by_later_read,
    "reordered-by-reads": _reordered_by_reads,
}


def test_golden_sentences_hold_on_their_evidence() -> None:
    seen: set[str] = set()
    for name in json.loads((GOLDEN / "expected.json").read_text()):
        events = read_history(GOLDEN / name)
        for res in (check(events), check_exact(events, budget_s=10)):
            for v in res.violations:
                assert_true_sentence(v)
                seen.add(v.kind)
    assert seen == set(CLAIMS)  # every kind has a golden history


def test_literal_shapes_say_what_they_show() -> None:
    kinds = {}
    for name, make in LITERAL.items():
        res = check(make().events)
        kinds[name] = set(res.counts())
        for v in res.violations:
            assert_true_sentence(v)
    assert kinds["back-dated"] == {"back-dated-turn"}
    assert kinds["overlapping"] == {"incompatible-order"}
    assert kinds["lost-by-later-read"] == kinds["lost-seen-then-gone"] == {"lost-turn"}


def _params(draw: Any) -> Params:
    return Params(procs=draw(st.integers(1, 5)), sessions=draw(st.integers(1, 3)),
                  steps=draw(st.integers(0, 80)), p_crash=draw(st.sampled_from([0.0, 0.1])),
                  p_info=draw(st.sampled_from([0.0, 0.15])), p_fail=0.05, ties=draw(st.booleans()))


@settings(max_examples=examples(250), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32 - 1), data=st.data(),
       how=st.sampled_from(["scramble", *sorted(MUTATIONS)]))
def test_generated_violations_say_only_what_their_evidence_shows(
    seed: int, data: st.DataObject, how: str
) -> None:
    events = simulate(seed, _params(data.draw))
    rng = random.Random(seed)
    if how == "scramble":
        events = scramble(events, rng)
    else:
        got = MUTATIONS[how](events, rng)
        events = got[0] if got is not None else events
    for v in check(events).violations:
        assert_true_sentence(v)


#: Runs, in a process of its own, both checks over simulated histories of every buggy store
#: family, and prints a digest of each violation's kind, sentence and evidence.
_DIGEST = """
import hashlib, random
from harness.checker import check
from harness.checker.fast import check_fast
from tests.checker.simulate import BUGS, MORE_BUGS, buggy_params, simulate
h = hashlib.sha256()
for bug in BUGS + MORE_BUGS:
    for seed in range(600):
        events = simulate(seed, buggy_params(random.Random(seed), bug))
        for judge in (check_fast, check):
            for v in judge(events).violations:
                h.update(repr((bug, seed, v.kind, v.message, [e.index for e in v.events])).encode())
print(h.hexdigest())
"""


def test_every_sentence_and_its_evidence_are_the_same_whatever_the_string_hashing() -> None:
    """The same history gives the same report on every run: where the checker picks one of
    several turns to name (the first witnessed of those a read lacks), ties are broken by
    the turn, not by the order of a set, which follows the process's string hashing
    (simulated seed 493 of the wrong-snapshot family named 'w2:4' under PYTHONHASHSEED=0
    and 'w0:3' under 1)."""
    import os
    import subprocess
    import sys

    root = Path(__file__).resolve().parents[2]
    got = set()
    for seed in ("0", "1"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        run = subprocess.run([sys.executable, "-c", _DIGEST], env=env, cwd=root, capture_output=True,
                             text=True, check=True)
        got.add(run.stdout)
    assert len(got) == 1, got
