"""The linter around the rules: discovery, settings, noqa, report formats, CLI exit codes."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import CliRunner

from runner.cli.app import app
from runner.errors import ConfigError
from runner.lint import ERROR, WARNING, LintResult, Rule, Violation, all_rules, lint_project
from runner.lint.docs import END, START, rules_markdown
from runner.lint.engine import noqa_lines, representative_batches
from runner.lint.report import format_github, format_json, format_text
from runner.project import load

REPO = Path(__file__).resolve().parents[2]
runner = CliRunner()

DEDUPED = (
    "{{ config(stream='orders', target='silver.orders', unique_key='order_id') }}\n"
    "CREATE OR REPLACE TEMPORARY VIEW latest AS\n"
    "{{ dedupe(batch, key='order_id', order_by='updated_at DESC') }};\n"
)
RAW_MERGE = (
    "{{ config(stream='orders', target='silver.orders', unique_key='order_id') }}\n"
    "MERGE INTO {{ this }} AS t\n"
    "USING {{ batch }} AS s{suffix}\n"
    "ON t.order_id = s.order_id\n"
    "WHEN MATCHED THEN UPDATE SET *;\n"
)


def raw_merge(suffix: str = "", config: str = "") -> str:
    """A MERGE straight from the batch view (DL003); ``suffix`` ends its USING line."""
    return RAW_MERGE.replace("{suffix}", suffix).replace("'order_id')", f"'order_id'{config})")


STAR_VIEW = (
    "{{ config(stream='orders', target='silver.orders') }}\n"
    "CREATE OR REPLACE TEMPORARY VIEW v AS SELECT * FROM {{ batch }};\n"
)


def test_rules_are_discovered_with_unique_codes_and_documentation() -> None:
    rules = all_rules()
    codes = [rule.code for rule in rules]
    assert codes == sorted(set(codes))
    assert {f"DL{n:03d}" for n in range(1, 10)} <= set(codes)
    for rule in rules:
        assert issubclass(rule, Rule)
        assert rule.severity in (ERROR, WARNING)
        assert rule.summary(), f"{rule.__name__} needs a docstring"
    severities = {rule.code: rule.severity for rule in rules}
    assert severities["DL008"] == ERROR and severities["DL009"] == WARNING
    assert severities["DL001"] == ERROR


def test_docs_rule_list_is_in_sync_with_the_rules() -> None:
    document = (REPO / "docs" / "compile-and-lint.md").read_text()
    block = document.split(START, 1)[1].split(END, 1)[0]
    assert block.strip() == rules_markdown().strip(), (
        "regenerate with: python -m runner.lint.docs docs/compile-and-lint.md"
    )


def test_example_project_is_clean(example_project: Path) -> None:
    result = lint_project(example_project)
    assert result.violations == ()
    assert result.models == len(list((example_project / "models").glob("*.sql")))
    assert result.statements > 0


def test_maintenance_batch_is_linted(project_factory: Callable[..., Path]) -> None:
    model = (
        "{{ config(stream='orders', target='silver.orders', optimize_every=4, "
        "zorder_by=['nope']) }}\n"
        "SELECT order_id FROM {{ batch }};\n"
    )
    root = project_factory({"m": model})
    assert representative_batches(load(root).model("m")) == [0, 3]
    found = [(v.code, v.line) for v in lint_project(root).violations]
    assert found == [("DL005", 1)]


def test_findings_are_reported_once_across_batches(project_factory: Callable[..., Path]) -> None:
    root = project_factory({"m": raw_merge(config=", optimize_every=2")})
    assert [v.code for v in lint_project(root).violations] == ["DL003"]


@pytest.mark.parametrize(
    ("suffix", "expected"),
    [
        ("", ["DL003"]),
        ("  -- noqa", []),
        ("  -- noqa: DL003", []),
        ("  -- noqa: dl009, DL003", []),
        ("  -- noqa: DL009", ["DL003"]),
    ],
)
def test_noqa_suppresses_findings_on_its_line(
    project_factory: Callable[..., Path], suffix: str, expected: list[str]
) -> None:
    root = project_factory({"m": raw_merge(suffix)})
    assert [v.code for v in lint_project(root).violations] == expected


def test_noqa_lines_parses_codes() -> None:
    source = "a\nb -- noqa\nc -- noqa: DL001,DL002\nd"
    assert noqa_lines(source) == {2: None, 3: frozenset({"DL001", "DL002"})}


def test_severity_override_and_disable_from_project_yml(
    project_factory: Callable[..., Path],
) -> None:
    root = project_factory(
        {"m": STAR_VIEW},
        project_vars="lint:\n  severity:\n    DL009: error\n",
    )
    # project_vars is spliced in after vars: (line 4 on), so 'lint:' is a top-level key
    (violation,) = lint_project(root).violations
    assert (violation.code, violation.severity) == ("DL009", ERROR)
    root = project_factory({"m": STAR_VIEW}, project_vars="lint:\n  disable: [DL009]\n")
    assert lint_project(root).violations == ()


@pytest.mark.parametrize(
    ("lint_yaml", "message", "line"),
    [
        ("lint:\n  disable: [DL999]\n", "unknown rule code DL999", 5),
        ("lint:\n  severity:\n    DL009: fatal\n", "must be one of error, warning", 6),
        ("lint:\n  severity:\n    009: error\n", "is not a rule code", 6),
        ("lint:\n  ignore: [DL009]\n", "lint: unknown key 'ignore'", 5),
    ],
)
def test_bad_lint_settings_are_config_errors_with_a_line(
    project_factory: Callable[..., Path], lint_yaml: str, message: str, line: int
) -> None:
    root = project_factory({"m": STAR_VIEW}, project_vars=lint_yaml)
    with pytest.raises(ConfigError) as info:
        lint_project(root)
    assert message in str(info.value)
    assert info.value.file == root / "project.yml"
    assert info.value.line == line
    result = runner.invoke(app, ["lint", "-p", str(root)])
    assert result.exit_code == 2


def test_report_formats(project_factory: Callable[..., Path]) -> None:
    root = project_factory({"m": raw_merge() + STAR_VIEW.split("\n", 1)[1]})
    result = lint_project(root)
    assert [(v.code, v.line, v.col) for v in result.violations] == [
        ("DL003", 3, 7),
        ("DL009", 6, 46),
    ]
    text = format_text(result, cwd=root).splitlines()
    assert text[0].startswith("models/m.sql:3:7: DL003 error: MERGE source (the raw micro-batch")
    assert text[-1].startswith("1 error(s), 1 warning(s) in 1 model(s)")
    github = format_github(result, cwd=root).splitlines()
    assert github[0].startswith("::error file=models/m.sql,line=3,col=7,title=DL003::MERGE source")
    assert github[1].startswith("::warning file=models/m.sql,line=6,col=46,title=DL009::SELECT *")
    data = json.loads(format_json(result, cwd=root))
    assert data["summary"]["errors"] == 1 and data["summary"]["warnings"] == 1
    assert data["findings"][0] | {"message": ""} == {
        "file": "models/m.sql",
        "line": 3,
        "col": 7,
        "code": "DL003",
        "rule": "MergeSourceNotDeduplicated",
        "severity": "error",
        "message": "",
    }


def test_github_annotations_escape_newlines_percent_and_property_separators() -> None:
    violation = Violation("models/a,b.sql", 3, 1, "DL010", "100% broken\nsecond line")
    result = LintResult(Path("/p"), (violation,), models=1, statements=0, seconds=0.0)
    assert format_github(result, cwd=Path("/p")) == (
        "::error file=models/a%2Cb.sql,line=3,col=1,title=DL010::100%25 broken%0Asecond line\n"
    )


def test_cli_exit_codes(project_factory: Callable[..., Path], example_project: Path) -> None:
    clean = runner.invoke(app, ["lint", "-p", str(example_project)])
    assert clean.exit_code == 0, clean.output
    assert "2 model(s) clean" in clean.output or "model(s) clean" in clean.output

    warnings_only = project_factory({"m": STAR_VIEW})
    result = runner.invoke(app, ["lint", "-p", str(warnings_only)])
    assert result.exit_code == 0 and "DL009 warning" in result.output
    result = runner.invoke(app, ["lint", "-p", str(warnings_only), "--strict"])
    assert result.exit_code == 1

    errors = project_factory({"m": raw_merge()})
    result = runner.invoke(app, ["lint", "-p", str(errors), "--format", "github"])
    assert result.exit_code == 1
    assert result.output.startswith("::error file=")

    result = runner.invoke(app, ["lint", "-p", str(errors), "--format", "xml"])
    assert result.exit_code == 2


def test_cli_select_lints_only_the_selected_models(project_factory: Callable[..., Path]) -> None:
    root = project_factory(
        {"bad": raw_merge(), "ok": DEDUPED.replace("silver.orders", "silver.ok")}
    )
    result = runner.invoke(app, ["lint", "-p", str(root), "--select", "ok", "-f", "json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["summary"]["models"] == 1
    assert runner.invoke(app, ["lint", "-p", str(root), "-s", "nope"]).exit_code == 2


def test_a_broken_model_does_not_hide_the_others(project_factory: Callable[..., Path]) -> None:
    broken = "{{ config(stream='orders', target='silver.b') }}\n{% if %}\n"
    root = project_factory({"a_broken": broken, "b_raw": raw_merge()})
    found = [(v.path, v.code) for v in lint_project(root).violations]
    assert found == [("models/a_broken.sql", "DL010"), ("models/b_raw.sql", "DL003")]


def test_compile_and_lint_do_not_import_pyspark(example_project: Path) -> None:
    code = (
        "import sys\n"
        "from typer.testing import CliRunner\n"
        "from runner.cli.app import app\n"
        f"root = {str(example_project)!r}\n"
        "for args in (['compile', '-p', root], ['lint', '-p', root]):\n"
        "    result = CliRunner().invoke(app, args)\n"
        "    assert result.exit_code == 0, result.output\n"
        "heavy = ('pyspark', 'py4j', 'delta')\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in heavy))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


@pytest.mark.parametrize(
    ("defect", "expected"),
    [
        ("ON t.order_id = s.order_id\n", "Expected ON <condition>"),  # MERGE with no ON
        ("MERGE INTO", "Expected INTO"),  # MERGE with no INTO
        ("THEN UPDATE", "Expected THEN"),  # WHEN MATCHED ... UPDATE with no THEN
    ],
)
def test_merge_defects_spark_rejects_are_syntax_errors_not_crashes(
    project_factory: Callable[..., Path], defect: str, expected: str
) -> None:
    broken = {
        "Expected ON <condition>": raw_merge().replace(defect, ""),
        "Expected INTO": raw_merge().replace(defect, "MERGE"),
        "Expected THEN": raw_merge().replace(defect, "UPDATE"),
    }[expected]
    root = project_factory(
        {"m": broken, "other": raw_merge().replace("silver.orders", "silver.other")}
    )
    result = runner.invoke(app, ["lint", "-p", str(root), "-f", "json"])
    assert result.exit_code == 1, result.output
    findings = json.loads(result.output)["findings"]
    syntax = [f for f in findings if f["code"] == "DL001"]
    assert len(syntax) == 1 and expected in syntax[0]["message"], findings
    assert syntax[0]["file"].endswith("m.sql")
    assert any(f["file"].endswith("other.sql") for f in findings)  # still reported


def test_a_rule_that_crashes_is_a_finding_not_a_traceback(
    project_factory: Callable[..., Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    from runner.lint import rules

    def explode(self: object, context: object) -> list[Violation]:
        raise ZeroDivisionError("boom")

    monkeypatch.setattr(rules.SelectStarInFinalProjection, "check", explode)
    root = project_factory(
        {"a": raw_merge(), "b": raw_merge().replace("silver.orders", "silver.b")}
    )
    found = [(v.path, v.code, v.severity) for v in lint_project(root).violations]
    assert ("models/a.sql", "DL000", ERROR) in found and ("models/b.sql", "DL000", ERROR) in found
    assert ("models/a.sql", "DL003", ERROR) in found  # the other rules still report


def test_compile_select_is_not_stopped_by_another_models_jinja_error(
    project_factory: Callable[..., Path],
) -> None:
    broken = "{{ config(stream='orders', target='silver.b') }}\n{% if %}\n"
    root = project_factory({"a_broken": broken, "good": raw_merge()})
    done = runner.invoke(app, ["compile", "-p", str(root), "--select", "good"])
    assert done.exit_code == 0, done.output
    assert list((root / "target").rglob("*good*")), "good was not compiled"
    # without --select, or selecting the broken model, compile still fails with its line
    for args in ([], ["--select", "a_broken"]):
        failed = runner.invoke(app, ["compile", "-p", str(root), *args])
        assert failed.exit_code != 0 and "a_broken.sql" in failed.output, failed.output
