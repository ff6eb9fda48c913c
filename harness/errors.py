"""The one error root of harness, and the tree under it.

::

    HarnessError                 anything harness raises on purpose
    ├── InputError               bad input or setup: exit code 2, one line for the user
    │   ├── ScenarioError        unreadable, malformed or invalid scenario file
    │   ├── StoreSpecError       unknown store name, unimportable ``package.module:factory``
    │   └── TargetError          a target that cannot be made or reached (Redis down, dir unwritable)
    └── HistoryError             a history file that cannot be read at all

Stores signal "that snapshot id does not exist" with :class:`SnapshotNotFound`, a
``LookupError`` (so third-party stores raising ``KeyError`` mean the same thing).
"""

from __future__ import annotations

__all__ = [
    "HarnessError",
    "HistoryError",
    "InputError",
    "ScenarioError",
    "SnapshotNotFound",
    "StoreSpecError",
    "TargetError",
]


class HarnessError(Exception):
    """Root of every error harness raises on purpose."""


class InputError(HarnessError):
    """Bad input or setup. The CLI prints ``str(err)`` on one line and exits 2."""


class ScenarioError(InputError):
    """A scenario file that cannot be read, parsed or validated."""


class StoreSpecError(InputError):
    """A store spec that names no built-in store and no importable factory."""


class TargetError(InputError):
    """A target (SQLite directory, Redis server) that cannot be created or reached."""


class HistoryError(HarnessError):
    """A history that cannot be read (missing file, not a history at all)."""


class SnapshotNotFound(LookupError):
    """Raised by a store's ``rollback`` when the snapshot id is unknown to it."""
