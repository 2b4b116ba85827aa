"""Several models in one Spark application, and --full-refresh."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

from pyspark.sql import SparkSession

from tests.conftest import write_project
from tests.spark.conftest import rows_of
from tests.spark.test_orders_pipeline import land_sample, t

RATE_STREAM = (
    "streams:\n  ticks:\n    format: rate\n    options:\n      rowsPerSecond: 5\n"
    "    trigger: {processing_time: 1 second}\n"
)
GOOD = """{{ config(stream='ticks', target='app.good_ticks', columns='value BIGINT') }}
INSERT INTO {{ this }} SELECT value FROM {{ batch }};
"""
BAD = """{{ config(stream='ticks', target='app.bad_ticks', columns='value BIGINT') }}

INSERT INTO {{ this }} SELECT no_such_column FROM {{ batch }};
"""


def test_one_failing_query_stops_the_others_and_is_named(
    spark: SparkSession, cli, tmp_path: Path
) -> None:
    project = write_project(
        tmp_path / "two", {"good_ticks": GOOD, "bad_ticks": BAD}, streams=RATE_STREAM
    )

    result = cli("stream", "--select", "good_ticks bad_ticks", "-p", project)

    assert result.exit_code == 1
    assert f"{project / 'models' / 'bad_ticks.sql'}:3: Spark rejected batch[0] (INSERT)" in (
        result.stderr
    )
    assert "no_such_column" in result.stderr
    assert spark.streams.active == []  # the good query was stopped too


def test_full_refresh_rebuilds_target_from_the_start(
    spark: SparkSession, cli, example_project: Path
) -> None:
    land_sample(example_project, ["001.json", "002.json"])  # two batches: a delete among them
    first = cli("run", "-m", "orders_merge", "-p", example_project)
    assert first.exit_code == 0, first.output
    assert "batch 1" in first.output
    built = rows_of(spark, "silver.orders", "order_id")
    assert built == [  # o1's duplicate collapsed, o2 updated, o3 deleted in batch 1
        ("o1", "c1", "paid", Decimal("10.00"), t("10:05")),
        ("o2", "c2", "shipped", Decimal("25.50"), t("11:00")),
        ("o4", "c3", "created", Decimal("99.90"), t("11:01")),
    ]
    spark.sql("DELETE FROM silver.orders WHERE order_id = 'o1'")  # damage the target

    refreshed = cli("run", "-m", "orders_merge", "--full-refresh", "-p", example_project)

    assert refreshed.exit_code == 0, refreshed.output
    checkpoint = example_project / "target" / "local" / "checkpoints" / "orders_merge"
    assert f"full refresh: removed checkpoint {checkpoint}" in refreshed.output
    assert "full refresh: removed table silver.orders at" in refreshed.output
    assert "orders_merge batch 1:" in refreshed.output  # every file read again
    assert rows_of(spark, "silver.orders", "order_id") == built
    history = spark.sql("DESCRIBE HISTORY silver.orders").collect()
    assert min(r["version"] for r in history) == 0 and not any(
        r["operation"] == "DELETE" for r in history
    )
