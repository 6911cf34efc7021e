"""The import graph of ``annotator/`` and ``api/``, read with ``ast`` (nothing is imported).

Every ``import`` and ``from ... import`` counts, whether at module level, inside a function or
under ``if TYPE_CHECKING``: a function-level import is still an arrow, only a later one.

A *unit* is what the layers speak of: ``api``, an app or package under ``annotator/``
(``annotator.qa``), or one top-level module of the project package (``annotator.errors``).
``tests/test_architecture.py`` holds the layer order and the checks; run this file to print the
numbers::

    .venv/bin/python -m tests.import_graph
"""

from __future__ import annotations

import ast
import sys
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("annotator", "api")


@dataclass(frozen=True)
class Import:
    """One arrow: ``source`` (a module) imports ``target`` (a module, or a name's module) at ``line``."""

    source: str
    target: str
    line: int
    path: str
    in_function: bool

    def __str__(self) -> str:
        where = " (in a function)" if self.in_function else ""
        return f"{self.path}:{self.line} {self.source} -> {self.target}{where}"


def module_name(path: Path, root: Path = ROOT) -> str:
    """``annotator/qa/views.py`` -> ``annotator.qa.views``; a package's ``__init__`` is the package."""
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def modules(root: Path = ROOT, packages=PACKAGES) -> dict[str, Path]:
    """Every Python module of ``packages`` under ``root`` (migrations left out: they are history,
    frozen copies of models, and never import the code that runs), by dotted name."""
    found = {}
    for package in packages:
        for path in sorted((root / package).rglob("*.py")):
            if "migrations" in path.relative_to(root).parts:
                continue
            found[module_name(path, root)] = path
    return found


def _imports_of(name: str, path: Path, known: dict[str, Path], root: Path) -> list[Import]:
    tree = ast.parse(path.read_text(), filename=str(path))
    is_package = path.name == "__init__.py"
    rel = str(path.relative_to(root))
    found: list[Import] = []

    def visit(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            inner = in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
            targets: list[str] = []
            if isinstance(child, ast.Import):
                targets = [alias.name for alias in child.names]
            elif isinstance(child, ast.ImportFrom):
                if child.level:
                    base = name.split(".") if is_package else name.split(".")[:-1]
                    base = base[: len(base) - (child.level - 1)]
                    module = ".".join(base + ([child.module] if child.module else []))
                else:
                    module = child.module or ""
                for alias in child.names:
                    # ``from annotator import jobs`` imports the module annotator.jobs; ``from
                    # annotator.qa.models import Video`` imports a name of annotator.qa.models.
                    sub = f"{module}.{alias.name}"
                    targets.append(sub if sub in known else module)
            for target in dict.fromkeys(targets):
                found.append(Import(name, target, child.lineno, rel, in_function))
            visit(child, inner)

    visit(tree, False)
    return found


def imports(root: Path = ROOT, packages=PACKAGES) -> list[Import]:
    """Every import statement's arrows in ``packages`` (targets outside the project included)."""
    known = modules(root, packages)
    found = []
    for name, path in known.items():
        found.extend(_imports_of(name, path, known, root))
    return found


def unit_of(module: str) -> str | None:
    """The unit a module belongs to, or None outside the project (django, celery, ...).

    ``annotator.jobs`` (the outbox) counts as part of ``annotator.core``, which holds its model
    ``Job`` and its reconciler task: one unit in two places, not two apps.
    """
    parts = module.split(".")
    if parts[0] == "api":
        return "api"
    if parts[0] != "annotator":
        return None
    if len(parts) == 1:
        return "annotator"
    if parts[1] == "jobs":
        return "annotator.core"
    return f"annotator.{parts[1]}"


def unit_arrows(found: list[Import]) -> dict[tuple[str, str], list[Import]]:
    """Arrows between units: ``(importer, imported) -> the import lines``, a unit's own imports left out."""
    arrows: dict[tuple[str, str], list[Import]] = defaultdict(list)
    for imp in found:
        a, b = unit_of(imp.source), unit_of(imp.target)
        if a and b and a != b:
            arrows[(a, b)].append(imp)
    return dict(arrows)


def module_arrows(found: list[Import], known: dict[str, Path]) -> dict[tuple[str, str], list[Import]]:
    """Arrows between the project's files (a target that is a package resolves to its ``__init__``)."""
    arrows: dict[tuple[str, str], list[Import]] = defaultdict(list)
    for imp in found:
        target = imp.target
        while target and target not in known:
            target = target.rpartition(".")[0]
        if target and target != imp.source:
            arrows[(imp.source, target)].append(imp)
    return dict(arrows)


def circles(edges) -> list[list[str]]:
    """The strongly connected components of more than one node (Tarjan), each sorted; every import
    circle lies inside one of them."""
    graph: dict[str, list[str]] = defaultdict(list)
    for a, b in edges:
        graph[a].append(b)
        graph.setdefault(b, [])
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = [0]

    def strongconnect(v: str) -> None:
        # Iterative, so a long chain of modules cannot overflow Python's recursion limit.
        work = [(v, iter(graph[v]))]
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        while work:
            node, children = work[-1]
            advanced = False
            for w in children:
                if w not in index:
                    index[w] = low[w] = counter[0]
                    counter[0] += 1
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(graph[w])))
                    advanced = True
                    break
                if w in on_stack:
                    low[node] = min(low[node], index[w])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    component.append(w)
                    if w == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))

    for v in list(graph):
        if v not in index:
            strongconnect(v)
    return sorted(found)


