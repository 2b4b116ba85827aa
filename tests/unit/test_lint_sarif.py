"""`runner lint --format sarif`: a SARIF 2.1.0 log that validates against the official schema
and that GitHub code scanning reads (rules with their docs, results located in the project)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import jsonschema
import pytest
from typer.testing import CliRunner

from runner.cli.app import app
from runner.lint import all_rules, lint_project
from runner.lint.docs import rule_anchor
from runner.lint.sarif import RULES_DOC, format_sarif
from tests.unit.test_lint import STAR_VIEW, raw_merge

SCHEMA = Path(__file__).parent / "fixtures" / "sarif" / "sarif-schema-2.1.0.json"
REPO = Path(__file__).resolve().parents[2]
runner = CliRunner()


def _validate(log: dict) -> None:
    schema = json.loads(SCHEMA.read_text())
    jsonschema.Draft4Validator.check_schema(schema)
    jsonschema.Draft4Validator(schema).validate(log)


def test_sarif_validates_and_locates_each_finding(project_factory: Callable[..., Path]) -> None:
    root = project_factory({"m": raw_merge() + STAR_VIEW.split("\n", 1)[1]})
    log = json.loads(format_sarif(lint_project(root)))
    _validate(log)
    run = log["runs"][0]
    rules = run["tool"]["driver"]["rules"]
    assert [r["id"] for r in rules][: len(all_rules())] == [r.code for r in all_rules()]
    results = [
        (
            r["ruleId"],
            r["level"],
            r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
            r["locations"][0]["physicalLocation"]["region"],
            rules[r["ruleIndex"]]["id"],
        )
        for r in run["results"]
    ]
    assert results == [
        ("DL003", "error", "models/m.sql", {"startLine": 3, "startColumn": 7}, "DL003"),
        ("DL009", "warning", "models/m.sql", {"startLine": 6, "startColumn": 46}, "DL009"),
    ]
    assert run["originalUriBaseIds"]["%SRCROOT%"]["uri"] == root.resolve().as_uri() + "/"


def test_sarif_rules_link_to_their_docs_entry() -> None:
    from runner.lint.sarif import _descriptor

    document = (REPO / RULES_DOC).read_text()
    headings = {
        rule_anchor(rule): rule
        for rule in all_rules()
        if f"### {rule.code} {rule.name()} ({rule.severity})" in document
    }
    assert len(headings) == len(all_rules())
    dl009 = _descriptor(next(r for r in all_rules() if r.code == "DL009"))
    assert dl009["helpUri"] == f"{RULES_DOC}#dl009-selectstarinfinalprojection-warning"
    assert dl009["defaultConfiguration"] == {"level": "warning"}
    assert dl009["name"] == "SelectStarInFinalProjection"


def test_sarif_of_a_clean_project_validates_with_no_results(example_project: Path) -> None:
    result = runner.invoke(app, ["lint", "-p", str(example_project), "--format", "sarif"])
    assert result.exit_code == 0, result.output
    log = json.loads(result.output)
    _validate(log)
    assert log["runs"][0]["results"] == []


def test_the_schema_rejects_what_code_scanning_would(project_factory: Callable[..., Path]) -> None:
    """The validation can fail: a result without its message is refused."""
    root = project_factory({"m": raw_merge()})
    log = json.loads(format_sarif(lint_project(root)))
    del log["runs"][0]["results"][0]["message"]
    with pytest.raises(jsonschema.ValidationError, match="message"):
        _validate(log)
