#!/usr/bin/env bash
# Mutation testing of the checker (harness/checker/) with mutmut 3, as configured in
# pyproject.toml's [tool.mutmut]; then the kill rate per module (scripts/mutation_report.py).
#
#   MUTANT_TIMEOUT_S=120 bash scripts/mutation.sh        # all ~8,700 mutants: over an hour on 2 cores
#   bash scripts/mutation.sh 'harness.checker.plain*'   # one module's (plain.py: 268, ~3 min)
#   python scripts/mutation_report.py --survivors       # the table again, and the survivors
#
# mutmut runs the tests against its mutated copy in mutants/. An editable install of
# harness would import the original instead (its import hook comes first), so mutmut runs
# in a virtualenv of its own, .mutmut-venv/, with harness's dependencies and not harness.
# mutants/ keeps the results: a second run re-tests only what changed.
set -euo pipefail
cd "$(dirname "$0")/.."
venv=.mutmut-venv
if [ ! -x "$venv/bin/mutmut" ]; then
  python -m venv "$venv"
  python - > "$venv/requirements.txt" <<'PY'
import tomllib
project = tomllib.load(open("pyproject.toml", "rb"))["project"]
# the smt extra too: tests/checker runs the solver (tests/checker/test_smt.py)
print("\n".join([*project["dependencies"], *project["optional-dependencies"]["smt"],
                 "pytest>=8", "pytest-timeout>=2.3", "pytest-xdist>=3.5", "mutmut==3.8.1"]))
PY
  "$venv/bin/pip" install -q -r "$venv/requirements.txt"
fi
# a tenth of the property tests' examples, drawn the same way every run (tests/checker/examples.py):
# each mutant's tests take seconds, and a mutant is judged alike on every run
export HARNESS_EXAMPLES="${HARNESS_EXAMPLES:-0.1}"
# a mutant whose loop never ends is killed by pytest-timeout; the tests' own 600 s makes each
# such mutant hold a core for 10 minutes (frontier.py has dozens): MUTANT_TIMEOUT_S=120 cuts that
export PYTEST_ADDOPTS="--timeout=${MUTANT_TIMEOUT_S:-600} ${PYTEST_ADDOPTS:-}"
# mutmut mutates only the lines tests/checker runs (mutate_only_covered_lines), found in one
# pass of those tests under coverage that stops at the first failure (-x) and says nothing of
# it: a test that fails only under a tracer (one that measures memory, say) silently leaves
# every line that only the tests after it reach without a mutant. That pass is made here
# first (under a minute), and a failure stops the run.
cov=$(mktemp -d)
trap 'rm -rf "$cov"' EXIT
mapfile -t args < <("$venv/bin/python" -c 'import tomllib
c = tomllib.load(open("pyproject.toml", "rb"))["tool"]["mutmut"]
print("\n".join(c["pytest_add_cli_args"] + c["pytest_add_cli_args_test_selection"]))')
if ! COVERAGE_FILE="$cov/data" "$venv/bin/python" -m coverage run -m pytest -x -q -p no:randomly \
    "${args[@]}" > "$cov/log" 2>&1; then
  tail -n 15 "$cov/log" >&2
  echo "mutation.sh: tests/checker fails under coverage (above), so mutmut would leave lines unmutated" >&2
  exit 1
fi
"$venv/bin/mutmut" run --max-children "${JOBS:-2}" "$@" || true  # survivors are not an error
"$venv/bin/python" scripts/mutation_report.py
