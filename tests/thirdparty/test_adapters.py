"""Each third-party adapter against real storage (a SQLite file, a redis-server of the
contract's own): the library's sequential behaviour through the adapter matches the model
(the contract's state machine), another process reads what one wrote, and a short run of
real worker processes opens and drives it. Findings under concurrency are not asserted
here; their regression tests are in ``test_findings.py``."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.contract import CASES, contract_ctx, run_case
from harness.stores.thirdparty import ADAPTERS

SCENARIOS = Path(__file__).resolve().parents[2] / "scenarios"
WANTED = ("state machine", "reopened by another process", "unknown rollback", "odd content")


#: what a library cannot do, as it says so (an error, never a silent loss): adapter ->
#: case -> the words of its failure. If the library changes, the test says so.
LIMITS = {"langchain.postgres": {  # a message is jsonb, which refuses \u0000: NUL in a turn
    "odd content": "cannot be converted to text",
    "state machine": "unsupported Unicode escape sequence"}}


@pytest.mark.parametrize("spec", sorted(ADAPTERS))
def test_the_adapter_maps_the_protocol_onto_the_library(spec: str) -> None:
    with contract_ctx(spec) as ctx:
        outcomes = [run_case(c, ctx) for c in CASES if c.name in WANTED]
    limits = LIMITS.get(spec, {})
    bad = [f"{o.name}: {o.detail}" for o in outcomes
           if o.status != "pass" and not (o.name in limits and limits[o.name] in o.detail)]
    assert len(outcomes) == len(WANTED) and not bad, bad
    # the limit shows where a case writes a NUL for sure (odd content); the state machine
    # draws its turns, and passes whenever it drew none
    assert all(o.status == "fail" for o in outcomes if o.name in limits and o.name != "state machine"), outcomes


@pytest.mark.parametrize("spec", sorted(ADAPTERS))
def test_a_short_run_of_real_workers_drives_it(spec: str, tmp_path: Path) -> None:
    from harness.runner.coordinator import run
    from harness.scenario import load_scenario

    sc = load_scenario(SCENARIOS / "smoke.toml").with_overrides(store=spec, ops=15, workers=2, seed=1)
    if spec.endswith(".postgres"):
        # their documented set-up (CREATE TABLE IF NOT EXISTS, a migrations table) races
        # when two processes open at once: on a cold start that is a finding (setup-race)
        # and the worker tries again, where at an ordinary start the run proves nothing
        sc = sc.with_overrides(cold_start=True)
    res = run(sc, reports=tmp_path)
    # pass or fail (what the library does under two writers is test_findings.py's), but every
    # worker opened the store and ran to its end, and the check finished
    assert res.verdict in ("pass", "fail"), (res.verdict, res.problems)
    assert res.workers and all(w["why"] == "done" for w in res.workers), res.workers
