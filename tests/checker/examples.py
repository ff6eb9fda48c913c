"""How many examples a property test of the checker runs.

``examples(n)`` is ``n`` scaled by ``$HARNESS_EXAMPLES`` (a factor; 1 when unset).
Mutation testing (``scripts/mutation.sh``) sets 0.1, so that each mutant's tests take
seconds, not minutes; ``tests/checker/conftest.py`` then draws the examples the same way on
every run, so that a mutant is killed, or survives, on every run alike.
"""

from __future__ import annotations

import os

__all__ = ["SCALE", "examples"]

SCALE = float(os.environ.get("HARNESS_EXAMPLES") or 1)


def examples(n: int) -> int:
    """``n`` examples, scaled (at least 1)."""
    return max(1, round(n * SCALE))
