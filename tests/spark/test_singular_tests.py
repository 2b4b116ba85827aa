"""Singular data tests (tests/*.sql) on real Delta tables, through `runner test`."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from pyspark.sql import SparkSession

from runner.project import load
from runner.run_results import shape_problems
from runner.spark.testing.frames import typed_frame
from runner.specs.values import parse_columns

COLUMNS = "order_id STRING, amount DECIMAL(10,2)"
MODEL = f"""{{{{ config(stream='orders', target='silver.sg_orders', unique_key='order_id',
            columns='{COLUMNS}') }}}}
MERGE INTO {{{{ this }}}} AS t USING {{{{ batch }}}} AS s ON t.order_id = s.order_id
WHEN NOT MATCHED THEN INSERT *;
"""


def test_a_failing_singular_test_fails_runner_test_with_its_rows(
    spark: SparkSession, project_factory: Callable[..., Path], cli: Callable
) -> None:
    root = project_factory({"sg_orders": MODEL})
    (root / "tests").mkdir()
    (root / "tests" / "assert_no_negative_amounts.sql").write_text(
        "SELECT order_id, amount FROM {{ ref('sg_orders') }} WHERE amount < 0\n"
    )
    (root / "tests" / "assert_some_orders.sql").write_text(
        "SELECT 'no orders' AS problem FROM silver.sg_orders HAVING count(*) = 0\n"
    )
    location = load(root).target.table_location("silver.sg_orders")
    rows = [("o1", "10.00"), ("o2", "-3.50"), ("o3", "-1.00")]
    typed_frame(spark, rows, parse_columns(COLUMNS)).write.format("delta").save(str(location))

    junit = root / "target" / "junit.xml"
    result = cli("test", "-p", root, "-s", "test_type:singular", "--junit-xml", junit)
    assert result.exit_code == 1, result.output
    assert "FAIL singular assert_no_negative_amounts" in result.stdout
    assert "2 failing rows" in result.stdout
    assert "o2" in result.stdout and "-3.50" in result.stdout  # the failing rows, shown
    assert "PASS singular assert_some_orders" in result.stdout
    assert "1 passed, 1 failed" in result.stdout
    assert 'classname="singular.sg_orders"' in junit.read_text()
    results = json.loads((root / "target" / "run_results.json").read_text())
    assert shape_problems(results) == []
    found = {r["unique_id"]: (r["status"], r["failures"]) for r in results["results"]}
    assert found == {
        "test.test_project.assert_no_negative_amounts": ("fail", 2),
        "test.test_project.assert_some_orders": ("pass", 0),
    }

    spark.sql("DELETE FROM silver.sg_orders WHERE amount < 0")
    result = cli("test", "-p", root, "-s", "sg_orders,test_type:singular")
    assert result.exit_code == 0, result.output
    assert "2 passed, 0 failed" in result.stdout

    # the tests' counts run as one query; a test Spark rejects fails that query, and then each
    # test runs alone: the error names its file, the others still pass
    (root / "tests" / "assert_known_columns.sql").write_text(
        "SELECT no_such_column FROM {{ ref('sg_orders') }} -- ends in a comment\n"
    )
    result = cli("test", "-p", root, "-s", "test_type:singular")
    assert result.exit_code == 1, result.output
    assert "ERROR singular assert_known_columns" in result.stdout
    assert "assert_known_columns.sql:1: Spark rejected the test query" in result.stdout
    assert "2 passed, 0 failed, 1 error" in result.stdout
