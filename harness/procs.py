"""Process helpers shared by everything that starts a process: die with the parent, a
free loopback port for a server the harness starts, and ending a server's process."""

from __future__ import annotations

import contextlib
import ctypes
import signal
import socket
import subprocess
import sys

__all__ = ["end_process", "free_port", "set_pdeathsig"]


def set_pdeathsig(sig: int = signal.SIGKILL) -> None:
    """Ask Linux to send ``sig`` to this process when its parent dies (no-op elsewhere).

    Linux sends it when the *thread* that forked this process exits, not the process: fork
    from the main thread, or the child dies when a helper thread ends."""
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError):
            ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, int(sig), 0, 0, 0)


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago (a server that then finds it
    taken should ask again)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def end_process(proc: subprocess.Popen[bytes] | None, sig: int, timeout_s: float) -> None:
    """Send ``sig`` to ``proc`` if it still runs, SIGKILL it if it outlives ``timeout_s``,
    and reap it (nothing to do for None or a process already reaped)."""
    if proc is None:
        return
    if proc.poll() is None:
        proc.send_signal(sig)
        try:
            proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            proc.kill()
    proc.wait()
