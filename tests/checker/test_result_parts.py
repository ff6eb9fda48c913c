"""The checker's verdict (harness.checker.result) on literal values: the stable kind names
and their order, a violation as a dict, and what a result says about itself: true counts
against the evidence shown, the total, the proof summary of the exact decision (each
condition of ``proven``, the first 20 undecided sessions) and the whole dict a report is
written from."""

from __future__ import annotations

import dataclasses

import pytest

from harness.checker.result import KINDS, CheckResult, Violation
from harness.history import Event


def ev(index: int, **kw: object) -> Event:
    return Event(index=index, time=10 * (index + 1), process=0, type="ok", f="read", session="s",
                 value=[], **kw)  # type: ignore[arg-type]


LOST = Violation("lost-turn", "s", "Turn 'a' is gone.", (ev(0), ev(1)))
BLEED = Violation("cross-session-bleed", "t", "Turn 'b' is in t.")


def test_kinds_are_the_stable_names_in_report_order() -> None:
    assert KINDS == (
        "lost-turn",
        "back-dated-turn",
        "incompatible-order",
        "vanished-checkpoint",
        "reused-snapshot-id",
        "duplicate-turn",
        "phantom-turn",
        "cross-session-bleed",
        "reordered-turns",
        "bad-rollback",
        "unreadable",
        "setup-race",
    )


def test_violation_fields_and_dict() -> None:
    assert BLEED.events == ()
    assert LOST.to_dict() == {
        "kind": "lost-turn",
        "session": "s",
        "message": "Turn 'a' is gone.",
        "events": [
            {"index": 0, "time": 10, "process": 0, "pid": 0, "type": "ok", "f": "read", "session": "s",
             "value": []},
            {"index": 1, "time": 20, "process": 0, "pid": 0, "type": "ok", "f": "read", "session": "s",
             "value": []},
        ],
    }
    assert BLEED.to_dict() == {"kind": "cross-session-bleed", "session": "t", "message": "Turn 'b' is in t.",
                               "events": []}
    with pytest.raises(dataclasses.FrozenInstanceError):
        LOST.kind = "x"  # type: ignore[misc]


def test_a_result_by_default() -> None:
    res = CheckResult(True)
    assert res.violations == () and res.stats == {} and res.totals is None and res.error is None
    assert CheckResult(True).stats is not res.stats
    assert res.counts() == {} and res.shown() == {} and res.total() == 0
    assert res.proof() is None
    assert res.to_dict() == {
        "valid": True,
        "counts": {},
        "shown": {},
        "violations_total": 0,
        "violations_shown": 0,
        "truncated": False,
        "violations": [],
        "proof": None,
        "stats": {},
    }
    with pytest.raises(dataclasses.FrozenInstanceError):
        res.valid = False  # type: ignore[misc]


def test_counts_are_the_totals_when_given_else_what_is_shown() -> None:
    shown_only = CheckResult(False, (LOST, BLEED, LOST))
    assert shown_only.counts() == {"lost-turn": 2, "cross-session-bleed": 1}
    assert shown_only.shown() == {"lost-turn": 2, "cross-session-bleed": 1}
    assert shown_only.total() == 3
    capped = CheckResult(False, (LOST, BLEED), totals={"lost-turn": 150, "bad-rollback": 0, "cross-session-bleed": 1})
    assert capped.counts() == {"lost-turn": 150, "cross-session-bleed": 1}
    assert capped.shown() == {"lost-turn": 1, "cross-session-bleed": 1}
    assert capped.total() == 151
    assert CheckResult(True, totals={}).counts() == {}
    assert CheckResult(True, (LOST,), totals={}).counts() == {}


def test_to_dict_of_a_result_with_evidence_left_out() -> None:
    res = CheckResult(False, (LOST,), stats={"events": 2}, totals={"lost-turn": 4})
    assert res.to_dict() == {
        "valid": False,
        "counts": {"lost-turn": 4},
        "shown": {"lost-turn": 1},
        "violations_total": 4,
        "violations_shown": 1,
        "truncated": True,
        "violations": [LOST.to_dict()],
        "proof": None,
        "stats": {"events": 2},
    }
    res = CheckResult(False, (LOST, BLEED), totals={"lost-turn": 1, "cross-session-bleed": 1})
    d = res.to_dict()
    assert d["truncated"] is False
    assert d["violations_total"] == 2 and d["violations_shown"] == 2


