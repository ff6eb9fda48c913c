"""The PostgreSQL backend: a managed server of the run's own (or a user's, in a schema of the
run's own), what psycopg's errors mean, and (in :mod:`harness.backends.postgres_points`) the
controlled-mode points on psycopg cursors. PostgreSQL has no disk-full switch here.

A managed server is ``initdb`` + ``postgres`` from ``PATH`` or the system's install
(``/usr/lib/postgresql/<version>/bin``), on a free loopback port, ``fsync`` and
``synchronous_commit`` on (an acknowledged commit must survive a crash), trust auth on
loopback only, its data in a directory of the run's, stopped at the end and removed (its log
is kept). Run as root, the server runs as the ``postgres`` account (initdb refuses root);
when that account cannot reach the run directory (a parent not traversable by others), the
data directory is a temporary one, removed at the end as well. The server gets
``PR_SET_PDEATHSIG``: it dies with the harness.

A user's server (``[postgres] url`` or ``--pg-url``): every object of the run lives in a
schema of its own (``harness_<run id>``), made at the start and dropped at the end; the
stores get a URL whose ``search_path`` is that schema. Never a database of the user's
dropped, never a table outside the schema touched. The schema's comment says which run made
it and when (``harness run <run id> started <unix seconds>``): what a killed run leaves
behind, :func:`list_runs` lists and :func:`remove_runs` (``harness clean --pg-url``) drops;
a schema without that comment is never touched.
"""

from __future__ import annotations

import contextlib
import glob
import os
import pwd
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any
from urllib.parse import quote

from harness.backends.base import Stepper, Target
from harness.backends.redis_keys import Removed
from harness.errors import TargetError
from harness.procs import end_process, free_port, set_pdeathsig
from harness.redact import redact_url

__all__ = [
    "BACKEND",
    "PG_BLOCK_MS",
    "ExternalPostgres",
    "ManagedPostgres",
    "PostgresBackend",
    "find_pg_bin",
    "list_runs",
    "remove_runs",
    "schema_of",
    "with_search_path",
]

#: Controlled mode's ``block_ms`` on PostgreSQL: a statement waiting for a row lock that a
#: held worker has is found only by its silence, and the default second of it made the
#: battery's rollback storm rounds mostly waiting (400 ops of 4 workers: 64 s at 1000 ms, 12.5 s at
#: 30 ms, 2026-11-24); a commit slower than this is then taken for a wait, which costs a
#: replay's faithfulness, not a verdict.
PG_BLOCK_MS = 50.0


#: The role and database of a managed server.
USER = "harness"
DATABASE = "postgres"


def find_pg_bin() -> Path | None:
    """The directory holding ``initdb`` and ``postgres``: ``PATH``, else the newest of the
    system's installs (Debian's ``/usr/lib/postgresql/<n>/bin``, ``/usr/local/pgsql/bin``),
    else the binaries the ``pgserver`` package ships (``pip install 'harness[postgres-server]'``)."""
    found = shutil.which("initdb")
    if found and Path(found).with_name("postgres").exists():
        return Path(found).resolve().parent
    candidates = sorted(glob.glob("/usr/lib/postgresql/*/bin"),
                        key=lambda p: [int(x) for x in re.findall(r"\d+", p)] or [0])
    for d in [*reversed(candidates), "/usr/local/pgsql/bin", pip_pg_bin()]:
        if d and (Path(d) / "initdb").exists() and (Path(d) / "postgres").exists():
            return Path(d)
    return None


def pip_pg_bin() -> Path | None:
    """The ``bin`` directory of the PostgreSQL that the ``pgserver`` wheel ships, if it is
    installed (found without importing it: its import sets up things of its own)."""
    import importlib.util

    spec = importlib.util.find_spec("pgserver")
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations))) / "pginstall" / "bin"


def schema_of(namespace: str) -> str:
    """A namespace (``harness:<run id>``) as a schema name: lower case, ``[a-z0-9_]``."""
    return re.sub(r"[^a-z0-9_]", "_", namespace.lower())[:63]


def with_search_path(url: str, schema: str) -> str:
    """``url`` with ``options=-csearch_path=<schema>`` (libpq's way to set it per connection)."""
    sep = "&" if "?" in url else "?"
    return f"{url}{sep}options={quote(f'-csearch_path={schema}')}"


def _psycopg() -> Any:
    """psycopg if this process imported it, else None (classifying never imports it)."""
    return sys.modules.get("psycopg")


