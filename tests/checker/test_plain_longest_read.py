"""The proof of a session without rollbacks (harness.checker.plain) takes its order from the
longest read that returned first, and checks that read's format: a malformed read before
a well-formed one of the same turns is not proven (mutation testing found this unpinned).

Times come from ``tests/checker/builder.py``: 10 ns apart."""

from __future__ import annotations

from harness.checker import check
from harness.checker.fast import check_fast
from harness.checker.ops import SessionOps, group_by_session
from harness.checker.plain import prove
from tests.checker.builder import H


class _Pair(list):  # type: ignore[type-arg]
    """A turn that equals ``[role, token]`` but is not a plain list: malformed by the
    checker's rules (``read_tokens`` and the order tree check exact types), though ``==``
    takes it for the list it holds."""


def _one(h: H) -> SessionOps:
    (so,) = group_by_session(h.events)[0].values()
    return so


def test_the_longest_read_first_returned_fixes_the_plain_order_so_a_malformed_one_is_not_proven() -> None:
    """The turns' order is taken from the first of the longest reads, whose format is
    checked; the reads after it are only compared with the replayed list. A malformed read
    (a turn that is a list subclass) returned before a well-formed read equal to it is
    therefore not proven on the raw pairs: it is left to the fast rules, which find it
    unreadable, as they do without the proof (it is the first read to show the turn)."""
    h = H()
    h.append(0, "s", "a")
    h.inv(1, "read", "s")
    h.ok(1, [_Pair(["user", "a"])])
    h.read(2, "s", ["a"])  # the same length, well formed, equal to it by ==
    assert not prove(_one(h))
    assert check_fast(h.events).counts() == {"unreadable": 1}
    res = check(h.events)
    assert res.counts() == {"unreadable": 1}
    assert res.violations[0].events[-1].index == 3  # the malformed read, blamed
