"""Calls go down: no module of navmcp imports, directly or through others, a module that imports it.

The graph is read from the source with `ast`, not by importing: every `import` of a navmcp module
counts, at module level, under `if TYPE_CHECKING:` or inside a function (a deferred import is
still a dependency; deferring it only hides the cycle). A package's `__init__` is a module like
any other; importing `navmcp.a.b` is an edge to `navmcp.a.b` alone."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "navmcp"

def modules(package: Path = PACKAGE) -> dict[str, Path]:
    found = {}
    for path in package.rglob("*.py"):
        parts = list(path.relative_to(package.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def import_graph(package: Path = PACKAGE) -> dict[str, dict[str, int]]:
    """module → {navmcp module it imports → the line of the first such import}."""
    known = modules(package)

    def resolve(name: str) -> str | None:
        while name and name not in known:  # `from navmcp.x import name`: name is no module of ours
            name = name.rpartition(".")[0]
        return name or None

    graph: dict[str, dict[str, int]] = {m: {} for m in known}
    for module, path in known.items():
        here = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:  # relative: from the package this module is in
                    base = ".".join(here[:len(here) - node.level + 1] + ([base] if base else []))
                names = [f"{base}.{a.name}" if f"{base}.{a.name}" in known else base for a in node.names]
            else:
                continue
            for name in names:
                target = resolve(name) if name.split(".")[0] == package.name else None
                if target is not None and target != module:
                    graph[module].setdefault(target, node.lineno)
    return graph


def cycles(graph: dict[str, dict[str, int]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def describe(graph: dict[str, dict[str, int]], component: list[str]) -> str:
    inside = set(component)
    edges = [f"  {a} -> {b} ({modules()[a].relative_to(ROOT)}:{line})"
             for a in component for b, line in sorted(graph[a].items()) if b in inside]
    return "import cycle among " + ", ".join(component) + ":\n" + "\n".join(edges)


def test_no_module_imports_its_importers():
    graph = import_graph()
    found = cycles(graph)
    assert not found, "\n\n".join(describe(graph, c) for c in found)


def test_the_graph_sees_every_kind_of_import(tmp_path):
    """A cycle made of a module-level, a TYPE_CHECKING, a function-level and a relative import is
    found, and named edge by edge."""
    package = tmp_path / "navmcp"
    (package / "sub").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text("from navmcp.sub import b\n")
    (package / "sub" / "__init__.py").write_text("")
    (package / "sub" / "b.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from . import c\n")
    (package / "sub" / "c.py").write_text("def f():\n    from navmcp.a import thing\n")
    (package / "d.py").write_text("import navmcp.a\n")
    graph = import_graph(package)
    assert graph["navmcp.sub.b"] == {"navmcp.sub.c": 3}
    assert cycles(graph) == [["navmcp.a", "navmcp.sub.b", "navmcp.sub.c"]]