def _wait_ready(url: str, deadline_s: float, alive: Any) -> None:
    import psycopg

    end = time.monotonic() + deadline_s
    last: Exception | None = None
    while time.monotonic() < end:
        if not alive():
            raise TargetError("postgres exited while starting; see its log in the run directory")
        try:
            with psycopg.connect(url, connect_timeout=2) as conn:
                conn.execute("SELECT 1")
            return
        except psycopg.OperationalError as err:
            last = err
            time.sleep(0.05)
    raise TargetError(f"postgres did not accept connections within {deadline_s:g} s: {last}")


class ManagedPostgres(Target):
    """A PostgreSQL server of the run's own (see the module). ``kill``/``restart`` are the
    crash of the ``restart`` fault: an immediate shutdown (no checkpoint, as a crash), then a
    start on the same port and data directory (WAL recovery replays what was committed)."""

    kind = "postgres"
    managed = True

    def __init__(self, directory: Path, bindir: Path | None = None) -> None:
        self.dir = Path(directory).resolve()
        self.bindir = bindir or find_pg_bin()
        self.port = 0
        self.proc: subprocess.Popen[bytes] | None = None
        self.data: Path | None = None
        self._tmp: Path | None = None  # a data directory outside the run's, removed at stop
        self.note = f"postgres {self.bindir} (fsync on)"

    # -- who runs the server -------------------------------------------------------------------

    def _account(self) -> tuple[int, int] | None:
        """(uid, gid) to run as: None when not root; else the ``postgres`` account."""
        if os.geteuid() != 0:
            return None
        try:
            pw = pwd.getpwnam("postgres")
        except KeyError:
            raise TargetError("running as root, and there is no 'postgres' account to run the "
                              "server as (initdb refuses root)") from None
        return pw.pw_uid, pw.pw_gid

    def _as(self, account: tuple[int, int] | None) -> Any:
        def pre() -> None:
            set_pdeathsig()
            if account is not None:
                os.setgid(account[1])
                os.setuid(account[0])
        return pre

    @staticmethod
    def _reachable(path: Path, uid: int, gid: int) -> bool:
        """Whether ``uid`` can traverse every parent of ``path``."""
        for parent in path.parents:
            st = parent.stat()
            mode = st.st_mode
            if not ((st.st_uid == uid and mode & 0o100) or (st.st_gid == gid and mode & 0o010)
                    or mode & 0o001):
                return False
        return True

    # -- life ---------------------------------------------------------------------------------

    def start(self) -> None:
        if self.bindir is None:
            raise TargetError("no PostgreSQL server binaries (initdb, postgres) on PATH or in "
                              "/usr/lib/postgresql/*/bin: install PostgreSQL's server package, "
                              "or pip install 'harness[postgres-server]'")
        account = self._account()
        try:
            self.dir.mkdir(parents=True, exist_ok=True)
        except OSError as err:
            raise TargetError(f"cannot create {self.dir}: {err.strerror}") from None
        base = self.dir
        if account is not None and not self._reachable(self.dir / "x", *account):
            self._tmp = Path(tempfile.mkdtemp(prefix="harness-pg-"))
            base = self._tmp
        self.data = base / "data"
        if account is not None:
            os.chown(base, *account)
            if not self._reachable(self.bindir / "initdb", *account):
                # binaries the postgres account cannot reach (a pip package under /root):
                # a copy beside the data, removed with it
                self._tmp = self._tmp or Path(tempfile.mkdtemp(prefix="harness-pg-"))
                os.chmod(self._tmp, 0o755)
                self.bindir = _copy_install(self.bindir, self._tmp)
        init = subprocess.run([str(self.bindir / "initdb"), "-D", str(self.data), "-U", USER,
                               "--auth=trust", "-E", "UTF8", "--no-sync", "--locale=C"],
                              capture_output=True, text=True, preexec_fn=self._as(account),
                              check=False)
        if init.returncode != 0:
            raise TargetError(f"initdb failed: {init.stderr.strip()[-300:]}")
        self._account_ids = account
        for _attempt in range(5):
            self.port = self.port or free_port()
            self.url = f"postgresql://{USER}@127.0.0.1:{self.port}/{DATABASE}"
            self._spawn()
            try:
                _wait_ready(self.url, 30.0, lambda: self.proc is not None and self.proc.poll() is None)
                return
            except TargetError:
                self.kill()
                self.port = 0  # taken between probe and bind: another
        raise TargetError(f"could not start postgres: {self._last_error()}")

    def _last_error(self) -> str:
        """The server log's last FATAL or ERROR line (the log goes with a run directory a
        setup error removes, so the message carries it)."""
        try:
            lines = (self.dir / "postgres.log").read_text(errors="replace").splitlines()
        except OSError:
            return "no log"
        bad = [ln for ln in lines if "FATAL" in ln or "ERROR" in ln or "PANIC" in ln]
        return (bad or lines or ["an empty log"])[-1].strip()[:300]

    def _spawn(self) -> None:
        assert self.bindir is not None and self.data is not None
        log = open(self.dir / "postgres.log", "ab")  # noqa: SIM115 (the child owns it)
        try:
            self.proc = subprocess.Popen(
                [str(self.bindir / "postgres"), "-D", str(self.data), "-p", str(self.port),
                 # TCP on loopback only: no Unix socket, whose path (under a deep run
                 # directory) could pass the 107 bytes a socket path may have
                 "-c", "unix_socket_directories=", "-c", "listen_addresses=127.0.0.1",
                 "-c", "fsync=on",
                 "-c", "synchronous_commit=on", "-c", "full_page_writes=on",
                 "-c", "max_connections=300", "-c", "shared_buffers=32MB"],
                stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                preexec_fn=self._as(self._account_ids))
        finally:
            log.close()

    def kill(self) -> None:
        """An immediate shutdown (SIGQUIT: no checkpoint, as a crash), then SIGKILL if it
        lingers; reaped."""
        end_process(self.proc, signal.SIGQUIT, 10)

    def restart(self) -> None:
        """Crash (an immediate shutdown) and start again on the same port and data."""
        self.kill()
        self._spawn()
        _wait_ready(self.url, 60.0, lambda: self.proc is not None and self.proc.poll() is None)

    @property
    def pids(self) -> list[int]:
        return [self.proc.pid] if self.proc is not None and self.proc.poll() is None else []

    def stop(self) -> None:
        end_process(self.proc, signal.SIGINT, 15)  # fast shutdown: rolls back, disconnects
        self.proc = None
        # the data directory is tens of megabytes a run: removed; the log stays
        for d in (self.data, self._tmp):
            if d is not None:
                shutil.rmtree(d, ignore_errors=True)


