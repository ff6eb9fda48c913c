"""What a built-in store module says about itself: its :class:`Declared` record.

Every module of :mod:`harness.stores` and :mod:`harness.stores.zoo` that defines a store
ends with ``STORE = Declared(...)``; :mod:`harness.stores.registry` finds these modules
and builds ``BUILTINS`` from them, and the tests build their tables from ``BUILTINS``. The
story a user reads is the second paragraph of the module's docstring (the first says in
one line what the module holds).

Example (``harness/stores/zoo/redis_rmw_append.py``)::

    STORE = Declared(
        name="zoo.redis-rmw-append", factory="RmwAppendStore", backend="redis",
        description="append is GET, modify, SET of one JSON value (read-modify-write race)",
        expected="lost-turn", scenario="redis-append-race.toml")
"""

from __future__ import annotations

from dataclasses import dataclass, field

from harness.stores.base import ALL_CAPABILITIES

__all__ = ["Declared"]


@dataclass(frozen=True, slots=True)
class Declared:
    """A built-in store, as its module declares it.

    ``name`` is what users type (``--store``, ``store = ...``): ``<backend>`` for a reference
    store, ``zoo.<backend>-<bug>`` for the zoo. ``factory`` is the module attribute each
    worker calls as ``factory(url, namespace=ns)``. ``backend`` is a name of
    :data:`harness.backends.NAMES`. ``description`` is the one line ``harness stores``
    prints.

    A zoo store also says how it is caught, which the test suite holds it to:
    ``expected``, the violation kind that names its bug (``also_caught_as``: kinds that may
    name it instead in some runs); ``scenario``, the shipped file under ``scenarios/`` that
    catches it; ``fault``, the fault kind without which its bug stays hidden (None: the
    concurrency of the workers alone exposes it), and ``also_exposed_by``, other faults
    that can expose it too. A reference store leaves them empty: it passes everything.
    """

    name: str
    factory: str
    backend: str
    description: str
    expected: str | None = None
    scenario: str | None = None
    fault: str | None = None
    also_caught_as: tuple[str, ...] = ()
    also_exposed_by: tuple[str, ...] = ()
    capabilities: frozenset[str] = field(default=ALL_CAPABILITIES)
