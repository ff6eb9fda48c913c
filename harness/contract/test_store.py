"""The contract suite as pytest tests: one test per case, against ``--harness-store SPEC``.

Run it on its own::

    pytest --pyargs harness.contract --harness-store mypkg.memory:make_store

or inside your own suite, with one line in a test file of yours::

    from harness.contract.test_store import test_contract  # noqa: F401

and the store given by ``--harness-store`` or by a ``harness_contract_store`` fixture of
your conftest that returns the spec. A failing case fails its test with the bug it catches
and what went wrong; a case that does not apply to the store is skipped with the reason;
the session ends with the pass/fail table by layer and case (the plugin prints it).
"""

from __future__ import annotations

import dataclasses
import json

import pytest

from harness.contract import CASES, Case, Ctx, run_case


@pytest.mark.parametrize("case", CASES, ids=[f"{c.layer}-{c.name.replace(' ', '-')}" for c in CASES])
def test_contract(case: Case, harness_contract: Ctx, request: pytest.FixtureRequest) -> None:
    out = run_case(case, harness_contract)
    # user_properties reach the controller under xdist too: the plugin's table reads them
    request.node.user_properties.append(
        ("harness_contract", json.dumps({"spec": harness_contract.spec, **dataclasses.asdict(out)})))
    if out.status == "n/a":
        pytest.skip(f"not applicable to {harness_contract.spec}: {out.detail}")
    if out.status == "fail":
        pytest.fail(f"{harness_contract.spec} fails '{case.name}' ({case.catches}):\n{out.detail}",
                    pytrace=False)
