"""The flow goes one way: no import cycle among ``harness``'s modules, and the checker can be
imported without the runner (no processes, no Redis client, no psutil)."""

from __future__ import annotations

import ast
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "harness"

def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _imports(tree: ast.AST, here: str, is_package: bool) -> Iterator[tuple[str, list[str]]]:
    """(module, names) of every import in ``tree`` (function-level ones too), skipping the
    bodies of ``if TYPE_CHECKING:``; relative imports resolved against ``here``."""
    stack: list[ast.AST] = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            stack.extend(node.orelse)
            continue
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, []
        elif isinstance(node, ast.ImportFrom):
            module = node.module or ""
            if node.level:
                base = here.split(".")
                base = base[: len(base) - node.level + (1 if is_package else 0)]
                module = ".".join([*base, module] if module else base)
            yield module, [a.name for a in node.names]
        stack.extend(ast.iter_child_nodes(node))


def import_graph() -> dict[str, set[str]]:
    """``harness`` module -> the ``harness`` modules it imports. ``from P import n`` is an
    edge to ``P.n`` when that is a module, else to ``P``."""
    files = {_module_name(p): p for p in PACKAGE.rglob("*.py")}
    graph: dict[str, set[str]] = {m: set() for m in files}
    for mod, path in files.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for target, names in _imports(tree, mod, path.name == "__init__.py"):
            if not (target == "harness" or target.startswith("harness.")):
                continue
            subs = {f"{target}.{n}" for n in names if f"{target}.{n}" in files}
            if len(subs) < len(names) or not names:
                subs.add(target)
            graph[mod] |= {s for s in subs if s in files and s != mod}
    return graph


def find_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One cycle (``[a, b, ..., a]``) through each strongly connected component of more
    than one module (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    components: list[set[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(graph[w]))))
                elif w in on_stack:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = set()
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    comp.add(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    components.append(comp)
    return [_cycle_in(graph, comp) for comp in components]


def _cycle_in(graph: dict[str, set[str]], comp: set[str]) -> list[str]:
    """A shortest cycle through the component's first module (breadth-first)."""
    start = min(comp)
    came: dict[str, str] = {}
    frontier = [start]
    while frontier:
        nxt = []
        for v in frontier:
            for w in sorted(graph[v] & comp):
                if w == start:
                    path = [v]
                    while path[-1] != start:
                        path.append(came[path[-1]])
                    return [start, *reversed(path[:-1]), start]
                if w not in came:
                    came[w] = v
                    nxt.append(w)
        frontier = nxt
    raise AssertionError(f"no cycle in component {sorted(comp)}")


def _without(graph: dict[str, set[str]], edges: frozenset[tuple[str, str]]) -> dict[str, set[str]]:
    return {m: {t for t in ts if (m, t) not in edges} for m, ts in graph.items()}


def test_the_cycle_finder_finds_a_cycle_and_names_it() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a", "d"}, "d": set(), "e": {"d"}}
    assert find_cycles(graph) == [["a", "b", "c", "a"]]
    assert find_cycles(_without(graph, frozenset({("c", "a")}))) == []


def test_the_graph_sees_function_level_imports_and_skips_type_checking() -> None:
    graph = import_graph()
    # harness/cli.py imports the coordinator only inside its commands
    assert "harness.runner.coordinator" in graph["harness.cli"]
    # harness/report/json_report.py imports RunResult only under TYPE_CHECKING
    assert "harness.result" not in graph["harness.report.json_report"]


def test_no_import_cycle() -> None:
    cycles = find_cycles(import_graph())
    assert cycles == [], "import cycles: " + "; ".join(" -> ".join(c) for c in cycles)


@pytest.mark.parametrize("module", ["harness.checker", "harness.history", "harness.coverage"])
def test_the_checker_imports_without_the_runner(module: str) -> None:
    code = (f"import sys, {module}\n"
            "print(' '.join(sorted(m for m in sys.modules if m.split('.')[0] in "
            "{'multiprocess', 'psutil', 'redis'} or m.startswith('harness.runner'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=ROOT, check=True, timeout=60)
    assert out.stdout.split() == [], f"import {module} imported: {out.stdout}"