def test_to_dict_of_an_unknown_verdict_carries_the_error() -> None:
    res = CheckResult(None, stats={"traceback": "tb"}, error="ZeroDivisionError: division by zero")
    d = res.to_dict()
    assert d["valid"] == "unknown"
    assert d["error"] == "ZeroDivisionError: division by zero"
    assert d["stats"] == {"traceback": "tb"}
    assert list(d) == ["valid", "counts", "shown", "violations_total", "violations_shown", "truncated",
                       "violations", "proof", "stats", "error"]
    assert "error" not in CheckResult(None).to_dict()
    assert CheckResult(None).to_dict()["valid"] == "unknown"
    assert CheckResult(False).to_dict()["valid"] is False


# -- the proof summary ----------------------------------------------------------------------------

EXACT = {
    "sessions_proven": 3,
    "sessions_proven_without_search": 2,
    "sessions_unknown": [],
    "sessions_unknown_detail": [],
}


def proof(valid: bool | None = True, sessions: object = 3, **exact: object) -> dict[str, object] | None:
    return CheckResult(valid, stats={"sessions": sessions, "exact": {**EXACT, **exact}}).proof()


def test_proof_of_every_session_proven() -> None:
    assert proof() == {
        "proven": True,
        "sessions": 3,
        "sessions_proven": 3,
        "sessions_proven_without_search": 2,
        "sessions_unknown": [],
        "sessions_unknown_count": 0,
        "sessions_unknown_detail": [],
    }
    assert CheckResult(True, stats={"sessions": 3, "exact": EXACT}).to_dict()["proof"] == proof()


def test_proven_needs_a_pass_every_session_proven_and_none_undecided() -> None:
    assert proof(valid=False)["proven"] is False  # type: ignore[index]
    assert proof(valid=None)["proven"] is False  # type: ignore[index]
    assert proof(sessions_proven=2)["proven"] is False  # type: ignore[index]
    assert proof(sessions=2)["proven"] is False  # type: ignore[index]
    assert proof(sessions_unknown=["t"])["proven"] is False  # type: ignore[index]
    assert proof(sessions_unknown=("t",))["sessions_unknown"] == ["t"]  # type: ignore[index]


def test_proof_lists_the_first_20_undecided_sessions_and_counts_all() -> None:
    names = [f"s{i}" for i in range(25)]
    details = [{"session": n, "ops": 10} for n in names]
    p = proof(sessions=30, sessions_proven=5, sessions_unknown=names, sessions_unknown_detail=details)
    assert p == {
        "proven": False,
        "sessions": 30,
        "sessions_proven": 5,
        "sessions_proven_without_search": 2,
        "sessions_unknown": names[:20],
        "sessions_unknown_count": 25,
        "sessions_unknown_detail": details[:20],
    }


def test_proof_reads_counts_as_ints_and_missing_keys_as_nothing() -> None:
    p = CheckResult(True, stats={"sessions": "2", "exact": {"sessions_proven": "2"}}).proof()
    assert p == {
        "proven": True,
        "sessions": 2,
        "sessions_proven": 2,
        "sessions_proven_without_search": 0,
        "sessions_unknown": [],
        "sessions_unknown_count": 0,
        "sessions_unknown_detail": [],
    }
    assert CheckResult(True, stats={"exact": {}}).proof() == {
        "proven": True,
        "sessions": 0,
        "sessions_proven": 0,
        "sessions_proven_without_search": 0,
        "sessions_unknown": [],
        "sessions_unknown_count": 0,
        "sessions_unknown_detail": [],
    }


def test_no_proof_without_the_exact_decision() -> None:
    assert CheckResult(True, stats={"sessions": 3}).proof() is None
    assert CheckResult(True, stats={"exact": "skipped"}).proof() is None
    assert CheckResult(True, stats={"exact": None}).proof() is None
