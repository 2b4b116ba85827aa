"""How the modules of ``runner/`` may import each other, read from the source:

- no cycles: no two modules each need the other;
- the pure half never imports pyspark: every module outside ``runner.spark`` and ``runner.cli``
  (the CLI composes both halves, importing ``runner.spark`` only inside the commands that start
  Spark) imports neither pyspark, py4j, delta nor ``runner.spark``;
- specs never import runners: a ``runner.specs`` module imports only other specs modules, the
  errors, YAML loading (``runner.yaml_loader``), the pure value parsers and SQL grammar of
  ``SPEC_HELPERS`` (which themselves import nothing of ``runner`` outside that list), PyYAML,
  sqlglot and the standard library. A spec is
  read and checked; what renders or runs it (project loading, templating, SQL, Spark, selection,
  the test runner) depends on it, never the other way;
- ``runner/`` never imports ``runner_devtools`` (the dev tooling: a Kafka broker and producer,
  a local cluster), nor confluent_kafka, which only the dev tooling needs.

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
import sys
from collections.abc import Callable
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
    return (all_imports(name, path) & modules) - {name}


def all_imports(name: str, path: Path) -> set[str]:
    """Every module name module ``name`` (the file ``path``) imports, inside ``runner`` or not,
    relative imports resolved (``from a import b`` gives both ``a`` and ``a.b``)."""
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
    return found


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


# -- layering ------------------------------------------------------------------------------

SPEC_HELPERS = (
    "runner.errors",
    "runner.error_text",
    "runner.yaml_loader",
    "runner.choices",
    "runner.ddl",
    "runner.secrets",
    "runner.target_address",
    "runner.storage",  # where a target keeps its tables: a local path or a URI
    "runner.expectations",
    "runner.sql",  # the SQL grammar (a sqlglot dialect): expectations parse their conditions
)
HEAVY = ("pyspark", "py4j", "delta")
SPARK_SIDE = ("runner.spark", "runner.cli")  # the Spark half, and the CLI that composes both


def _within(module: str, packages: tuple[str, ...]) -> bool:
    return any(module == p or module.startswith(f"{p}.") for p in packages)


def forbidden_imports(
    root: Path, package: str, subject: Callable[[str], bool], allowed: Callable[[str], bool]
) -> dict[str, list[str]]:
    """Each module of ``package`` that ``subject`` names -> what it imports that ``allowed``
    refuses (modules with nothing refused are left out)."""
    found = {}
    for name, path in module_names(root, package).items():
        if subject(name):
            refused = sorted(m for m in all_imports(name, path) - {name} if not allowed(m))
            if refused:
                found[name] = refused
    return found


def _stdlib_or(*others: str) -> Callable[[str], bool]:
    return lambda m: m.split(".")[0] in sys.stdlib_module_names or _within(m, others)


def test_the_pure_half_never_imports_pyspark() -> None:
    def pure(module: str) -> bool:
        return not _within(module, SPARK_SIDE)

    found = forbidden_imports(
        REPO, "runner", pure, lambda m: not _within(m, (*HEAVY, "runner.spark"))
    )
    assert pure("runner.project") and pure("runner.specs.model") and not pure("runner.spark.batch")
    assert not found, f"the pure half imports Spark: {found}"


def test_specs_import_only_specs_their_helpers_and_the_stdlib() -> None:
    allowed = _stdlib_or("runner.specs", *SPEC_HELPERS, "yaml", "sqlglot")
    specs = forbidden_imports(REPO, "runner", lambda m: _within(m, ("runner.specs",)), allowed)
    helpers = forbidden_imports(REPO, "runner", lambda m: _within(m, SPEC_HELPERS), allowed)
    assert {"runner.specs.model", "runner.specs.seeds"} <= set(module_names(REPO, "runner"))
    assert not specs, f"specs modules import more than specs and their helpers: {specs}"
    assert not helpers, f"a helper of the specs imports more than the specs may: {helpers}"


def test_runner_never_imports_the_dev_tooling() -> None:
    found = forbidden_imports(
        REPO,
        "runner",
        lambda m: True,
        lambda m: not _within(m, ("runner_devtools", "confluent_kafka")),
    )
    assert not found, f"runner/ imports dev tooling (runner_devtools, confluent_kafka): {found}"
    devtools = import_graph(REPO, "runner_devtools")
    assert "runner_devtools.local_cluster" in devtools["runner_devtools.cluster"]
    assert not find_cycles(devtools)


def test_a_refused_import_is_found_at_any_depth(tmp_path: Path) -> None:
    package = tmp_path / "pkg"
    (package / "specs").mkdir(parents=True)
    files = {
        "__init__.py": "",
        "specs/__init__.py": "",
        "specs/a.py": "import json\nfrom pkg.specs import b\n",
        "specs/b.py": "def f():\n    from ..runner import go\n",
        "runner.py": "import pyspark.sql\n",
    }
    for name, text in files.items():
        (package / name).write_text(text)
    allowed = _stdlib_or("pkg.specs")
    in_specs = forbidden_imports(tmp_path, "pkg", lambda m: _within(m, ("pkg.specs",)), allowed)
    assert in_specs == {"pkg.specs.b": ["pkg.runner", "pkg.runner.go"]}
    no_spark = forbidden_imports(tmp_path, "pkg", lambda m: True, lambda m: not _within(m, HEAVY))
    assert no_spark == {"pkg.runner": ["pyspark.sql"]}
