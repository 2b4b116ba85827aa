"""`runner lint --analyze`: statements through Spark's analyzer against empty stand-ins."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from pyspark.sql import SparkSession

TARGET_COLUMNS = (
    "order_id STRING, customer_id STRING, status STRING, amount DECIMAL(10,2), updated_at TIMESTAMP"
)

MODEL = f"""{{{{ config(
    stream='orders',
    target='analyze.orders',
    unique_key='order_id',
    columns='{TARGET_COLUMNS}',
) }}}}

CREATE OR REPLACE TEMPORARY VIEW orders_latest AS
{{{{ dedupe(batch, key='order_id', order_by='updated_at DESC') }}}};

MERGE INTO {{{{ this }}}} AS t
USING orders_latest AS s
ON t.order_id = s.order_id
WHEN MATCHED AND s.op = '{{{{ var("delete_op") }}}}' THEN DELETE
WHEN MATCHED THEN UPDATE SET
  t.status = s.status,
  t.amount = s.amount,
  t.updated_at = s.updated_at
WHEN NOT MATCHED THEN INSERT (order_id, customer_id, status, amount, updated_at)
  VALUES (s.order_id, s.customer_id, s.status, s.amount, s.updated_at);
"""
BAD_COLUMN_LINE = 16  # `t.status = s.status,` in MODEL


def _line_of(sql: str, text: str) -> int:
    return next(n for n, line in enumerate(sql.split("\n"), 1) if text in line)


def test_an_unresolved_merge_column_is_one_finding_at_its_model_line(
    cli: Callable, project_factory: Callable[..., Path], spark: SparkSession
) -> None:
    """The no-JVM lint knows the column is missing (DL023), and Spark's analyzer says so too:
    one cause, one finding."""
    bad = MODEL.replace("t.status = s.status", "t.status = s.state")
    assert _line_of(bad, "s.state") == BAD_COLUMN_LINE
    project = project_factory({"orders_bad": bad})

    result = cli("lint", "--analyze", "--project-dir", project)

    assert result.exit_code == 1, result.output
    location = f"models/orders_bad.sql:{BAD_COLUMN_LINE}:"
    findings = [line for line in result.output.splitlines() if line.startswith(location)]
    assert len(findings) == 1, result.output
    assert "DL023 error" in findings[0] and "did you mean status?" in findings[0]
    assert "1 error(s)" in result.output


def test_what_only_the_analyzer_knows_is_reported_at_its_model_line(
    cli: Callable, project_factory: Callable[..., Path], spark: SparkSession
) -> None:
    # a function given an argument of a type it does not take: the no-JVM lint knows the
    # operators' types (DL035), not each function's signature (an unknown function, a string
    # plus an array and a call with too few arguments, which this test used before, are
    # DL028's, DL035's and DL038's now)
    bad = MODEL.replace("t.status = s.status", "t.status = array_join(s.status, ',')")
    assert _line_of(bad, "array_join(") == BAD_COLUMN_LINE
    project = project_factory({"orders_bad": bad})

    result = cli("lint", "--analyze", "--project-dir", project)

    assert result.exit_code == 1, result.output
    location = f"models/orders_bad.sql:{BAD_COLUMN_LINE}:"
    finding = next(line for line in result.output.splitlines() if line.startswith(location))
    assert "DL100 error" in finding
    assert "DATATYPE_MISMATCH" in finding
    assert "1 error(s)" in result.output


def test_a_clean_model_analyzes_clean(
    cli: Callable, project_factory: Callable[..., Path], spark: SparkSession
) -> None:
    project = project_factory({"orders_good": MODEL})

    result = cli("lint", "--analyze", "--project-dir", project)

    assert result.exit_code == 0, result.output
    assert "1 model(s) clean" in result.output


def test_the_example_project_analyzes_clean(
    cli: Callable, example_project: Path, spark: SparkSession
) -> None:
    result = cli("lint", "--analyze", "--format", "json", "--project-dir", example_project)

    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["findings"] == []


def test_type_error_in_a_view_a_merge_source_and_a_syntax_error_reported_once(
    cli: Callable, project_factory: Callable[..., Path], spark: SparkSession
) -> None:
    typed = MODEL.replace(
        "{{ dedupe(batch, key='order_id', order_by='updated_at DESC') }}",
        "SELECT *, amount + array(1) AS bad FROM {{ batch }}",
    )
    broken = MODEL.replace("USING orders_latest AS s", "USING orders_latest AS s s s").replace(
        "analyze.orders",
        "analyze.orders_broken",  # one writer per target
    )
    # EXPLAIN of this MERGE passes: Spark checks its source's aggregation only when it runs
    ungrouped = MODEL.replace(
        "USING orders_latest AS s",
        "USING (SELECT *, max(amount) AS top FROM orders_latest GROUP BY order_id) AS s",
    ).replace("analyze.orders", "analyze.orders_ungrouped")
    project = project_factory({"typed": typed, "broken": broken, "ungrouped": ungrouped})

    result = cli("lint", "--analyze", "--format", "json", "--project-dir", project)

    assert result.exit_code == 1, result.output
    findings = json.loads(result.output)["findings"]
    by_file = {(f["file"], f["code"]): f for f in findings}
    # The type error is the no-JVM lint's DL035 finding only, not Spark's again.
    type_error = by_file[("models/typed.sql", "DL035")]
    assert type_error["line"] == _line_of(typed, "array(1)")
    assert "DATATYPE_MISMATCH" in type_error["message"]
    assert ("models/typed.sql", "DL100") not in by_file
    # The syntax error is sqlglot's DL001 finding only, not Spark's again.
    assert ("models/broken.sql", "DL001") in by_file
    assert ("models/broken.sql", "DL100") not in by_file
    assert "MISSING_AGGREGATION" in by_file[("models/ungrouped.sql", "DL100")]["message"]


def test_stand_ins_leave_the_session_catalog_as_it_was(
    cli: Callable, project_factory: Callable[..., Path], spark: SparkSession, tmp_path: Path
) -> None:
    # A name registered before, to an external table elsewhere, is registered there again.
    elsewhere = tmp_path / "elsewhere"
    spark.sql("CREATE SCHEMA IF NOT EXISTS analyze")
    spark.sql(f"CREATE TABLE analyze.orders ({TARGET_COLUMNS}) USING DELTA LOCATION '{elsewhere}'")
    try:
        project = project_factory({"orders_good": MODEL})
        result = cli("lint", "--analyze", "--project-dir", project)

        assert result.exit_code == 0, result.output
        location = {
            row["col_name"]: row["data_type"]
            for row in spark.sql("DESCRIBE TABLE EXTENDED analyze.orders").collect()
        }["Location"]
        assert Path(location.removeprefix("file:")) == elsewhere
        assert not (project / "target").exists()  # nothing under the project's warehouse
    finally:
        spark.sql("DROP TABLE IF EXISTS analyze.orders")
