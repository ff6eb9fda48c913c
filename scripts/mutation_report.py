"""The kill rate of the last mutation run (scripts/mutation.sh), per module of harness/checker/.

Reads mutmut 3's results (``mutants/**/*.meta``: an exit code per mutant) and prints, per
module, the mutants tested, killed (a test failed), survived (every test passed), timed out
and not covered by any test; then the surviving mutants' names (``mutmut show NAME`` shows
one). Killed counts timeouts (a mutant that hangs the checker is caught by pytest-timeout).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: mutmut 3's exit codes (mutmut/stats.py): 1 and 3 a test failed, 0 all passed.
KILLED = {1, 3, -24, 36, 37}
SURVIVED = {0}
NO_TESTS = {5, 33}


def main(argv: list[str] | None = None) -> int:
    metas = sorted((ROOT / "mutants" / "harness" / "checker").glob("*.py.meta"))
    if not metas:
        print("no results: run scripts/mutation.sh first", file=sys.stderr)
        return 2
    rows: list[tuple[str, int, int, int, int, int]] = []
    survivors: list[str] = []
    for meta in metas:
        codes = json.loads(meta.read_text())["exit_code_by_key"]
        done = {k: c for k, c in codes.items() if c is not None}
        killed = sum(c in KILLED for c in done.values())
        survived = [k for k, c in done.items() if c in SURVIVED]
        untested = sum(c in NO_TESTS for c in done.values())
        survivors += survived
        rows.append((meta.name.removesuffix(".meta"), len(codes), len(done), killed, len(survived), untested))
    print(f"{'module':<20}{'mutants':>8}{'tested':>8}{'killed':>8}{'survived':>9}{'no test':>8}{'killed %':>9}")
    tot = [0, 0, 0, 0, 0]
    for name, n, tested, dead, alive, none in rows:
        tot = [a + b for a, b in zip(tot, (n, tested, dead, alive, none), strict=True)]
        judged = dead + alive + none
        rate = f"{100 * dead / judged:.1f}" if judged else "-"
        print(f"{name:<20}{n:>8}{tested:>8}{dead:>8}{alive:>9}{none:>8}{rate:>9}")
    judged = tot[2] + tot[3] + tot[4]
    print(f"{'all':<20}{tot[0]:>8}{tot[1]:>8}{tot[2]:>8}{tot[3]:>9}{tot[4]:>8}"
          f"{100 * tot[2] / max(judged, 1):>9.1f}")
    if "--survivors" in (argv if argv is not None else sys.argv[1:]):
        print("\n".join(sorted(survivors)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
