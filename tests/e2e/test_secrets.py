"""A Redis password never leaves the process: against a real redis-server started with
``requirepass``, every file of every run directory (binary-safe) and every line printed is
searched for it, after free, controlled, failing and shrunk runs."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import pytest
import zstandard

from harness.backends.redis import ManagedRedis
from harness.history import read_history

REPO = Path(__file__).resolve().parents[2]
SCENARIOS = REPO / "scenarios"
# The mark searched for: inside the password in every spelling (raw and percent-encoded).
MARK = "Zq9SECRETmark"
PASSWORD = f"pw@{MARK}/x"

# A user's store that quotes its URL in every error, as careless code does.
QUOTING_STORE = '''
class QuotingStore:
    backend = "redis"
    capabilities = frozenset({"append", "read"})

    def __init__(self, url):
        self.url = url

    def append(self, session, role, content):
        raise RuntimeError(f"cannot append via {self.url}")

    def history(self, session):
        return []

    def close(self):
        pass
'''


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ManagedRedis]:
    s = ManagedRedis(tmp_path_factory.mktemp("pwredis"), persistence="none", password=PASSWORD)
    with s:
        yield s


class Shell:
    """Runs ``harness`` as a user would and keeps every byte it printed."""

    def __init__(self, cwd: Path, pythonpath: Path) -> None:
        self.cwd, self.printed = cwd, []
        self.env = {**os.environ, "PYTHONPATH": f"{pythonpath}{os.pathsep}{REPO}"}
        self.env.pop("HARNESS_REDIS_URL", None)

    def __call__(self, *args: str, env: dict[str, str] | None = None,
                 shell: bool = False) -> subprocess.CompletedProcess[str]:
        cmd: str | list[str] = args[0] if shell else [sys.executable, "-m", "harness", *args]
        r = subprocess.run(cmd, shell=shell, capture_output=True, text=True, timeout=300,
                           cwd=self.cwd, env={**self.env, **(env or {})})
        self.printed += [r.stdout, r.stderr]
        return r


def _plain(p: Path) -> bytes:
    """A file's bytes as a reader sees them: history logs at rest are zstd-compressed."""
    data = p.read_bytes()
    if p.suffix == ".zst":
        with zstandard.ZstdDecompressor().stream_reader(data, read_across_frames=True) as r:
            return data + r.read()
    return data


def _files_with(root: Path, mark: bytes) -> list[Path]:
    return [p for p in root.rglob("*") if p.is_file() and mark in _plain(p)]


def test_a_password_never_leaves_the_process(server: ManagedRedis, tmp_path: Path) -> None:
    url = server.url
    assert quote(PASSWORD, safe="") in url and MARK in url
    work, private = tmp_path / "work", tmp_path / "private"  # private: the user's own files
    work.mkdir()
    private.mkdir()
    (private / "quoting_store.py").write_text(QUOTING_STORE)
    sh = Shell(work, private)
    reports = work / "reports"

    # free mode, the URL on the command line: passes, says where, how to reproduce
    free = sh("run", str(SCENARIOS / "smoke.toml"), "--store", "redis", "--ops", "20",
              "--seed", "1", "--redis-url", url, "--reports", str(reports), "-q")
    assert free.returncode == 0, free.stdout + free.stderr
    assert "redis://:***@127.0.0.1" in free.stdout
    reproduce = next(ln for ln in free.stdout.splitlines() if ln.startswith("reproduce: "))
    assert "${HARNESS_REDIS_URL:?" in reproduce

    # the reproduce line works once the shell has the URL; and refuses to run without it
    again = sh(reproduce.removeprefix("reproduce: ").replace(
        "harness run", f"{sys.executable} -m harness run", 1) + f" --reports {reports}",
        shell=True, env={"HARNESS_REDIS_URL": url})
    assert again.returncode == 0, again.stdout + again.stderr
    unset = sh(reproduce.removeprefix("reproduce: ").replace(
        "harness run", f"{sys.executable} -m harness run", 1), shell=True)
    assert unset.returncode != 0 and "HARNESS_REDIS_URL" in unset.stderr

    # the URL in a scenario's [redis] url, a store whose every error quotes it
    user_scenario = private / "quoting.toml"
    user_scenario.write_text(f'name = "quoting"\nstore = "quoting_store:QuotingStore"\n'
                             f'workers = 2\nops = 10\nsessions = 1\nduration = 30\n'
                             f'[weights]\nappend = 1\nread = 1\n[redis]\nurl = "{url}"\n')
    quoting = sh("run", str(user_scenario), "--seed", "2", "--reports", str(reports), "-q")
    assert quoting.returncode in (0, 1), quoting.stdout + quoting.stderr
    quoting_dir = next(reports.glob("*-quoting-seed2"))
    history = "".join(repr(e.error) for e in read_history(quoting_dir))
    assert "cannot append via redis://:***@127.0.0.1" in history
    # the copied scenario holds *** and says so when run without the URL
    copied = sh("run", str(quoting_dir / "scenario.toml"), "--reports", str(tmp_path / "x"))
    assert copied.returncode == 2 and "redacted" in copied.stderr, copied.stderr
    via_env = sh("run", str(quoting_dir / "scenario.toml"), "--ops", "2",
                 "--reports", str(reports), "-q", env={"HARNESS_REDIS_URL": url})
    assert via_env.returncode in (0, 1), via_env.stdout + via_env.stderr

    # controlled mode (trace.json), then shrink with the URL from the environment
    ctl = sh("run", str(SCENARIOS / "redis-append-race.toml"), "--controlled", "--seed", "1",
             "--schedules", "8", "--ops", "20", "--workers", "3", "--redis-url", url,
             "--reports", str(reports), "-q")
    assert ctl.returncode == 1, ctl.stdout + ctl.stderr
    ctl_dir = max(reports.glob("*-redis-append-race-*"), key=lambda p: p.stat().st_mtime)
    assert (ctl_dir / "trace.json").is_file()
    shrunk = sh("shrink", str(ctl_dir), "--out", str(work / "repro"), "--max-runs", "15",
                "--budget", "60", env={"HARNESS_REDIS_URL": url})
    assert shrunk.returncode == 0, shrunk.stdout + shrunk.stderr
    assert (work / "repro" / "repro.toml").is_file()

    # failing connections: a wrong password, a closed port
    wrong = url.replace(quote(PASSWORD, safe=""), quote(f"bad{MARK}", safe=""))
    for bad in (wrong, url.replace(f":{server.port}/", ":1/")):
        r = sh("run", str(SCENARIOS / "smoke.toml"), "--store", "redis", "--redis-url", bad,
               "--reports", str(tmp_path / "x"))
        assert r.returncode == 2, r.stdout + r.stderr
        assert "cannot reach Redis at redis://:***@127.0.0.1" in r.stderr

    assert sum(len(p) for p in sh.printed) > 0
    leaks = [p for p in sh.printed if MARK in p or quote(MARK) in p]
    assert not leaks, leaks[0]
    assert not _files_with(work, MARK.encode()), _files_with(work, MARK.encode())
    assert len(list(work.rglob("*"))) > 50  # the search covered real run directories
