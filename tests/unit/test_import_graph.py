"""The modules of ``runner/`` import each other without a cycle.

The graph is read from the source with ``ast``, so no module is imported and no JVM starts.
Every import counts: at module level, inside functions, and under ``if TYPE_CHECKING:`` (a
cycle there is still two modules that each need the other to be understood). Edges:

- ``import a.b.c`` and ``from a.b import c`` (``c`` a module) depend on ``a.b.c``;
- ``from a.b import name`` depends on ``a.b``, whose namespace provides ``name``, and so does
  ``from a.b import c`` (Python looks ``c`` up on the package first);
- relative imports (``from . import x``, ``from ..y import z``) resolve against the package of
  the importing module (a package's ``__init__`` is in the package itself).

That importing ``a.b.c`` first runs ``a/__init__.py`` and ``a/b/__init__.py`` is not an edge:
with it, any package whose ``__init__`` re-exports from its own modules would be a cycle.
"""

from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

Graph = dict[str, set[str]]


def module_names(root: Path, package: str) -> dict[str, Path]:
    """``runner.lint.base`` -> its file, for every module of ``package`` under ``root``."""
    modules = {}
    for path in sorted((root / package).rglob("*.py")):
        parts = path.relative_to(root).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        modules[".".join(parts)] = path
    return modules


def imported_modules(name: str, path: Path, modules: set[str]) -> set[str]:
    """The modules of ``modules`` that module ``name`` (the file ``path``) imports."""
    is_package = path.name == "__init__.py"
    package = name if is_package else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                source = ".".join([*base, *([node.module] if node.module else [])])
            else:
                source = node.module or ""
            found.add(source)
            found |= {f"{source}.{alias.name}" for alias in node.names}
    return (found & modules) - {name}


def import_graph(root: Path, package: str) -> Graph:
    """Module -> the modules of ``package`` it imports."""
    modules = module_names(root, package)
    return {name: imported_modules(name, path, set(modules)) for name, path in modules.items()}


def find_cycles(graph: Graph) -> list[list[str]]:
    """One shortest cycle (``[a, b, a]``) through each group of modules that reach each other."""
    cycles = []
    reported: set[str] = set()
    for start in sorted(graph):
        path = None if start in reported else _shortest_path_back(graph, start)
        if path is not None:
            cycles.append(path)
            # the modules on a cycle with ``start``: it reaches them and they reach it
            reported |= {m for m in _reachable(graph, start) if start in _reachable(graph, m)}
    return cycles


def _reachable(graph: Graph, start: str) -> set[str]:
    seen: set[str] = set()
    todo = [start]
    while todo:
        for nxt in graph[todo.pop()]:
            if nxt not in seen:
                seen.add(nxt)
                todo.append(nxt)
    return seen


def _shortest_path_back(graph: Graph, start: str) -> list[str] | None:
    """``[start, ..., start]`` along imports (breadth first), or None when there is none."""
    came_from: dict[str, str] = {}
    frontier = [start]
    while frontier:
        following = []
        for module in frontier:
            for nxt in sorted(graph[module]):
                if nxt == start:
                    path = [module]
                    while path[-1] != start:
                        path.append(came_from[path[-1]])
                    return [*reversed(path), start]
                if nxt not in came_from:
                    came_from[nxt] = module
                    following.append(nxt)
        frontier = following
    return None


def test_runner_has_no_import_cycle() -> None:
    graph = import_graph(REPO, "runner")
    assert len(graph) > 50 and "runner.lint.base" in graph["runner.lint.rules"]
    cycles = find_cycles(graph)
    assert not cycles, "import cycles in runner/:\n" + "\n".join(" -> ".join(c) for c in cycles)


def test_the_graph_sees_function_level_relative_and_type_checking_imports(tmp_path: Path) -> None:
    package = tmp_path / "pkg"
    (package / "sub").mkdir(parents=True)
    files = {
        "__init__.py": "from pkg.a import A\n",
        "a.py": "def f():\n    from .sub import b\n",
        "sub/__init__.py": "",
        "sub/b.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from ..c import C\n",
        "c.py": "from . import a\n",
        "d.py": "import pkg.sub.b\nfrom pkg import a\n",
    }
    for name, text in files.items():
        (package / name).write_text(text)
    graph = import_graph(tmp_path, "pkg")
    assert graph == {
        "pkg": {"pkg.a"},
        "pkg.a": {"pkg.sub", "pkg.sub.b"},
        "pkg.sub": set(),
        "pkg.sub.b": {"pkg.c"},
        "pkg.c": {"pkg", "pkg.a"},
        "pkg.d": {"pkg", "pkg.a", "pkg.sub.b"},
    }
    assert find_cycles(graph) == [["pkg", "pkg.a", "pkg.sub.b", "pkg.c", "pkg"]]
