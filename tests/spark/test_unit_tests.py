"""Model unit tests through run_batch on scratch targets: the example's pass, a broken model's
fail with a row diff, and the user's real tables are never written; the session of its own
each runs on."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

from pyspark.sql import SparkSession

from runner.model_tests.scratch import SCHEMA_PREFIX
from runner.project import load
from runner.spark.delta.targets import ensure_target, registration
from runner.spark.session.builder import temporary_conf
from runner.spark.session.isolated import isolated_session

GUARD = "s.updated_at > t.updated_at"


def test_example_unit_tests_pass_without_touching_real_tables(
    spark: SparkSession, cli, example_project: Path, tmp_path: Path
) -> None:
    project = load(example_project)
    ensure_target(spark, project, project.models["orders_merge"])  # the user's real target
    real = project.target.table_location("silver.orders")
    junit = tmp_path / "junit.xml"

    result = cli("test", "-p", example_project, "-s", "test_type:unit", "--junit-xml", junit)

    assert result.exit_code == 0, result.output
    assert result.output.count("PASS unit ") == 4
    assert "4 passed, 0 failed, 0 errors" in result.output
    cases = ET.parse(junit).getroot().findall("testsuite/testcase")
    assert sorted(c.get("classname") for c in cases) == [
        "unit.customer_totals",
        *["unit.orders_merge"] * 3,
    ]
    history = spark.sql(f"DESCRIBE HISTORY delta.`{real}`").collect()
    assert [r["operation"] for r in history] == ["CREATE TABLE"]  # nothing was written to it
    assert not (real.parent.parent / "_runner").exists()  # nor to its event log
    # its name still points at it (another job on a shared catalog never saw a scratch table),
    # and the tests' own schemas are gone
    assert registration(spark, "silver.orders") == (str(real), "EXTERNAL")
    assert spark.sql(f"SHOW SCHEMAS LIKE '{SCHEMA_PREFIX}*'").collect() == []


def test_model_without_sequence_guard_fails_with_a_diff_showing_the_stale_row(
    spark: SparkSession, cli, example_project: Path
) -> None:
    model = example_project / "models" / "orders_merge.sql"
    source = model.read_text()
    broken = source.replace(f"WHEN MATCHED AND {GUARD} ", "WHEN MATCHED ")
    assert broken.count(GUARD) == source.count(GUARD) - 2  # both WHEN clauses lost the guard
    model.write_text(broken)

    result = cli("test", "-p", example_project, "-s", "orders_merge_ignores_a_late_older_update")

    assert result.exit_code == 1, result.output
    assert "FAIL unit orders_merge_ignores_a_late_older_update (orders_merge" in result.output
    assert "target rows: 1 changed, 0 missing, 0 unexpected" in result.output
    rows = [
        [cell.strip() for cell in line.split("│")[1:-1]]
        for line in result.output.splitlines()
        if line.startswith("│")
    ]
    assert rows == [
        ["-", "o2", "shipped", "2024-01-01 11:00:00"],  # expected: the newer event
        ["+", "o2", "paid", "2024-01-01 10:30:00"],  # actual: the late, older event won
    ]


def test_isolated_session_starts_with_the_settings_and_keeps_its_views_and_settings(
    spark: SparkSession,
) -> None:
    key = "spark.sql.shuffle.partitions"
    with temporary_conf(spark, {key: "3"}), isolated_session(spark) as session:
        assert session.conf.get(key) == "3"  # set on the session it comes from, after its start
        session.conf.set(key, "1")
        session.range(1).createOrReplaceTempView("only_in_the_isolated_session")
        assert spark.conf.get(key) == "3"
        assert not spark.catalog.tableExists("only_in_the_isolated_session")
