"""A worker started while the run goes on (a killed slot's replacement, a reader) waits for
a backend that is down for a moment, as a supervisor retrying it would; a worker at the
run's start does not (a wrong URL is a setup error, said at once); an error that is not
the backend's being down is never retried."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from harness.backends.postgres import ManagedPostgres
from harness.runner.worker import WorkerSpec, _open
from harness.stores import BUILTINS, resolve


def _spec(url: str, patient: bool, store: str = "postgres") -> WorkerSpec:
    return WorkerSpec(slot=0, process=5, ops=(), store=BUILTINS[store], url=url,
                      namespace="t", log_path="", deadline_ns=0, patient_open=patient)


def test_a_replacement_waits_for_a_restarting_server(tmp_path: Path) -> None:
    server = ManagedPostgres(tmp_path / "pg")
    with server:
        url = server.url
        server.kill()  # down, as in the middle of the restart fault
        with pytest.raises(Exception, match=r"Connection refused|connection failed"):
            _open(_spec(url, patient=False))  # at the start: said at once
        # the server comes back while the replacement waits
        back = threading.Thread(target=server.restart)
        back.start()
        try:
            store = _open(_spec(url, patient=True))
        finally:
            back.join()
        store.append("s", "user", "after the restart")
        assert store.history("s") == [("user", "after the restart")]
        store.close()


def test_an_error_that_is_not_the_backend_down_is_not_retried(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "badstore_for_patience.py").write_text(
        "calls = []\n"
        "def make(url, namespace='x'):\n"
        "    calls.append(1)\n"
        "    raise ValueError('bad configuration')\n"
        "make.backend = 'sqlite'\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    info = resolve("badstore_for_patience:make")
    spec = WorkerSpec(slot=0, process=5, ops=(), store=info, url="sqlite:///x", namespace="t",
                      log_path="", deadline_ns=0, patient_open=True)
    with pytest.raises(ValueError, match="bad configuration"):
        _open(spec)
    import badstore_for_patience  # type: ignore[import-not-found]

    assert len(badstore_for_patience.calls) == 1
