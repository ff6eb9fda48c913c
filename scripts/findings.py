"""What harness finds in the third-party stores: every shipped scenario of an adapter's
backend (the chaos one included) over several seeds, as a user runs it (a real ``harness
run`` process each), one JSON line per run, and a summary table.

    python scripts/findings.py [--store langgraph.sqlite ...] [--seeds 1 2 3] [--out findings.jsonl]

Each line: store, library version, scenario, seed, exit code, verdict, violation counts, the
first violation's sentence, the reproduce command. The README's findings table is built
from these lines; triage (a library bug, an adapter artifact, a limit of the protocol or
the checker) is a person's.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from harness.scenario import load_scenario
from harness.stores.registry import resolve
from harness.stores.thirdparty import ADAPTERS

SCENARIOS = Path(__file__).resolve().parents[1] / "scenarios"
#: the distribution whose version a store's findings are about
LIBRARY = {"langgraph.sqlite": "langgraph-checkpoint-sqlite", "langchain.sql": "langchain-community",
           "langchain.redis": "langchain-community", "llamaindex.sql": "llama-index-core",
           "llamaindex.redis": "llama-index-storage-chat-store-redis",
           "openai-agents.sqlite": "openai-agents",
           "langgraph.postgres": "langgraph-checkpoint-postgres",
           "langchain.postgres": "langchain-postgres"}


def scenarios_for(backend: str) -> list[Path]:
    """The shipped scenarios whose store (or ``backend``) is on ``backend``."""
    out = []
    for p in sorted(SCENARIOS.glob("*.toml")):
        sc = load_scenario(p)
        if (sc.backend or resolve(sc.store).backend) == backend:
            out.append(p)
    return out


def one(store: str, scenario: Path, seed: int, reports: Path) -> dict[str, Any]:
    out = reports / f"{store}-{scenario.stem}-{seed}"
    r = subprocess.run([sys.executable, "-m", "harness", "run", str(scenario), "--store", store,
                        "--seed", str(seed), "-q", "--reports", str(out)],
                       capture_output=True, text=True, timeout=600)
    row: dict[str, Any] = {"store": store, "scenario": scenario.name, "seed": seed,
                           "exit": r.returncode}
    dirs = [d for d in out.iterdir() if (d / "report.json").is_file()] if out.exists() else []
    if not dirs:
        row["verdict"] = "error"
        row["detail"] = r.stderr.strip()[-300:]
        return row
    rep = json.loads((dirs[0] / "report.json").read_text())
    check = rep.get("check") or {}
    first = (check.get("violations") or [{}])[0]
    row.update(verdict=rep.get("verdict"), counts=check.get("counts"), kind=first.get("kind"),
               first=first.get("message", ""), problems=rep.get("problems", [])[:2],
               reproduce=rep.get("reproduce"), run_dir=str(dirs[0]))
    return row


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--store", action="append", default=[], choices=sorted(ADAPTERS))
    ap.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3])
    ap.add_argument("--scenario", action="append", default=[], help="only these scenario files")
    ap.add_argument("--out", type=Path, default=Path("findings.jsonl"))
    ap.add_argument("--reports", type=Path, default=None,
                    help="keep the run directories here (default: a temporary directory)")
    a = ap.parse_args()
    stores = a.store or sorted(ADAPTERS)
    with tempfile.TemporaryDirectory(prefix="harness-findings-") as tmp, a.out.open("a") as f:
        d = a.reports or Path(tmp)
        for store in stores:
            info = resolve(store)
            version = importlib.metadata.version(LIBRARY[store])
            chosen = [SCENARIOS / s for s in a.scenario] or scenarios_for(info.backend or "sqlite")
            for sc in chosen:
                for seed in a.seeds:
                    row = {"library": f"{LIBRARY[store]} {version}", **one(store, sc, seed, Path(d))}
                    f.write(json.dumps(row) + "\n")
                    f.flush()
                    print(f"{store:22} {sc.stem:24} seed {seed}: {row.get('verdict')} "
                          f"{row.get('counts') or ''} {str(row.get('first') or row.get('detail') or '')[:140]}",
                          flush=True)


if __name__ == "__main__":
    main()
