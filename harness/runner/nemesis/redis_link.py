"""The nemesis's own connections to a Redis target: find a worker's connections, cut them
at the worst moment (disconnect), crash an external server and wait for it (restart)."""

from __future__ import annotations

import contextlib
import socket
import time
from typing import Any
from urllib.parse import urlparse

import psutil
import redis

__all__ = ["ServerLink"]

_STALL = """local t0 = redis.call('TIME')
repeat local t = redis.call('TIME')
until (t[1] - t0[1]) * 1000000 + (t[2] - t0[2]) >= tonumber(ARGV[1])
return 1"""


class ServerLink:
    """The nemesis's own two connections to the Redis target (no retries)."""

    def __init__(self, url: str) -> None:
        self.url = url
        u = urlparse(url)
        self.port = u.port or 6379
        try:
            self.ips = {a[4][0] for a in socket.getaddrinfo(u.hostname or "127.0.0.1",
                                                            self.port)}
        except OSError:
            self.ips = set()
        self.pool: Any = None
        self.conns: list[Any] = []

    def _connections(self) -> list[Any]:
        if not self.conns:
            self.pool = redis.ConnectionPool.from_url(self.url, socket_timeout=10)
            self.conns = [self.pool.make_connection() for _ in range(2)]
            for c in self.conns:
                c.connect()  # now: a connect during the stall would wait for its end
        return self.conns

    def client_addrs(self, pid: int) -> list[str]:
        """``ip:port`` (as Redis shows it) of each connection of ``pid`` to the server."""
        try:
            conns = psutil.Process(pid).net_connections(kind="tcp")
        except psutil.Error:
            return []
        out = []
        for c in conns:
            if c.raddr and c.raddr.port == self.port and c.raddr.ip in self.ips \
                    and c.status == psutil.CONN_ESTABLISHED:
                ip = c.laddr.ip
                out.append(f"[{ip}]:{c.laddr.port}" if ":" in ip else f"{ip}:{c.laddr.port}")
        return out

    def kill_clients(self, addrs: list[str], stall: float) -> tuple[int, int]:
        """Kill the clients at ``addrs`` at the end of a ``stall`` of the server: (how
        many were killed, monotonic ns when the kill was sent)."""
        if not addrs:
            return 0, time.monotonic_ns()
        staller, killer = self._connections()
        try:
            if stall > 0:
                staller.send_command("EVAL", _STALL, 0, int(stall * 1e6))
                time.sleep(stall * 0.9)  # aim: the worker's next command is queued by now
            sent = time.monotonic_ns()
            for a in addrs:
                killer.send_command("CLIENT", "KILL", "ADDR", a, "SKIPME", "yes")
            killed = sum(int(killer.read_response()) for _ in addrs)
            if stall > 0:
                staller.read_response()
            return killed, sent
        except redis.RedisError:
            self.close()
            raise

    def shutdown_and_wait(self, wait_s: float) -> None:
        """External server only: crash it (SHUTDOWN NOSAVE), wait for it to come back."""
        _, conn = self._connections()
        try:
            conn.send_command("SHUTDOWN", "NOSAVE")
            conn.read_response()
        except redis.ConnectionError:
            pass  # the expected end of a shutdown
        self.close()
        r = redis.Redis.from_url(self.url, socket_connect_timeout=0.5, socket_timeout=0.5)
        end = time.monotonic() + wait_s
        try:
            while True:
                try:
                    if r.ping():
                        return
                except redis.RedisError:
                    if time.monotonic() > end:
                        raise
                time.sleep(0.05)  # polling a server we cannot be notified by
        finally:
            r.close()

    def close(self) -> None:
        for c in self.conns:
            with contextlib.suppress(Exception):
                c.disconnect()
        self.conns = []
        if self.pool is not None:
            self.pool.disconnect()
            self.pool = None
