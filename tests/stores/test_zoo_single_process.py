"""Each zoo store works in the single-process case, which is why unit tests miss its bug;
and the reference stores keep long and odd contents byte for byte."""

from __future__ import annotations

import pytest

from harness.stores import BUILTINS, open_store

ODD = ["", "é漢字😀👨‍👩‍👧", 'quote " \\ back', "line\nbreak\r\n", "x" * 300_000]


@pytest.mark.parametrize("spec", sorted(BUILTINS))
def test_single_process_round_trip(spec: str, request: pytest.FixtureRequest) -> None:
    info = BUILTINS[spec]
    url = request.getfixturevalue(f"{info.backend or 'sqlite'}_url")
    store = open_store(info, url, f"zoo-{spec}")
    try:
        for i, text in enumerate(ODD):
            store.append("s", "user", f"{i}|{text}")
        if spec == "zoo.redis-unflushed-pipeline":
            store.close()  # its flush happens at close: the very bug
            store = open_store(info, url, f"zoo-{spec}")
        sid = store.snapshot("s")
        store.append("s", "assistant", "after")
        store.history("s")
        assert store.history("s")[: len(ODD)] == [("user", f"{i}|{t}") for i, t in enumerate(ODD)]
        store.rollback("s", sid)
        assert store.history("s") == [("user", f"{i}|{t}") for i, t in enumerate(ODD)]
        assert sid in store.snapshots("s") or spec == "zoo.sqlite-rollback-wipes-snapshots"
    finally:
        store.close()
