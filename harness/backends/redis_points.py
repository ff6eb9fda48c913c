"""Controlled-mode scheduling points on redis-py, inside one worker process.

:func:`install` patches ``redis.connection.AbstractConnection.send_packed_command``: every
command or pipeline sent through redis-py (sync) stops at a point first, labelled with the
(first) command's name, as ``trace.json`` records it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from harness.backends.base import Stepper

__all__ = ["install", "label"]

_client: Stepper | None = None


def install(client: Stepper) -> None:
    """Route this process's redis-py commands through ``client``'s points (patching once;
    a later call only changes the client). Without redis-py installed: nothing to do."""
    global _client
    _client = client
    try:
        from redis.connection import AbstractConnection
    except ImportError:
        return
    orig: Callable[..., None] = AbstractConnection.send_packed_command
    if getattr(orig, "_harness", False):
        return

    def send_packed_command(self: Any, command: Any, check_health: bool = True) -> None:
        c = _client
        if c is None or c.depth:
            return orig(self, command, check_health)
        c.point(label(command))
        c.depth += 1
        try:
            return orig(self, command, check_health)
        finally:
            c.depth -= 1

    send_packed_command._harness = True  # type: ignore[attr-defined]
    AbstractConnection.send_packed_command = send_packed_command  # type: ignore[method-assign]


def label(command: Any) -> str:
    """The point label of a packed command (or pipeline): its first command's name."""
    first = command if isinstance(command, bytes | str) else (command[0] if command else b"")
    if isinstance(first, str):
        first = first.encode()
    parts = bytes(first[:64]).split(b"\r\n", 3)
    if len(parts) >= 3 and parts[0].startswith(b"*"):
        return parts[2].decode("ascii", "replace").upper()
    return "REDIS"
