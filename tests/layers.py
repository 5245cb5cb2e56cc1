"""The import graph of the project's own code, and the layer rules it must keep
(``docs/architecture.md``; the README's "Where things live").

Every ``import`` and ``from ... import`` counts, also inside functions and under
``if TYPE_CHECKING``: an import deferred to break a circle is still a circle.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

#: The top-level packages whose modules are walked.
ROOTS = ("arena", "reports", "protocol", "sample_bots")

#: Module prefix -> layer (the longest prefix wins).
LAYER_OF = {
    "arena": "cli",  # arena/__main__.py
    "arena.cli": "cli",
    "arena.server": "server",
    "arena.bots": "bots",
    "arena.runner": "runner",
    "arena.formats": "formats",
    "arena.stats": "stats",
    "arena.store": "store",
    "arena.games": "games",
    "arena.env": "lab",
    "reports": "site",
    "protocol": "protocol",
    "sample_bots": "sample_bots",
}

#: Layer -> the layers it may import (itself always).  Acyclic: a test checks.
ALLOWED: Mapping[str, frozenset[str]] = {
    "games": frozenset(),
    "protocol": frozenset(),
    "lab": frozenset({"games", "protocol"}),
    "stats": frozenset(),
    "store": frozenset({"games"}),
    "formats": frozenset({"stats"}),
    "sample_bots": frozenset({"protocol", "games"}),
    "site": frozenset({"games", "store", "stats"}),
    "runner": frozenset({"games", "store", "stats", "formats", "protocol"}),
    "bots": frozenset({"runner", "games", "store", "stats", "formats", "protocol",
                       "sample_bots"}),
    "server": frozenset({"bots", "site", "store", "stats", "formats", "games", "protocol",
                         "sample_bots", "runner"}),
    "cli": frozenset({"server", "bots", "site", "runner", "formats", "store", "stats",
                      "games", "protocol", "sample_bots"}),
}


@dataclass(frozen=True)
class Import:
    """``importer`` imports ``imported`` at ``line``."""

    importer: str
    imported: str
    line: int


def module_name(root: Path, path: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def modules(root: Path) -> dict[str, Path]:
    """Every module of the project under ``root``, by dotted name."""
    found = {}
    for top in ROOTS:
        for path in sorted((root / top).rglob("*.py")):
            found[module_name(root, path)] = path
    return found


def imports(root: Path) -> Iterator[Import]:
    """Every import of one of the project's modules by another."""
    known = modules(root)
    for name, path in known.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    up = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join([*up, base] if base else up)
                targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in known else base
                           for a in node.names]
            for target in targets:
                while target and target not in known:
                    target = target.rpartition(".")[0]
                if target and target != name:
                    yield Import(name, target, node.lineno)


def layer(module: str) -> str | None:
    best = max((p for p in LAYER_OF if module == p or module.startswith(p + ".")),
               key=len, default=None)
    return None if best is None else LAYER_OF[best]


def broken_rules(root: Path) -> list[str]:
    """One line per import that crosses the layers the wrong way."""
    broken = []
    for imp in imports(root):
        a, b = layer(imp.importer), layer(imp.imported)
        if a is None or b is None or a == b:
            continue
        if b not in ALLOWED[a]:
            broken.append(f"{imp.importer} ({a}) imports {imp.imported} ({b}), "
                          f"line {imp.line}")
    return broken


def cycles(graph: Mapping[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one node (Tarjan), each in order."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def import_cycles(root: Path) -> list[list[str]]:
    """Groups of modules that import each other, directly or through others."""
    graph: dict[str, set[str]] = {}
    for imp in imports(root):
        graph.setdefault(imp.importer, set()).add(imp.imported)
    return cycles(graph)
