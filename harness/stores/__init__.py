"""Stores under test: the protocol, the reference stores, the bug zoo, spec resolution.

Each built-in store is one module that declares itself (:mod:`harness.stores.declare`);
``BUILTINS`` is built from those declarations on first use.
"""

from __future__ import annotations

from harness.stores.base import ALL_CAPABILITIES, OPS, MemoryStore
from harness.stores.declare import Declared
from harness.stores.registry import StoreInfo, builtins, open_store, resolve

__all__ = ["ALL_CAPABILITIES", "BUILTINS", "OPS", "Declared", "MemoryStore", "StoreInfo",
           "builtins", "open_store", "resolve"]


def __getattr__(name: str) -> dict[str, StoreInfo]:
    if name == "BUILTINS":  # built on first use: see harness.stores.registry
        return builtins()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
