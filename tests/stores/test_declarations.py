"""The built-in stores declare themselves, and the declarations hold: every store module
is found, names its backend and factory, and each zoo store names a violation kind the
checker has, a shipped scenario that exists, and a fault that scenario applies."""

from __future__ import annotations

import pkgutil
from pathlib import Path

import pytest

import harness.stores.zoo
from harness.backends import NAMES
from harness.checker import KINDS
from harness.scenario import load_scenario
from harness.stores import BUILTINS, StoreInfo, open_store
from harness.stores.registry import builtins

SCENARIOS = Path(__file__).resolve().parents[2] / "scenarios"
ZOO = sorted(s for s, info in BUILTINS.items() if info.expected is not None)


def test_every_zoo_module_declares_a_store() -> None:
    modules = {m.name for m in pkgutil.iter_modules(harness.stores.zoo.__path__)
               if not m.name.startswith("_")}
    declared = {info.target.split(":")[0].rsplit(".", 1)[1] for s, info in BUILTINS.items()
                if s.startswith("zoo.")}
    assert declared == modules


def test_one_reference_store_per_backend() -> None:
    assert sorted(info.backend or "" for info in BUILTINS.values()
                  if info.expected is None) == sorted(NAMES)
    assert builtins() is builtins()  # built once


@pytest.mark.parametrize("spec", ZOO)
def test_zoo_declaration_holds(spec: str) -> None:
    info: StoreInfo = BUILTINS[spec]
    assert spec.startswith(f"zoo.{info.backend}-")  # the name says the backend
    assert {info.expected, *info.also_caught_as} <= set(KINDS)
    assert info.story.startswith("The story: ") and len(info.story) > 100
    assert info.scenario is not None
    sc = load_scenario(SCENARIOS / info.scenario)
    assert (sc.backend or BUILTINS[sc.store].backend) == info.backend
    kinds = {f["kind"] for f in sc.faults}
    if info.fault is None:
        assert not kinds, "a bug that concurrency alone exposes is shown without faults"
    else:
        assert info.fault in kinds
    assert not set(info.also_exposed_by) & {info.fault}


def test_opening_a_builtin_uses_its_declared_factory(sqlite_url: str) -> None:
    store = open_store(BUILTINS["zoo.sqlite-max-turn-race"], sqlite_url, "ns")
    try:
        assert type(store).__name__ == "MaxTurnRaceStore"
    finally:
        store.close()


def test_a_store_whose_writes_span_transactions_never_has_a_definite_failure() -> None:
    """A driver error that says "not committed" proves an op had no effect only when the op
    is one transaction; LangGraph's graph run is several, and a disk-full error in its
    second left the turn of its first: reported as a phantom turn until ``atomic_writes``."""
    import sqlite3

    from harness.runner.worker import classify
    from harness.stores import resolve

    full = sqlite3.OperationalError("database or disk is full")
    assert classify("append", full)[0] == "fail"
    assert classify("append", full, atomic_writes=False)[0] == "info"
    assert resolve("sqlite").atomic_writes is True
    assert resolve("langgraph.sqlite").atomic_writes is False
    assert resolve("langchain.sql").atomic_writes is False
