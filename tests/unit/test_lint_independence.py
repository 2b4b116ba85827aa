"""Lint rules are independent: disabling one removes its own findings and nothing else, and no
rule family imports another. (That runner.lint's modules import each other without a cycle:
tests/unit/test_import_graph.py.)"""

from __future__ import annotations

import shutil
from pathlib import Path

from runner.lint import all_rules, lint_project
from runner.lint.base import RuleInfo
from runner.lint.rules import ANALYSIS_RULES, RULES
from tests.unit.test_import_graph import REPO, import_graph

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
            # fixtures of different rules write the same tables: one project allows that only
            # when each writer says so (runner/project.py)
            text = text.replace("{{ config(", "{{ config(shared_target=true, ")
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
        assert everything - without == {v for v in everything if v.code == rule.code}, rule.code
        # what it may bring back: the consequences it explained, on the lines of its findings
        lines = {(v.path, v.line) for v in everything if v.code == rule.code}
        for back in without - everything:
            assert back.code in rule.consequences() and (back.path, back.line) in lines, back


def test_one_cause_gives_one_finding(tmp_path: Path) -> None:
    """No line has two findings where one is the other's consequence: a stream or ref typo,
    a CDC column the stream lacks (the macro then fails to render) is reported once, by the
    rule that names the cause, and the render failure (DL010) only where nothing explains it."""
    root = _all_fixture_models(tmp_path / "all")
    found = lint_project(root).violations
    by_line: dict[tuple[str, int], set[str]] = {}
    for v in found:
        by_line.setdefault((v.path, v.line), set()).add(v.code)
    explains = {rule.code: rule.consequences() for rule in all_rules()}
    twice = {
        where: codes
        for where, codes in by_line.items()
        if any(explains[code] & codes for code in codes)
    }
    assert twice == {}
    # the causes are reported, and a render failure nothing explains still is
    assert {"DL007", "DL020", "DL021", "DL010"} <= {v.code for v in found}
    stream_typo = [v for v in found if v.path.endswith("DL007_bad_stream.sql")]
    assert [v.code for v in stream_typo] == ["DL007"]


def test_a_ghost_ref_fails_lint_with_the_unknown_reference_rule_disabled(tmp_path: Path) -> None:
    root = _all_fixture_models(tmp_path / "all")
    project_yml = root / "project.yml"
    project_yml.write_text(f"{project_yml.read_text().rstrip()}\nlint:\n  disable: [DL007]\n")
    found = [v for v in lint_project(root).violations if v.path.endswith("DL007_bad_ref.sql")]
    assert [v.code for v in found] == ["DL010"] and "no_such_model" in found[0].message
    assert found[0].line == 4  # the line that calls ref(), not the top of the file


def test_rule_families_are_independent_and_listed_only_in_the_registry() -> None:
    graph = import_graph(REPO, "runner")
    families = {name for name in graph if name.startswith("runner.lint.rules.")}
    assert {"runner.lint.rules.merge", "runner.lint.rules.templates"} <= families
    for family in sorted(families):
        assert not graph[family] & families, f"{family} imports another rule family"
    # the registry lists the rules; analyze.py builds the --analyze findings of its two rules
    importers = {name for name, imported in graph.items() if imported & families} - families
    assert importers == {"runner.lint.rules", "runner.lint.analyze"}


def test_the_registry_lists_every_rule_class_once() -> None:
    import importlib

    defined = set()
    for path in sorted((REPO / "runner" / "lint" / "rules").glob("[!_]*.py")):
        module = importlib.import_module(f"runner.lint.rules.{path.stem}")
        defined |= {
            value
            for value in vars(module).values()
            if isinstance(value, type)
            and issubclass(value, RuleInfo)
            and value.code
            and value.__module__ == module.__name__
        }
    listed = [*RULES, *ANALYSIS_RULES]
    assert len(listed) == len(set(listed)) and set(listed) == defined


def test_a_suppressed_cause_does_not_hide_the_render_failure_it_explained(
    tmp_path: Path,
) -> None:
    root = _all_fixture_models(tmp_path / "all")
    model = root / "models" / "DL007_bad_ref.sql"
    model.write_text(model.read_text().replace("(customer_id);", "(customer_id);  -- noqa: DL007"))
    found = [v for v in lint_project(root).violations if v.path.endswith("DL007_bad_ref.sql")]
    assert [(v.code, v.line) for v in found] == [("DL010", 4)]
