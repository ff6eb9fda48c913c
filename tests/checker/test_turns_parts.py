"""The appends of a session indexed by token (harness.checker.turns), part by part, on
literal pairs: what :func:`index_appends` records for each kind of completion (ok, info,
none, fail), for a token appended twice or three times, for values that are not
``[role, token]``; when a session is ambiguous and how often a token may appear; the
indexes built once per session (:class:`LazyIndexes`); and which session owns a token
(:class:`Owners`: the first in history order, built once)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from harness.checker.ops import INF, SessionOps
from harness.checker.turns import LazyIndexes, Owners, TurnIndex, index_appends
from harness.history import Event


def inv(i: int, t: int, value: Any, p: int = 0, s: str = "s") -> Event:
    return Event(i, t, p, "invoke", "append", s, value)


def done(i: int, t: int, typ: str, p: int = 0, s: str = "s", value: Any = None) -> Event:
    return Event(i, t, p, typ, "append", s, value, None if typ == "ok" else "Error: x")


def test_ok_info_unknown_and_failed_appends() -> None:
    a, a_ok = inv(0, 10, ["user", "a"]), done(1, 20, "ok", value=["user", "a"])
    b, b_info = inv(2, 30, ["assistant", "b"], p=1), done(3, 40, "info", p=1)
    c = inv(4, 50, ["user", "c"], p=2)  # never completed
    d, d_fail = inv(5, 60, ["user", "d"], p=3), done(6, 70, "fail", p=3)
    ti = index_appends([(a, a_ok), (b, b_info), (c, None), (d, d_fail)])
    assert ti == TurnIndex(
        recs={"a": (10, 20, "user", a, a_ok), "b": (30, INF, "assistant", b, b_info), "c": (50, INF, "user", c, None)},
        failed={"d": (d, d_fail)},
        multi={},
        malformed=0,
    )
    assert not ti.ambiguous
    assert [ti.allowed(t) for t in "abcdx"] == [1, 1, 1, 0, 0]


def test_a_failed_append_of_a_token_also_appended_otherwise_is_not_failed() -> None:
    # the failure first, then an ok append of the same token; and a second failure after
    a, a_fail = inv(0, 10, ["user", "a"]), done(1, 20, "fail")
    a2, a2_ok = inv(2, 30, ["user", "a"]), done(3, 40, "ok", value=["user", "a"])
    a3, a3_fail = inv(4, 50, ["user", "a"]), done(5, 60, "fail")
    b, b_fail = inv(6, 70, ["user", "b"]), done(7, 80, "fail")
    ti = index_appends([(a, a_fail), (a2, a2_ok), (a3, a3_fail), (b, b_fail)])
    assert ti.recs == {"a": (30, 40, "user", a2, a2_ok)}
    assert ti.failed == {"b": (b, b_fail)}  # a's failures are not listed: some append of a did not fail
    assert ti.multi == {} and ti.malformed == 0 and not ti.ambiguous
    # a failure after the loop has moved on does not stop it: c after two failures is indexed
    c, c_ok = inv(8, 90, ["user", "c"]), done(9, 100, "ok", value=["user", "c"])
    ti = index_appends([(b, b_fail), (a, a_fail), (c, c_ok)])
    assert set(ti.recs) == {"c"} and set(ti.failed) == {"a", "b"}


def test_a_token_appended_twice_keeps_the_widest_interval_and_the_first_role() -> None:
    # completion order: x2 (invoked later, completed first), then x1 (invoked first, completed last)
    x1 = inv(0, 10, ["user", "x"])
    x2, x2_ok = inv(1, 20, ["assistant", "x"], p=1), done(2, 30, "ok", p=1, value=["assistant", "x"])
    x1_ok = done(3, 40, "ok", value=["user", "x"])
    ti = index_appends([(x2, x2_ok), (x1, x1_ok)])
    assert ti.recs == {"x": (10, 40, "assistant", x2, x2_ok)}
    assert ti.multi == {"x": 2}
    assert ti.ambiguous and ti.allowed("x") == 2
    # the first one wider than the second: the interval stays the first's
    ti = index_appends([(x1, x1_ok), (x2, x2_ok)])
    assert ti.recs == {"x": (10, 40, "user", x1, x1_ok)}


def test_a_token_appended_three_times_is_allowed_three_times() -> None:
    pairs = [(inv(2 * i, 10 * i + 10, ["user", "x"], p=i), done(2 * i + 1, 10 * i + 15, "info", p=i))
             for i in range(3)]
    ti = index_appends(pairs)
    assert ti.multi == {"x": 3}
    assert ti.allowed("x") == 3 and ti.allowed("y") == 0
    assert ti.recs["x"][:3] == (10, INF, "user")
    assert ti.recs["x"][3] is pairs[0][0] and ti.recs["x"][4] is pairs[0][1]
    # the one not known to be ok has no end, whichever comes first
    ok = (inv(9, 100, ["user", "x"], p=9), done(10, 110, "ok", p=9, value=["user", "x"]))
    assert index_appends([ok, pairs[0]]).recs["x"][:2] == (10, INF)
    assert index_appends([ok, ok]).recs["x"][:2] == (100, 110)


def test_values_that_are_not_role_and_token_are_counted_malformed() -> None:
    good = (inv(0, 10, ("user", "t")), done(1, 20, "ok", value=("user", "t")))  # a tuple will do
    bad_values: list[Any] = ["user:t", ["user", "t", "x"], ["user"], [1, "t"], ["user", 2], None, {"user": "t"}]
    pairs = [(inv(2 + i, 30 + i, v), None) for i, v in enumerate(bad_values)]
    ti = index_appends([pairs[0], good, *pairs[1:]])
    assert ti.malformed == len(bad_values)
    assert list(ti.recs) == ["t"] and ti.recs["t"][:3] == (10, 20, "user")
    assert ti.ambiguous and not ti.multi


def test_one_malformed_append_makes_a_session_ambiguous() -> None:
    ti = index_appends([(inv(0, 10, ["user"]), None)])
    assert ti == TurnIndex(malformed=1)
    assert ti.ambiguous
    assert not TurnIndex().ambiguous
    assert TurnIndex(multi={"x": 2}).ambiguous


class CountingSessions(Mapping[str, SessionOps]):
    """A mapping of sessions that counts the lookups of each one."""

    def __init__(self, sessions: dict[str, SessionOps]) -> None:
        self.sessions = sessions
        self.gets: dict[str, int] = {}

    def __getitem__(self, name: str) -> SessionOps:
        self.gets[name] = self.gets.get(name, 0) + 1
        return self.sessions[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self.sessions)

    def __len__(self) -> int:
        return len(self.sessions)


def two_sessions() -> tuple[dict[str, SessionOps], list[tuple[Event, Event | None]]]:
    p = [
        (inv(0, 10, ["user", "a"], s="s"), done(1, 20, "ok", s="s", value=["user", "a"])),
        (inv(2, 30, ["user", "a"], p=1, s="t"), done(3, 40, "ok", p=1, s="t", value=["user", "a"])),
        (inv(4, 50, ["user", "b"], p=1, s="t"), done(5, 60, "fail", p=1, s="t")),
        (inv(6, 70, ["user", "c"], p=1, s="t"), None),
    ]
    return {"t": SessionOps("t", appends=p[1:]), "s": SessionOps("s", appends=p[:1])}, p


def test_lazy_indexes_build_each_session_once_when_asked() -> None:
    sessions, p = two_sessions()
    counting = CountingSessions(sessions)
    li = LazyIndexes(counting)
    assert len(li) == 2 and list(li) == ["t", "s"]
    assert counting.gets == {}
    t = li["t"]
    assert t == index_appends(p[1:])
    assert li["t"] is t and li["s"] == index_appends(p[:1])
    assert counting.gets == {"t": 1, "s": 1}


class CountingItems(dict[str, TurnIndex]):
    """A dict of indexes that counts the calls of items()."""

    calls = 0

    def items(self) -> Any:
        self.calls += 1
        return super().items()


def test_owners_name_the_first_session_with_a_non_failed_append() -> None:
    sessions, p = two_sessions()
    indexes = CountingItems({"s": index_appends(p[:1]), "t": index_appends(p[1:])})
    owners = Owners(indexes)
    assert indexes.calls == 0  # built only when asked
    assert owners.of("a") == ("s", p[0])
    assert owners.of("c") == ("t", p[3])
    assert owners.of("b") is None  # its only append failed
    assert owners.of("z") is None
    assert indexes.calls == 1
    # the other order of sessions: the first in that order owns it
    indexes = CountingItems({"t": index_appends(p[1:]), "s": index_appends(p[:1])})
    assert Owners(indexes).of("a") == ("t", p[1])
    # over lazy indexes, as the fast checker builds them
    assert Owners(LazyIndexes(sessions)).of("a") == ("t", p[1])