class ExternalPostgres(Target):
    """A user's server: the run's objects in a schema of its own, dropped at the end."""

    kind = "postgres"

    def __init__(self, url: str, namespace: str) -> None:
        self.base = url
        self.namespace = namespace
        self.schema = schema_of(namespace)
        self.url = with_search_path(url, self.schema)
        self.note = f"{redact_url(url)} (schema {self.schema})"

    def start(self) -> None:
        import psycopg
        from psycopg import sql

        run_id = self.namespace.removeprefix("harness:")
        try:
            with psycopg.connect(self.base, connect_timeout=10, autocommit=True) as conn:
                conn.execute(f'CREATE SCHEMA IF NOT EXISTS "{self.schema}"')
                # COMMENT takes no placeholders: a quoted literal (a run id is a scenario's
                # name, which may hold a quote)
                conn.execute(sql.SQL("COMMENT ON SCHEMA {} IS {}").format(
                    sql.Identifier(self.schema),
                    sql.Literal(f"{_COMMENT} {run_id} started {int(time.time())}")))
        except psycopg.Error as err:
            raise TargetError(f"cannot reach PostgreSQL at {redact_url(self.base)}: "
                              f"{str(err).strip().splitlines()[0] if str(err).strip() else err}") from None

    def stop(self) -> None:
        import psycopg

        with contextlib.suppress(psycopg.Error), \
                psycopg.connect(self.base, connect_timeout=10, autocommit=True) as conn:
            conn.execute(f'DROP SCHEMA IF EXISTS "{self.schema}" CASCADE')


def _copy_install(bindir: Path, into: Path) -> Path:
    """Copy the install ``bindir`` belongs to into ``into``; the copy's ``bin``. The
    install is ``bindir``'s grandparent (``<pkg>/pginstall/bin``), with the shared
    libraries a wheel keeps beside it (``<pkg>.libs``, found by a relative RPATH)."""
    pkg = bindir.parent.parent
    shutil.copytree(pkg, into / pkg.name, symlinks=True, dirs_exist_ok=True)
    libs = pkg.with_name(pkg.name + ".libs")
    if libs.is_dir():
        shutil.copytree(libs, into / libs.name, symlinks=True, dirs_exist_ok=True)
    return into / pkg.name / bindir.parent.name / bindir.name


_COMMENT = "harness run"


def _schemas(conn: Any) -> list[tuple[str, str, float]]:
    """(schema, run id, started) of every schema a run made, oldest first."""
    rows = conn.execute(
        "SELECT nspname, obj_description(oid, 'pg_namespace') FROM pg_namespace "
        "WHERE obj_description(oid, 'pg_namespace') LIKE %s", (_COMMENT + " %",)).fetchall()
    out = []
    for name, comment in rows:
        m = re.fullmatch(re.escape(_COMMENT) + r" (.+) started (\d+)", comment or "", re.DOTALL)
        if m and name == schema_of(f"harness:{m[1]}"):
            out.append((str(name), m[1], float(m[2])))
    return sorted(out, key=lambda r: r[2])


