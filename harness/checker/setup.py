"""``setup-race``: a worker that could not open the store on a cold start.

With ``cold_start = true`` every worker opens the fresh store at the same instant, so the
store's set-up code (CREATE TABLE, PRAGMA journal_mode, migrations, index creation) runs in
several processes at once; each open that fails is a ``fail`` ``open`` event with value
``{"cold_start": true, "attempt": n}`` and the error. A correct store opens in every
process; each such event is one violation (the worker tries again, so the run goes on).
Shared by the batch and the streaming checker, so both give the same verdict.
"""

from __future__ import annotations

from harness.history import Event

__all__ = ["KIND", "setup_race"]

KIND = "setup-race"


def setup_race(e: Event) -> tuple[tuple[str, int], str] | None:
    """(key, sentence) when ``e`` is a failed open of a cold start, else None."""
    if e.f != "open" or e.type != "fail" or not isinstance(e.value, dict) \
            or e.value.get("cold_start") is not True:
        return None
    attempt = e.value.get("attempt")
    return ("open", e.index), (
        f"Process {e.process} could not open the store on a cold start (attempt {attempt}; "
        f"every worker opened the fresh store at the same instant): {e.error or 'no error given'}. "
        "Set-up code (CREATE TABLE, PRAGMA, migrations) must work when several processes run it "
        "at once.")
