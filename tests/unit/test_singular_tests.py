"""Singular data tests (tests/*.sql): loaded, resolved and selected without a JVM."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from runner.artifacts import build_manifest
from runner.cli.app import app
from runner.errors import TemplateError
from runner.project import load
from runner.suite_selection import load_suite, select_tests
from tests.conftest import REPO, write_project

MODEL = """{{ config(stream='orders', target='silver.orders', unique_key='order_id',
    columns='order_id STRING, amount DECIMAL(10,2)') }}
MERGE INTO {{ this }} AS t USING {{ batch }} AS s ON t.order_id = s.order_id
WHEN NOT MATCHED THEN INSERT *;
"""


def project_with(tmp_path: Path, tests: dict[str, str]) -> Path:
    root = write_project(
        tmp_path / "p", {"orders": MODEL, "other": MODEL.replace("silver.orders", "silver.other")}
    )
    (root / "tests").mkdir()
    for name, sql in tests.items():
        (root / "tests" / name).write_text(sql)
    return root


def test_ref_renders_the_target_and_records_the_model(tmp_path: Path) -> None:
    root = project_with(
        tmp_path,
        {"assert_positive.sql": "SELECT * FROM {{ ref('orders') }} WHERE amount < 0;\n"},
    )
    (test,) = load_suite(load(root)).singular_tests
    assert test.name == "assert_positive"
    assert test.sql == "SELECT * FROM silver.orders WHERE amount < 0"
    assert test.models == ("orders",)


def test_a_target_named_directly_counts_as_a_ref(tmp_path: Path) -> None:
    root = project_with(
        tmp_path,
        {
            "both.sql": "SELECT o.order_id FROM silver.orders o JOIN {{ ref('other') }} x USING "
            "(order_id) WHERE '{{ target.name }}' = 'local'"
        },
    )
    (test,) = load_suite(load(root)).singular_tests
    assert test.models == ("orders", "other")
    assert "'local' = 'local'" in test.sql


def test_only_sql_files_at_the_top_of_tests_are_read(tmp_path: Path) -> None:
    root = project_with(tmp_path, {"conftest.py": "import pytest\n", "a.sql": "SELECT 1"})
    (root / "tests" / "unit").mkdir()
    (root / "tests" / "unit" / "b.sql").write_text("SELECT 2")
    assert [t.name for t in load_suite(load(root)).singular_tests] == ["a"]


def test_an_unknown_ref_names_the_file_and_line(tmp_path: Path) -> None:
    root = project_with(tmp_path, {"bad.sql": "SELECT 1\nFROM {{ ref('nope') }}"})
    with pytest.raises(TemplateError, match=r"ref\('nope'\): no model or seed") as caught:
        load_suite(load(root))
    assert caught.value.file == root / "tests" / "bad.sql" and caught.value.line == 2


@pytest.mark.parametrize(
    ("selector", "expected"),
    [
        ("orders", {"reads_orders", "reads_both"}),
        ("other", {"reads_both"}),
        ("test_type:singular", {"reads_orders", "reads_both", "reads_nothing"}),
        ("test_type:data", {"reads_orders", "reads_both", "reads_nothing"}),
        ("test_type:generic", set()),
        ("reads_nothing", {"reads_nothing"}),
        ("orders,test_type:unit", set()),
    ],
)
def test_selected_with_the_models_they_read(
    tmp_path: Path, selector: str, expected: set[str]
) -> None:
    root = project_with(
        tmp_path,
        {
            "reads_orders.sql": "SELECT * FROM {{ ref('orders') }} WHERE amount < 0",
            "reads_both.sql": "SELECT * FROM {{ ref('orders') }}, {{ ref('other') }}",
            "reads_nothing.sql": "SELECT 1 WHERE FALSE",
        },
    )
    project = load(root)
    chosen = select_tests(project, load_suite(project), [selector])
    assert {t.name for t in chosen.singular_tests} == expected


def test_the_example_has_one_in_ls_and_the_manifest() -> None:
    result = CliRunner().invoke(
        app, ["ls", "-p", str(REPO), "-s", "test_type:singular", "-o", "json"]
    )
    assert result.exit_code == 0, result.output
    (listed,) = [json.loads(line) for line in result.stdout.splitlines()]
    assert listed["name"] == "assert_no_negative_totals"
    assert listed["path"] == "tests/assert_no_negative_totals.sql"
    manifest = build_manifest(load(REPO))
    entry = manifest["tests"]["assert_no_negative_totals"]
    assert entry["depends_on"] == {"models": ["customer_totals"], "seeds": []}
    assert "FROM gold.customer_totals" in entry["sql"]
    kinds = {n["id"]: n["kind"] for n in manifest["lineage"]["nodes"]}
    assert kinds["test:assert_no_negative_totals"] == "test"
