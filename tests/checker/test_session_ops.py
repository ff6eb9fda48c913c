"""The session's ops as the searches see them (harness.checker.exact.session_ops)."""

from __future__ import annotations

from harness.checker.evidence import Evidence
from harness.checker.exact import _SEP, session_ops
from harness.checker.ops import group_by_session
from tests.checker.builder import H


def test_a_read_that_extends_the_one_before_is_parsed_as_a_whole_one_is() -> None:
    """``session_ops`` reuses the turns of the read before for the items a read shares
    with it: the same turns as parsing it whole, a role changed in the shared part makes
    another turn, and a malformed item after the shared part makes the read unreadable."""
    h = H()
    h.append(0, "s", "a")
    h.append(0, "s", "b")
    h.read(1, "s", ["a"])
    h.read(1, "s", ["a", "b"])  # extends the one before
    h.read(1, "s", [["assistant", "a"], ["user", "b"]])  # a's role changed
    h.read(1, "s", [["user", "a"], ["user", "b"], ["user"]])  # a malformed item last
    h.read(1, "s", ["a", "b"])
    [so] = group_by_session(h.events)[0].values()
    found = Evidence()
    ops = session_ops(so, found)
    a, b = f"user{_SEP}a", f"user{_SEP}b"
    assert [o.out for o in ops if o.kind == "read"] == [
        (a,), (a, b), (f"assistant{_SEP}a", b), (a, b)]
    assert all(o.arg is None for o in ops if o.kind == "read")
    assert found.totals == {"unreadable": 1}
