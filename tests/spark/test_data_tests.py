"""Data tests on real Delta tables: every kind passes on good rows and fails on bad ones."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from datetime import datetime
from pathlib import Path

import pytest
from pyspark.sql import SparkSession

from runner.project import load
from runner.spark.testing.data_tests import run_data_test
from runner.spark.testing.frames import typed_frame
from runner.spark.testing.seeds import load_seed
from runner.specs.seeds import read_seed
from runner.specs.values import parse_columns
from runner.suite_selection import load_suite

NOW = datetime(2024, 1, 2, 12, 0, 0)
COLUMNS = (
    "order_id STRING, customer_id STRING, status STRING, amount DECIMAL(10,2), updated_at TIMESTAMP"
)
MODEL = f"""{{{{ config(stream='orders', target='silver.dt_orders', unique_key='order_id',
            columns='{COLUMNS}') }}}}
MERGE INTO {{{{ this }}}} AS t USING {{{{ batch }}}} AS s ON t.order_id = s.order_id
WHEN NOT MATCHED THEN INSERT *;
"""
SCHEMA_YML = """models:
  dt_orders:
    freshness: {column: updated_at, max_age: 2 hours}
    columns:
      order_id: {tests: [unique, not_null]}
      status:
        tests: [{accepted_values: {values: [created, paid]}}]
      customer_id:
        tests: [{relationships: {to: "ref('customers')", field: customer_id}}]
    tests:
      - expression_is_true: {expression: "amount > 0"}
"""
GOOD = [
    ("o1", "c1", "created", "10.00", "2024-01-02 11:30:00"),
    ("o2", "c2", "paid", "5.00", "2024-01-02 11:00:00"),
]
BAD = [
    ("o1", "c1", "created", "10.00", "2024-01-02 09:00:00"),
    ("o1", "c9", "shipped", "-1.00", "2024-01-02 09:00:00"),  # duplicate key, bad status, ...
    (None, "c1", "paid", "3.00", "2024-01-02 08:00:00"),
]
KINDS = ("unique", "not_null", "accepted_values", "relationships", "expression_is_true",
         "freshness")  # fmt: skip


def make_project(project_factory, spark: SparkSession, rows: list[tuple]) -> Path:
    root = project_factory({"dt_orders": MODEL})
    (root / "models" / "schema.yml").write_text(SCHEMA_YML)
    (root / "seeds").mkdir()
    (root / "seeds" / "customers.csv").write_text("customer_id,name\nc1,Ada\nc2,Grace\n")
    (root / "seeds" / "seeds.yml").write_text(
        "seeds:\n  customers:\n    target: ref.dt_customers\n"
        "    columns: 'customer_id STRING, name STRING'\n"
    )
    project = load(root)
    seed = load_suite(project).seeds["customers"]
    load_seed(spark, project, seed, read_seed(seed))
    location = project.target.table_location("silver.dt_orders")
    typed_frame(spark, rows, parse_columns(COLUMNS)).write.format("delta").save(str(location))
    return root


def run_all(spark: SparkSession, root: Path) -> dict[str, object]:
    project = load(root)
    suite = load_suite(project)
    assert sorted(t.kind for t in suite.data_tests) == sorted(KINDS)
    return {t.kind: run_data_test(spark, project, suite.seeds, t, NOW) for t in suite.data_tests}


@pytest.fixture
def good_results(spark: SparkSession, project_factory):
    return run_all(spark, make_project(project_factory, spark, GOOD))


@pytest.fixture
def bad_results(spark: SparkSession, project_factory):
    return run_all(spark, make_project(project_factory, spark, BAD))


def test_every_kind_passes_on_good_rows(good_results) -> None:
    assert {kind: r.status for kind, r in good_results.items()} == dict.fromkeys(KINDS, "pass")


def test_every_kind_fails_on_bad_rows_with_count_and_sample(bad_results) -> None:
    assert {kind: r.status for kind, r in bad_results.items()} == dict.fromkeys(KINDS, "fail")
    assert {kind: r.message for kind, r in bad_results.items()} == dict.fromkeys(
        KINDS, "1 failing row"
    )
    relationships = bad_results["relationships"]
    assert "LEFT ANTI JOIN ref.dt_customers AS parent" in relationships.sql
    sample = relationships.details[0]
    assert [cell for column in sample.columns for cell in column._cells][:2] == ["o1", "c9"]


def test_runner_test_prints_failures_and_writes_junit(
    spark: SparkSession, cli, project_factory, tmp_path: Path
) -> None:
    root = make_project(project_factory, spark, BAD)
    junit = tmp_path / "junit.xml"

    result = cli("test", "-p", root, "--select", "test_type:data", "--junit-xml", junit)

    assert result.exit_code == 1, result.output
    assert "FAIL data accepted_values_dt_orders_status (dt_orders" in result.output
    assert "accepted_values_dt_orders_status: 1 failing row" in result.output
    assert "shipped" in result.output  # the sample row
    assert "0 passed, 6 failed, 0 errors" in result.output
    cases = ET.parse(junit).getroot().findall("testsuite/testcase")
    assert len(cases) == 6 and all(c.find("failure") is not None for c in cases)


def test_missing_target_is_an_error_with_a_hint(spark: SparkSession, cli, project_factory):
    root = project_factory({"dt_orders": MODEL.replace("silver.dt_orders", "silver.dt_never")})
    (root / "models" / "schema.yml").write_text(
        "models:\n  dt_orders:\n    columns:\n      order_id: {tests: [not_null]}\n"
    )
    result = cli("test", "-p", root)
    assert result.exit_code == 1
    assert "ERROR data not_null_dt_orders_order_id" in result.output
    assert "hint: run the model first: runner run --model dt_orders" in result.output
