from __future__ import annotations

import harness


def test_all_is_honest() -> None:
    assert sorted(harness.__all__) == sorted(set(harness.__all__))
    assert set(harness.__all__) == set(harness._WHERE)  # every lazily imported name is public
    for name in harness.__all__:
        assert getattr(harness, name) is not None


def test_harness_run_fixture(pytester: object) -> None:
    from pathlib import Path

    smoke = Path(__file__).resolve().parents[2] / "scenarios" / "smoke.toml"
    pytester.makepyfile(  # type: ignore[attr-defined]
        f"""
        def test_smoke(harness_run):
            res = harness_run({str(smoke)!r}, ops=15, seed=1)
            assert res.exit_code == 0 and res.result.valid is True
        """
    )
    # no langsmith plugin: its import is ~1.3 s of CPU per pytest process (pyproject.toml)
    result = pytester.runpytest_subprocess("-q", "-p", "no:langsmith_plugin")  # type: ignore[attr-defined]
    result.assert_outcomes(passed=1)
