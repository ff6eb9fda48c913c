"""CI runs what the README says the project holds to: `.ci/run` ends with the README's test
command, character for character."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_ci_runs_the_readme_test_command() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    command = next(line for line in readme if "python -m pip install -e '.[test,thirdparty]'" in line)
    assert "ruff check ." in command and "mypy harness" in command and "python -m pytest" in command
    assert command.startswith("bash scripts/install-browser && ")  # the browser tests run for real
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").rstrip("\n").splitlines()
    assert ci[-1] == command, "the last line of .ci/run must be the README's test command"
