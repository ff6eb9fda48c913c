"""What an exception a store raised means, whatever driver it came from: the storage could
not be used (:func:`unavailable`), or a write certainly did not take effect
(:func:`definitely_failed`).

Each backend module says this of its own driver (sqlite3, redis-py); this module adds the
drivers that stores use without a backend of their own (:data:`DRIVERS`: psycopg, psycopg2,
SQLAlchemy) and the exceptions a store declares itself (``unavailable = (MyDriverError,)``
on its factory, carried in :class:`harness.stores.registry.StoreInfo`). A driver is looked
up in ``sys.modules`` only: an exception cannot come from a driver this process never
imported, so classifying one never imports anything.

A decoding or malformed-data error is none of these: a read that raised one is reported as
``unreadable``.
"""

from __future__ import annotations

import sys

from harness.backends import backends

__all__ = ["DRIVERS", "OS_ERRORS", "definitely_failed", "driver_errors", "unavailable"]

#: Connection loss and timeouts as the standard library names them, whatever the driver.
OS_ERRORS: tuple[type[BaseException], ...] = (ConnectionError, TimeoutError, OSError)

#: Module -> its exception classes that mean "the backend could not be used" (server
#: down, connection lost, pool exhausted, statement timed out): operational errors, never
#: data errors (``DataError``, ``IntegrityError``), which say something about the store.
DRIVERS: dict[str, tuple[str, ...]] = {
    "psycopg": ("OperationalError",),
    "psycopg2": ("OperationalError",),
    "sqlalchemy.exc": ("OperationalError", "DisconnectionError", "TimeoutError"),
}


def driver_errors() -> tuple[type[BaseException], ...]:
    """The exception classes of :data:`DRIVERS` whose module this process has imported."""
    found: list[type[BaseException]] = []
    for module, names in DRIVERS.items():
        mod = sys.modules.get(module)
        for name in names if mod is not None else ():
            cls = getattr(mod, name, None)
            if isinstance(cls, type) and issubclass(cls, BaseException):
                found.append(cls)
    return tuple(found)


def unavailable(exc: BaseException, declared: tuple[type[BaseException], ...] = ()) -> bool:
    """Whether ``exc`` means the storage could not be reached or was busy, so the op that
    raised it proves nothing about the store: a connection loss or timeout, what a backend
    calls transient, an operational error of a :data:`DRIVERS` driver, or one of the
    store's ``declared`` exceptions."""
    return (isinstance(exc, OS_ERRORS + declared + driver_errors())
            or any(b.transient(exc) for b in backends()))


def definitely_failed(exc: BaseException) -> bool:
    """Whether a write that raised ``exc`` certainly did not take effect: an unknown
    snapshot id (``LookupError``), or what a backend says of its driver's error."""
    return isinstance(exc, LookupError) or any(b.definitely_failed(exc) for b in backends())
