"""A user's Redis stays as it was: on a real redis-server the test starts, canary keys, keys
named like other runs' (glob-like names too) and the index's other entries survive runs
whose names are glob patterns, a SIGKILLed coordinator and ``harness clean``."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import redis

from harness.backends.redis import ManagedRedis
from harness.backends.redis_keys import INDEX_KEY

REPO = Path(__file__).resolve().parents[2]
SMOKE = REPO / "scenarios" / "smoke.toml"


@pytest.fixture
def server(tmp_path: Path) -> Iterator[ManagedRedis]:
    s = ManagedRedis(tmp_path / "redis", persistence="none")
    with s:
        yield s


def _harness(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "harness", *args], capture_output=True,
                          text=True, timeout=300, cwd=cwd)


def _snapshot(r: Any) -> dict[bytes, tuple[bytes, bool]]:
    """Every key: its serialized value and whether it has a TTL."""
    return {k: (r.dump(k), r.ttl(k) >= 0) for k in r.scan_iter(count=1000)}


def _plant(r: Any, names: tuple[str, ...]) -> None:
    """Canaries, and keys named like those of other runs of the next minute whose run ids
    the glob patterns of ``names`` (unescaped) would match."""
    r.set("canary", "1")
    r.set("harness:canary", "1")
    r.set("harness:runs:not-the-index", "1")
    r.zadd(INDEX_KEY, {"someone-elses-run": time.time() - 3600})
    now = time.time()
    for dt in range(-2, 90):
        stamp = time.strftime("%Y%m%d-%H%M%S", time.localtime(now + dt))
        for other in names:
            r.rpush(f"harness:{stamp}-{other}-seed1:s0", "other run's turn")


def _write_scenario(path: Path, name: str, **keys: Any) -> Path:
    text = SMOKE.read_text().replace('name = "smoke"', f"name = {name!r}".replace("'", '"'))
    assert f'name = "{name}"' in text
    for k, v in keys.items():
        text = text.replace(f"\n{k} = ", f"\n{k} = {v}\n# was: ", 1)
    path.write_text(text)
    return path


def test_glob_named_runs_touch_only_their_own_keys(server: ManagedRedis,
                                                   tmp_path: Path) -> None:
    r = redis.Redis.from_url(server.url)
    _plant(r, ("globx", "glob[x]", "xx", "aXb", "a-b", "ab"))
    before = _snapshot(r)
    for name in ("glob[x", "*", "a?b"):
        sc = _write_scenario(tmp_path / f"{len(name)}{name.strip('*?[')}.toml", name)
        ran = _harness("run", str(sc), "--store", "redis", "--ops", "30", "--seed", "1",
                       "--redis-url", server.url, "--reports", str(tmp_path / "reports"), "-q",
                       cwd=tmp_path)
        assert ran.returncode == 0, ran.stdout + ran.stderr
        assert _snapshot(r) == before, name  # nothing left behind, nothing taken
    assert len(before) > 500


def _wait(cond: Any, what: str, timeout_s: float = 60.0) -> Any:
    end = time.monotonic() + timeout_s
    while time.monotonic() < end:
        got = cond()
        if got:
            return got
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def _gone(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return True
    return False


def test_a_sigkilled_run_leaves_expiring_keys_and_clean_removes_them(
        server: ManagedRedis, tmp_path: Path) -> None:
    r = redis.Redis.from_url(server.url)
    _plant(r, ("kil", "kill*", "k?ll"))
    before = _snapshot(r)
    sc = _write_scenario(tmp_path / "kill.toml", "kill", ops=100000, duration=120)
    coord = subprocess.Popen([sys.executable, "-m", "harness", "run", str(sc), "--store",
                              "redis", "--seed", "1", "--redis-url", server.url, "--reports",
                              str(tmp_path / "reports"), "-q"], cwd=tmp_path,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                             start_new_session=True)
    try:
        run_id = _wait(lambda: next((m.decode() for m in r.zrange(INDEX_KEY, 0, -1)
                                     if m.decode().endswith("-kill-seed1")), None),
                       "the run in the index")
        ns = f"harness:{run_id}:"
        seen = _wait(lambda: [k for k in r.scan_iter(match=ns + "*") if k.startswith(b"harness:")],
                     "the run's first keys")
        # the janitor gives every key a TTL of duration + a day within a pass or two. Each
        # key is watched until it has one (or is gone): the store's rollback replaces a
        # session's turns (DEL, RPUSH), which then have none until the janitor's next pass,
        # so a moment when all of them have one at once may not come while the run goes on
        ttls: dict[bytes, int] = {}

        def each_has_had_one() -> dict[bytes, int] | None:
            for k in seen:
                t = r.ttl(k)
                if k not in ttls and (t > 86400 or t == -2):  # -2: deleted since
                    ttls[k] = t
            return ttls if len(ttls) == len(seen) else None

        _wait(each_has_had_one, "TTLs on the run's keys", 30)
        given = [t for t in ttls.values() if t != -2]
        assert given and all(86400 < t <= 86400 + 120 for t in given), ttls
    finally:
        coord.send_signal(signal.SIGKILL)
        coord.wait()
    _wait(lambda: _gone(coord.pid), "the workers to die with their coordinator")

    left = [k for k in r.scan_iter(count=1000) if k.startswith(ns.encode())]
    assert left, "a SIGKILLed run leaves keys: the test would prove nothing"
    listed = _harness("clean", "--redis-url", server.url, cwd=tmp_path)
    assert listed.returncode == 0 and run_id in listed.stdout, listed.stdout + listed.stderr
    cleaned = _harness("clean", "--redis-url", server.url, "--run", run_id, cwd=tmp_path)
    assert cleaned.returncode == 0, cleaned.stdout + cleaned.stderr
    assert f"removed {len(left)} keys of {run_id}" in cleaned.stdout
    assert _snapshot(r) == before


def test_clean_older_than_removes_only_runs_not_seen_for_that_long(
        server: ManagedRedis, tmp_path: Path) -> None:
    r = redis.Redis.from_url(server.url)
    now = time.time()
    old = ("20200101-000000-old*-seed1", "20200101-000000-glob[x-seed1")
    young = "20200101-000000-young-seed1"
    for rid, age in [(old[0], 3 * 86400), (old[1], 2 * 86400), (young, 60)]:
        r.zadd(INDEX_KEY, {rid: now - age})
        for n in range(3):
            r.set(f"harness:{rid}:k{n}", "v")
    r.set("harness:20200101-000000-oldX-seed1:k", "glob-like, not indexed")
    r.set("harness:20200101-000000-globx-seed1:k", "glob-like, not indexed")
    r.set("canary", "1")
    keep = {k: v for k, v in _snapshot(r).items()
            if not any(k.startswith(f"harness:{o}:".encode()) for o in old)}

    bad = _harness("clean", "--redis-url", server.url, "--older-than", "soon", cwd=tmp_path)
    assert bad.returncode == 2 and len(bad.stderr.splitlines()) == 1, bad.stderr
    no_url = _harness("clean", "--run", young, cwd=tmp_path)
    assert no_url.returncode == 2 and "--redis-url" in no_url.stderr, no_url.stderr

    cleaned = _harness("clean", "--redis-url", server.url, "--older-than", "1d", cwd=tmp_path)
    assert cleaned.returncode == 0, cleaned.stdout + cleaned.stderr
    assert "6 keys of 2 run(s) removed" in cleaned.stdout, cleaned.stdout
    after = _snapshot(r)
    assert {k: v for k, v in after.items() if k != INDEX_KEY.encode()} == {
        k: v for k, v in keep.items() if k != INDEX_KEY.encode()}
    assert [m.decode() for m in r.zrange(INDEX_KEY, 0, -1)] == [young]
