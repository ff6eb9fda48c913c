"""Resolving a store spec: built-in short names, or ``package.module:factory``.

``BUILTINS`` is derived from the store modules themselves: each built-in store's module
declares it (:class:`harness.stores.declare.Declared`), so adding a store is adding its
module. The factory is imported and called **inside each worker** as
``factory(url, namespace=ns)`` (``namespace`` only if the factory accepts it). A user's
factory (or the class it is) may carry ``backend = "sqlite" | "redis"``,
``capabilities = {...}`` and ``unavailable = (SomeDriverError, ...)`` attributes (the
exceptions that mean "backend unavailable": see :mod:`harness.backends.meaning`), and so may a
built-in store's factory.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from functools import cache
from types import ModuleType
from typing import Any

from harness.backends import NAMES
from harness.errors import StoreSpecError
from harness.stores.base import ALL_CAPABILITIES, OPS, MemoryStore
from harness.stores.declare import Declared

__all__ = ["PACKAGES", "StoreInfo", "builtins", "open_store", "resolve"]  # and BUILTINS, lazily


@dataclass(frozen=True, slots=True)
class StoreInfo:
    """What the harness knows of a store before any worker opens it. For a built-in store
    the fields after ``capabilities`` come from its :class:`~harness.stores.declare.Declared`
    record (``story``: the second paragraph of its module's docstring)."""

    spec: str
    target: str  # "package.module:attr"
    backend: str | None  # a name of harness.backends.NAMES, or None when the spec does not say
    description: str = ""
    capabilities: frozenset[str] = field(default=ALL_CAPABILITIES)
    expected: str | None = None  # for the zoo: the violation kind that catches it
    story: str = ""
    scenario: str | None = None  # for the zoo: the shipped scenario file that catches it
    fault: str | None = None  # for the zoo: the fault that exposes it (None: concurrency)
    also_caught_as: tuple[str, ...] = ()
    also_exposed_by: tuple[str, ...] = ()
    #: exceptions that mean "backend unavailable" (the factory's ``unavailable``): an op
    #: raising one proves nothing about the store (``info``), never an ``unreadable`` read
    unavailable: tuple[type[BaseException], ...] = ()
    #: the factory's ``atomic_writes`` (default True): each write is one transaction, so a
    #: driver error that says it did not commit means the op had no effect (``fail``);
    #: False for a store whose op spans several, whose every write error is ``info``
    atomic_writes: bool = True


#: The packages whose modules may declare a built-in store (``STORE = Declared(...)``).
PACKAGES = ("harness.stores", "harness.stores.zoo")


@cache
def builtins() -> dict[str, StoreInfo]:
    """Every built-in store by name, from the modules of :data:`PACKAGES` that declare one
    (importing them on the first call): reference stores first, then the zoo stores that
    concurrency alone exposes, then those a fault exposes; by backend, then name."""
    found: dict[str, StoreInfo] = {}
    for package in PACKAGES:
        for m in pkgutil.iter_modules(importlib.import_module(package).__path__):
            if m.ispkg or m.name.startswith("_"):
                continue
            module = importlib.import_module(f"{package}.{m.name}")
            declared = getattr(module, "STORE", None)
            if not isinstance(declared, Declared):
                continue
            if declared.name in found:
                raise StoreSpecError(f"built-in store {declared.name!r} is declared twice "
                                     f"({found[declared.name].target}, {module.__name__})")
            found[declared.name] = _info(module, declared)
    return dict(sorted(found.items(), key=lambda kv: _order(kv[1])))


def _info(module: ModuleType, d: Declared) -> StoreInfo:
    if d.backend not in NAMES or not callable(getattr(module, d.factory, None)):
        raise StoreSpecError(f"{module.__name__}: STORE names backend {d.backend!r} and "
                             f"factory {d.factory!r}; one of them does not exist")
    paragraphs = (module.__doc__ or "").strip().split("\n\n")
    story = " ".join(paragraphs[1].split()) if len(paragraphs) > 1 else ""
    return StoreInfo(d.name, f"{module.__name__}:{d.factory}", d.backend, d.description,
                     d.capabilities, d.expected, story, d.scenario, d.fault,
                     d.also_caught_as, d.also_exposed_by,
                     _unavailable(getattr(module, d.factory), d.name),
                     _atomic(getattr(module, d.factory), d.name))


def _unavailable(factory: object, spec: str) -> tuple[type[BaseException], ...]:
    """The factory's ``unavailable`` attribute as a tuple of exception classes (one class
    alone is accepted too); StoreSpecError for anything else."""
    declared = getattr(factory, "unavailable", ())
    if isinstance(declared, type):
        declared = (declared,)
    if not isinstance(declared, tuple | list | frozenset | set) or not all(
            isinstance(c, type) and issubclass(c, BaseException) for c in declared):
        raise StoreSpecError(f"store {spec!r}: unavailable must be a tuple of exception "
                             f"classes, got {declared!r:.80}")
    return tuple(declared)


def _atomic(factory: object, spec: str) -> bool:
    """The factory's ``atomic_writes`` attribute (True when absent); StoreSpecError if it
    is not a bool."""
    value = getattr(factory, "atomic_writes", True)
    if not isinstance(value, bool):
        raise StoreSpecError(f"store {spec!r}: atomic_writes must be True or False, got {value!r:.80}")
    return value


def _order(info: StoreInfo) -> tuple[int, int, str]:
    group = 0 if info.expected is None else 1 if info.fault is None else 2
    return group, NAMES.index(info.backend or ""), info.spec


def __getattr__(name: str) -> dict[str, StoreInfo]:
    # ``BUILTINS`` is built on first use: importing this module (as the result record
    # does) must not import every store and its driver.
    if name == "BUILTINS":
        return builtins()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _load(target: str, spec: str) -> Callable[..., Any]:
    mod_name, _, attr = target.partition(":")
    if not mod_name or not attr:
        raise StoreSpecError(
            f"unknown store {spec!r}: not a built-in (see `harness stores`) "
            "and not of the form package.module:factory"
        )
    if mod_name.startswith("."):
        raise StoreSpecError(f"store {spec!r}: {mod_name!r} is a relative module name; "
                             "give the full package.module:factory")
    try:
        mod = importlib.import_module(mod_name)
    except ImportError as err:
        raise StoreSpecError(f"store {spec!r}: cannot import {mod_name!r} ({err})") from err
    except SystemExit as err:  # else the harness would exit with the module's code, silently
        raise StoreSpecError(f"store {spec!r}: importing {mod_name!r} called "
                             f"sys.exit({err.code!r})") from None
    except Exception as err:  # a syntax error, or the module raised at import
        raise StoreSpecError(f"store {spec!r}: importing {mod_name!r} failed: "
                             f"{type(err).__name__}: {err}") from None
    try:
        factory = getattr(mod, attr)
    except AttributeError:
        raise StoreSpecError(f"store {spec!r}: module {mod_name!r} has no {attr!r}") from None
    if not callable(factory):
        raise StoreSpecError(f"store {spec!r}: {target} is not callable")
    return factory  # type: ignore[no-any-return]


def _adapter(spec: str, adapter: Any) -> StoreInfo:
    """A third-party adapter by its short name; StoreSpecError naming the extra to install
    when its library is not there."""
    import importlib.util

    try:
        found = importlib.util.find_spec(adapter.needs) is not None
    except ImportError:  # a parent package is missing
        found = False
    if not found:
        raise StoreSpecError(f"store {spec!r} needs its library ({adapter.needs}): "
                             f"pip install 'harness[{adapter.extra}]'")
    return replace(resolve(adapter.target), spec=spec)


def resolve(spec: str) -> StoreInfo:
    """A spec -> its StoreInfo, importing a user's factory to read its attributes.

    Raises StoreSpecError (exit 2) for an unknown name or an unimportable factory."""
    known = builtins()
    if spec in known:
        return known[spec]
    from harness.stores.thirdparty import ADAPTERS

    if spec in ADAPTERS:
        return _adapter(spec, ADAPTERS[spec])
    factory = _load(spec, spec)
    caps = getattr(factory, "capabilities", None)
    if caps is not None and (isinstance(caps, str) or not isinstance(caps, Iterable)
                             or not all(isinstance(c, str) for c in caps)):
        raise StoreSpecError(f"store {spec!r}: capabilities must be a set of operation "
                             f"names, got {caps!r}")
    capabilities = frozenset(caps) & ALL_CAPABILITIES if caps is not None else ALL_CAPABILITIES
    if inspect.isclass(factory) and caps is None:
        capabilities = frozenset(op for op, m in OPS.items() if hasattr(factory, m))
    if "append" not in capabilities:
        raise StoreSpecError(f"store {spec!r}: it cannot append, so there is nothing to test")
    doc = (inspect.getdoc(factory) or "").strip().splitlines()
    return StoreInfo(spec, spec, getattr(factory, "backend", None), doc[0] if doc else "",
                     capabilities, unavailable=_unavailable(factory, spec),
                     atomic_writes=_atomic(factory, spec))


def open_store(info: StoreInfo, url: str, namespace: str) -> MemoryStore:
    """Call the store's factory (in the calling process) with the target URL.

    StoreSpecError if what it returns is not a store: None (a factory that forgot its
    ``return``), or an object without the method of one of the store's capabilities. A
    worker logs that as its ``open`` event, so the run ends as a setup error (exit 2)
    rather than as every op of the plan failing."""
    factory = _load(info.target, info.spec)
    try:
        params = inspect.signature(factory).parameters
        takes_ns = "namespace" in params or any(
            p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()
        )
    except (TypeError, ValueError):
        takes_ns = False
    store = factory(url, namespace=namespace) if takes_ns else factory(url)
    if store is None:
        raise StoreSpecError(f"store {info.spec!r}: its factory returned None, not a store")
    missing = sorted(OPS[op] for op in info.capabilities if not callable(getattr(store, OPS[op], None)))
    if missing:
        raise StoreSpecError(f"store {info.spec!r}: its factory returned a "
                             f"{type(store).__name__}, which has no {', '.join(missing)}")
    return store  # type: ignore[no-any-return]