def mutual_pairs(edges) -> list[tuple[str, str]]:
    """Pairs that import each other directly (a -> b and b -> a)."""
    edges = set(edges)
    return sorted((a, b) for a, b in edges if a < b and (b, a) in edges)


def rank(layers: list[list[str]]) -> dict[str, int]:
    """``layers`` listed top first -> each unit's height (the bottom layer is 0)."""
    return {unit: len(layers) - 1 - i for i, layer in enumerate(layers) for unit in layer}


def upward(arrows, layers: list[list[str]]) -> dict[tuple[str, str], list[Import]]:
    """Arrows from a unit to one in a higher layer, or to a peer in the same layer (peers are
    independent). A unit missing from ``layers`` raises KeyError: every unit must have a place."""
    height = rank(layers)
    return {(a, b): lines for (a, b), lines in arrows.items() if height[a] <= height[b]}


def report(layers: list[list[str]], out=sys.stdout) -> dict[str, int]:
    """Print the unit graph, the upward arrows and the circles; return the counts."""
    known = modules()
    found = imports()
    arrows = unit_arrows(found)
    files = module_arrows(found, known)
    height = rank(layers)
    missing = sorted({u for pair in arrows for u in pair} - set(height))
    if missing:
        print("units with no layer:", ", ".join(missing), file=out)
        layers = [missing] + layers
    up = upward(arrows, layers)
    print(f"unit arrows: {len(arrows)} pairs, {sum(map(len, arrows.values()))} import lines", file=out)
    for (a, b), lines in sorted(arrows.items()):
        mark = "  UP" if (a, b) in up else ""
        print(f"  {a} -> {b}: {len(lines)}{mark}", file=out)
    print(f"upward arrows: {len(up)} pairs, {sum(map(len, up.values()))} import lines", file=out)
    for (a, b), lines in sorted(up.items()):
        print(f"  {a} -> {b}", file=out)
        for imp in lines:
            print(f"      {imp}", file=out)
    unit_circles = circles(arrows)
    file_circles = circles(files)
    pairs = mutual_pairs(arrows)
    print(f"unit pairs importing each other: {len(pairs)}", file=out)
    for a, b in pairs:
        print(f"  {a} <-> {b}", file=out)
    print(f"unit circles (strongly connected groups): {len(unit_circles)}", file=out)
    for c in unit_circles:
        print("  " + " ~ ".join(c), file=out)
    print(f"file circles (strongly connected groups): {len(file_circles)}", file=out)
    for c in file_circles:
        print("  " + " ~ ".join(c), file=out)
    return {
        "unit_pairs": len(arrows),
        "upward_pairs": len(up),
        "upward_lines": sum(map(len, up.values())),
        "mutual_pairs": len(pairs),
        "unit_circles": len(unit_circles),
        "file_circles": len(file_circles),
    }


if __name__ == "__main__":
    from tests.test_architecture import LAYERS

    print(report(LAYERS))
