"""Stores under test: the protocol, the reference stores, the bug zoo, spec resolution."""

from harness.stores.base import ALL_CAPABILITIES, OPS, MemoryStore
from harness.stores.registry import BUILTINS, StoreInfo, open_store, resolve

__all__ = ["ALL_CAPABILITIES", "BUILTINS", "OPS", "MemoryStore", "StoreInfo", "open_store", "resolve"]
