"""Writer processes that start together: how the contract states a clause with several writers.

:func:`together` starts one real OS process per job (``python -m harness.contract.together``).
Each reads its order (a JSON line) on stdin, opens the store on its own (a connection of
its own, the store's classes imported anew), says ``ready`` on its stdout and waits for
``go`` on its stdin; when every process is ready the parent says ``go`` to all, so their
calls overlap instead of running one process after another. Each then runs its job and
prints the job's result as one JSON line.

A job is a function of this module's :data:`JOBS` called as ``job(store, **args)``; its
result must be JSON. A process that fails, or a run that outlasts ``timeout_s``, raises
:class:`JobError` with the process's last stderr lines; every process is reaped either way.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from harness.errors import HarnessError

__all__ = ["JOBS", "JobError", "together"]


class JobError(HarnessError):
    """A writer process of the contract failed or did not finish."""


def _append(store: Any, session: str, contents: list[str], role: str = "user") -> None:
    for c in contents:
        store.append(session, role, c)


def _append_each(store: Any, sessions: list[str], contents: list[str]) -> None:
    for s in sessions:
        _append(store, s, contents)


def _snapshots(store: Any, session: str, n: int) -> list[str]:
    return [str(store.snapshot(session)) for _ in range(n)]


def _write_and_snapshot(store: Any, session: str, before: list[str], after: list[str]) -> str:
    _append(store, session, before)
    sid = str(store.snapshot(session))
    _append(store, session, after)
    return sid


#: The jobs a writer process can run, by name.
JOBS: dict[str, Callable[..., Any]] = {
    "append": _append,
    "append_each": _append_each,
    "snapshots": _snapshots,
    "write_and_snapshot": _write_and_snapshot,
}


def together(spec: str, url: str, namespace: str, jobs: list[tuple[str, dict[str, Any]]],
             logs: Path, timeout_s: float = 120.0) -> list[Any]:
    """Run ``jobs`` (name, args) in one process each, started together; their results in
    order. Each process's stderr goes to ``logs/writer-<i>.log``."""
    logs.mkdir(parents=True, exist_ok=True)
    procs: list[subprocess.Popen[str]] = []

    def kill_all() -> None:
        for p in procs:
            p.kill()

    timer = threading.Timer(timeout_s, kill_all)
    try:
        for i, (name, args) in enumerate(jobs):
            order = json.dumps({"spec": spec, "url": url, "namespace": namespace,
                                "job": name, "args": args})
            with open(logs / f"writer-{i}.log", "w") as err:
                p = subprocess.Popen([sys.executable, "-m", "harness.contract.together"],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err,
                                     text=True)
            procs.append(p)
            assert p.stdin is not None
            p.stdin.write(order + "\n")  # on stdin: a 1 MB turn does not fit in argv
            p.stdin.flush()
        timer.start()
        for i, p in enumerate(procs):
            assert p.stdout is not None
            if p.stdout.readline().strip() != "ready":
                raise JobError(f"writer {i} ({jobs[i][0]}) did not open the store: "
                               f"{_tail(logs / f'writer-{i}.log')}")
        for p in procs:
            assert p.stdin is not None
            p.stdin.write("go\n")
            p.stdin.close()
        results = []
        for i, p in enumerate(procs):
            assert p.stdout is not None
            line = p.stdout.readline()
            if p.wait() != 0 or not line:
                raise JobError(f"writer {i} ({jobs[i][0]}) failed: {_tail(logs / f'writer-{i}.log')}")
            results.append(json.loads(line))
        return results
    finally:
        timer.cancel()
        for p in procs:
            if p.poll() is None:
                p.kill()
            p.wait()
            for f in (p.stdin, p.stdout):
                if f is not None and not f.closed:
                    f.close()


def _tail(log: Path, lines: int = 3) -> str:
    try:
        text = log.read_text(errors="replace").strip().splitlines()
    except OSError:
        text = []
    return " / ".join(text[-lines:]) or "no error output (killed, or timed out)"


def _main() -> None:
    from harness.stores import open_store, resolve

    order = json.loads(sys.stdin.readline())
    store = open_store(resolve(order["spec"]), order["url"], order["namespace"])
    try:
        print("ready", flush=True)
        if sys.stdin.readline().strip() != "go":
            raise SystemExit("no go from the contract")
        result = JOBS[order["job"]](store, **order["args"])
        print(json.dumps(result), flush=True)
    finally:
        store.close()


if __name__ == "__main__":
    _main()
