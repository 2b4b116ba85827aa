"""Lint rules are independent: disabling one removes its own findings and nothing else, and
the modules of runner.lint import each other without a cycle."""

from __future__ import annotations

import ast
import shutil
from pathlib import Path

from runner.lint import all_rules, lint_project

REPO = Path(__file__).resolve().parents[2]
FIXTURES = Path(__file__).parent / "fixtures" / "lint"


def _all_fixture_models(root: Path) -> Path:
    """One project holding every rule fixture's models (prefixed with the rule code)."""
    shutil.copytree(FIXTURES / "_project", root)
    (root / "models").mkdir()
    for fixture in sorted(p for p in FIXTURES.iterdir() if p.name.startswith("DL")):
        for model in (fixture / "models").glob("*.sql"):
            text = model.read_text()
            # refs between models of one fixture keep working under the prefixed names
            for other in (fixture / "models").glob("*.sql"):
                text = text.replace(f"ref('{other.stem}')", f"ref('{fixture.name}_{other.stem}')")
                text = text.replace(f'ref("{other.stem}")', f'ref("{fixture.name}_{other.stem}")')
            (root / "models" / f"{fixture.name}_{model.name}").write_text(text)
    return root


def test_disabling_a_rule_removes_only_its_own_findings(tmp_path: Path) -> None:
    root = _all_fixture_models(tmp_path / "all")
    project_yml = root / "project.yml"
    base_yml = project_yml.read_text()
    everything = set(lint_project(root).violations)
    codes = {v.code for v in everything}
    assert {"DL001", "DL007", "DL010"} <= codes
    for rule in all_rules():
        project_yml.write_text(f"{base_yml.rstrip()}\nlint:\n  disable: [{rule.code}]\n")
        without = set(lint_project(root).violations)
        assert without == {v for v in everything if v.code != rule.code}, rule.code


def test_a_ghost_ref_fails_lint_with_the_unknown_reference_rule_disabled(tmp_path: Path) -> None:
    root = _all_fixture_models(tmp_path / "all")
    project_yml = root / "project.yml"
    project_yml.write_text(f"{project_yml.read_text().rstrip()}\nlint:\n  disable: [DL007]\n")
    found = [v for v in lint_project(root).violations if v.path.endswith("DL007_bad_ref.sql")]
    assert [v.code for v in found] == ["DL010"] and "no_such_model" in found[0].message


def _imports(path: Path, package: str) -> set[str]:
    """The runner.* modules ``path`` imports at run time (not under ``if TYPE_CHECKING``)."""
    tree = ast.parse(path.read_text())
    skipped: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skipped |= {id(n) for n in ast.walk(node)}
    found = set()
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith(package):
            found.add(node.module)
            found |= {f"{node.module}.{alias.name}" for alias in node.names}
        elif isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.startswith(package)}
    return found


def test_runner_lint_has_no_import_cycle() -> None:
    package = "runner.lint"
    modules = {
        f"{package}.{p.stem}": p
        for p in (REPO / "runner" / "lint").glob("*.py")
        if p.stem != "__init__"
    }
    graph = {name: _imports(path, package) & set(modules) for name, path in modules.items()}

    def reaches(start: str, goal: str, seen: set[str]) -> bool:
        for nxt in graph[start]:
            if nxt == goal or (nxt not in seen and reaches(nxt, goal, seen | {nxt})):
                return True
        return False

    cycles = sorted(name for name in graph if reaches(name, name, {name}))
    assert cycles == [], f"modules in an import cycle: {cycles}"
