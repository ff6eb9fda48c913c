"""The MemoryStore contract, checked by a hypothesis state machine against a model, on a
real SQLite file, a real redis-server and a real PostgreSQL server, for the reference stores (the built-in stores
that declare no expected violation)."""

from __future__ import annotations

import itertools
import uuid

import pytest
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import Bundle, RuleBasedStateMachine, initialize, invariant, rule

from harness.errors import SnapshotNotFound
from harness.stores import BUILTINS, MemoryStore, open_store

SESSIONS = st.sampled_from(["a", "b"])
CONTENT = st.text(min_size=0, max_size=40)
_counter = itertools.count()


def machine_for(spec: str, url_of: object) -> type[RuleBasedStateMachine]:
    class StoreMachine(RuleBasedStateMachine):
        snaps = Bundle("snaps")

        @initialize()
        def open(self) -> None:
            self.store: MemoryStore = open_store(BUILTINS[spec], url_of(), f"t{uuid.uuid4().hex}")  # type: ignore[operator]
            self.turns: dict[str, list[tuple[str, str]]] = {"a": [], "b": []}
            self.saved: dict[tuple[str, str], list[tuple[str, str]]] = {}

        @rule(session=SESSIONS, role=st.sampled_from(["user", "assistant"]), text=CONTENT)
        def append(self, session: str, role: str, text: str) -> None:
            content = f"{next(_counter)}|{text}"
            self.store.append(session, role, content)
            self.turns[session].append((role, content))

        @rule(target=snaps, session=SESSIONS)
        def snapshot(self, session: str) -> tuple[str, str]:
            sid = self.store.snapshot(session)
            assert (session, sid) not in self.saved  # ids are unique within a session
            self.saved[(session, sid)] = list(self.turns[session])
            return (session, sid)

        @rule(snap=snaps)
        def rollback(self, snap: tuple[str, str]) -> None:
            session, sid = snap
            turns = self.saved[snap]
            self.store.rollback(session, sid)
            self.turns[session] = list(turns)

        @rule(session=SESSIONS)
        def rollback_unknown(self, session: str) -> None:
            with pytest.raises(LookupError):
                self.store.rollback(session, "no-such-snapshot")

        @invariant()
        def matches_model(self) -> None:
            if not hasattr(self, "store"):
                return
            for s in ("a", "b"):
                assert self.store.history(s) == self.turns[s]
                assert sorted(self.store.snapshots(s)) == sorted(
                    k for ss, k in self.saved if ss == s)

        def teardown(self) -> None:
            if hasattr(self, "store"):
                self.store.close()

    return StoreMachine


@pytest.mark.parametrize("spec", [s for s, info in BUILTINS.items() if info.expected is None])
def test_reference_store_follows_the_model(spec: str, tmp_path_factory: pytest.TempPathFactory,
                                           request: pytest.FixtureRequest) -> None:
    def url() -> str:
        if spec == "sqlite":
            return f"sqlite:///{tmp_path_factory.mktemp('db') / 'store.db'}"
        if spec == "postgres":
            return request.getfixturevalue("postgres_schema")()  # empty tables each example
        return request.getfixturevalue("redis_url")

    m = machine_for(spec, url)
    m.TestCase.settings = settings(max_examples=30, stateful_step_count=25, deadline=None)
    m.TestCase().runTest()


def test_snapshot_not_found_is_a_lookup_error() -> None:
    assert issubclass(SnapshotNotFound, LookupError)
