"""A stream's later batches run on the code Spark compiled for its first ones.

Spark compiles each plan's generated Java code into classes and keeps them in a cache per JVM;
a batch of a model needs about 95 of them, more than Spark's default cache holds, so without
the runner's ``spark.sql.codegen.cache.maxEntries`` every batch compiled most of its code again.
Spark counts its compilations (``CodegenMetrics``): a second run of the same model, on the same
JVM, over new files, must find almost all of its code compiled."""

from __future__ import annotations

import json
from pathlib import Path

from pyspark.sql import SparkSession

from runner.spark.session.builder import CODEGEN_CACHE, CODEGEN_CACHE_ENTRIES, temporary_conf
from tests.conftest import land_events, write_project

MODEL = """{{ config(stream='orders', target='codegen.orders', unique_key='order_id',
    columns='order_id STRING, status STRING, amount DECIMAL(10,2), updated_at TIMESTAMP') }}
CREATE OR REPLACE TEMPORARY VIEW latest AS
{{ dedupe(batch, key='order_id', order_by='updated_at DESC') }};
MERGE INTO {{ this }} AS t USING latest AS s ON t.order_id = s.order_id
WHEN MATCHED AND s.op = 'D' THEN DELETE
WHEN MATCHED THEN UPDATE SET *
WHEN NOT MATCHED AND s.op <> 'D' THEN INSERT *;
"""
BATCHES = 3
# The suite runs Spark without generated code (runner/spark/session/small_data.py); a stream
# runs with it, as Spark does by default.
GENERATED_CODE = {
    "spark.sql.codegen.wholeStage": "true",
    "spark.sql.codegen.factoryMode": "FALLBACK",
}


def events(batch: int) -> list[str]:
    return [
        json.dumps(
            {
                "order_id": f"o{n}",
                "customer_id": "c1",
                "status": f"s{batch}",
                "amount": n,
                "updated_at": f"2024-01-01T1{batch}:00:00",
                "op": "D" if n % 7 == 0 else "U",
            }
        )  # fmt: skip
        for n in range(20)
    ]


def compilations(spark: SparkSession) -> int:
    metrics = spark.sparkContext._jvm.org.apache.spark.metrics.source.CodegenMetrics  # type: ignore[union-attr]
    return int(metrics.METRIC_COMPILATION_TIME().getCount())


def test_later_batches_reuse_the_compiled_code(spark: SparkSession, cli, tmp_path: Path) -> None:
    assert spark.conf.get(CODEGEN_CACHE) == CODEGEN_CACHE_ENTRIES
    root = write_project(tmp_path / "p", {"codegen_orders": MODEL})
    landing = root / "landing" / "orders"
    for batch in range(BATCHES):
        land_events(landing, f"a{batch}.json", events(batch))
    with temporary_conf(spark, GENERATED_CODE):
        before = compilations(spark)
        first = cli("run", "--model", "codegen_orders", "--project-dir", root)
        assert first.exit_code == 0, first.output + first.stderr
        compiled_first = compilations(spark) - before

        for batch in range(BATCHES, 2 * BATCHES):
            land_events(landing, f"b{batch}.json", events(batch))
        before = compilations(spark)
        second = cli("run", "--model", "codegen_orders", "--project-dir", root)
        assert second.exit_code == 0, second.output + second.stderr
        compiled_second = compilations(spark) - before
    assert second.output.count("rows in") == BATCHES

    assert compiled_first > 50  # the code of a model's batch: Spark's default cache is 100
    # Without the cache each of these batches compiled dozens of classes again.
    assert compiled_second < 10