def _clean(url: str, go: Any) -> Any:
    import psycopg

    try:
        with psycopg.connect(url, connect_timeout=10, autocommit=True) as conn:
            return go(conn)
    except psycopg.Error as err:
        first = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        raise TargetError(f"cannot clean PostgreSQL at {redact_url(url)}: {first}") from None


def list_runs(url: str) -> list[tuple[str, float]]:
    """The runs whose schemas are on the server at ``url``: (run id, started in unix
    seconds), oldest first."""
    return _clean(url, lambda conn: [(rid, t) for _, rid, t in _schemas(conn)])  # type: ignore[no-any-return]


def remove_runs(url: str, run_ids: tuple[str, ...] = (),
                older_than_s: float | None = None) -> list[Removed]:
    """Drop the schema of each of ``run_ids`` and of every run started more than
    ``older_than_s`` ago (``keys``: how many tables it held). A run id with no schema is
    reported with 0 and ``last_seen`` None."""

    def go(conn: Any) -> list[Removed]:
        found = {rid: (name, t) for name, rid, t in _schemas(conn)}
        chosen = list(dict.fromkeys(run_ids))
        if older_than_s is not None:
            cutoff = time.time() - older_than_s
            chosen += [rid for rid, (_, t) in found.items() if t <= cutoff and rid not in chosen]
        out = []
        for rid in chosen:
            if rid not in found:
                out.append(Removed(rid, 0, None))
                continue
            name, t = found[rid]
            row = conn.execute("SELECT count(*) FROM information_schema.tables "
                               "WHERE table_schema = %s", (name,)).fetchone()
            conn.execute(f'DROP SCHEMA IF EXISTS "{name}" CASCADE')
            out.append(Removed(rid, int(row[0]) if row else 0, t))
        return out

    return _clean(url, go)  # type: ignore[no-any-return]


class PostgresBackend:
    """``backend = "postgres"``: see the module docstring."""

    name = "postgres"

    def target(self, run_dir: Path, namespace: str, url: str = "",
               persistence: str = "always", duration_s: float = 0.0) -> Target:
        """The user's server at ``url`` (a schema of the run's), else a managed one under
        ``run_dir/target/postgres``."""
        if url:
            return ExternalPostgres(url, namespace)
        return ManagedPostgres(run_dir / "target" / "postgres")

    def definitely_failed(self, exc: BaseException) -> bool:
        # The server rolled the transaction back (a serialization failure, a deadlock, a
        # constraint, a bad statement): no effect. A lost connection may have committed.
        pg = _psycopg()
        if pg is None or not isinstance(exc, pg.Error):
            return False
        return isinstance(exc, pg.errors.TransactionRollback) or not isinstance(
            exc, pg.OperationalError | pg.InterfaceError)

    def transient(self, exc: BaseException) -> bool:
        # a connection lost or refused, a server shutting down, a serialization failure:
        # a read that raised one proves nothing about the store
        pg = _psycopg()
        return pg is not None and isinstance(exc, pg.OperationalError | pg.InterfaceError)

    def install_points(self, client: Stepper) -> None:
        from harness.backends import postgres_points

        postgres_points.install(client)

    def disk_full(self) -> None:
        return None

    def dump(self, url: str, namespace: str = "") -> dict[str, Any]:
        """Every table of the URL's schema (its ``search_path``, else ``public``), by name,
        with its rows ordered by every column."""
        import psycopg

        try:
            with psycopg.connect(url, connect_timeout=10) as conn:
                schema = conn.execute("SELECT current_schema()").fetchone()
                tables = conn.execute(
                    "SELECT table_name FROM information_schema.tables WHERE table_schema = %s "
                    "AND table_type = 'BASE TABLE' ORDER BY table_name", (schema[0] if schema else "public",)
                ).fetchall()
                out: dict[str, Any] = {}
                for (name,) in tables:
                    cur = conn.execute(f'SELECT * FROM "{name}" ORDER BY 1')
                    cols = [d.name for d in cur.description or []]
                    rows = cur.fetchall()
                    out[f"{name} ({', '.join(cols)})"] = sorted(rows, key=repr)
                return out
        except psycopg.OperationalError as err:
            raise TargetError(f"cannot reach PostgreSQL at {redact_url(url)}: {err}") from None


BACKEND = PostgresBackend()
