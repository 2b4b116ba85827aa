"""A stream's later batches run on the code Spark compiled for its first ones.

Spark compiles each plan's generated Java code into classes and keeps them in a cache per JVM;
a batch of a model needs about 95 of them, more than Spark's default cache holds, so without
the runner's ``spark.sql.codegen.cache.maxEntries`` every batch compiled most of its code again.
Spark counts its compilations (``CodegenMetrics``): a second run of the same model, on the same
JVM, over new files, must find almost all of its code compiled."""

from __future__ import annotations

from pathlib import Path

from pyspark.sql import SparkSession

from runner.spark.session.builder import CODEGEN_CACHE, CODEGEN_CACHE_ENTRIES, temporary_conf
from tests.spark.test_orders_pipeline import land_sample

FIRST, SECOND = ["001.json", "002.json"], ["003.json", "004.json"]
# The suite runs Spark without generated code (runner/spark/session/small_data.py); a stream
# runs with it, as Spark does by default.
GENERATED_CODE = {
    "spark.sql.codegen.wholeStage": "true",
    "spark.sql.codegen.factoryMode": "FALLBACK",
}


def compilations(spark: SparkSession) -> int:
    metrics = spark.sparkContext._jvm.org.apache.spark.metrics.source.CodegenMetrics  # type: ignore[union-attr]
    return int(metrics.METRIC_COMPILATION_TIME().getCount())


def test_later_batches_reuse_the_compiled_code(
    spark: SparkSession, cli, example_project: Path
) -> None:
    """The example's orders_merge (dedupe, MERGE, OPTIMIZE every 2 batches), twice."""
    assert spark.conf.get(CODEGEN_CACHE) == CODEGEN_CACHE_ENTRIES
    land_sample(example_project, FIRST)
    run = ("run", "--model", "orders_merge", "--project-dir", example_project)
    with temporary_conf(spark, GENERATED_CODE):
        before = compilations(spark)
        first = cli(*run)
        assert first.exit_code == 0, first.output + first.stderr
        compiled_first = compilations(spark) - before

        land_sample(example_project, SECOND)
        before = compilations(spark)
        second = cli(*run)
        assert second.exit_code == 0, second.output + second.stderr
        compiled_second = compilations(spark) - before
    assert second.output.count("rows in") == len(SECOND)

    assert compiled_first > 50  # the code of a model's batch: Spark's default cache is 100
    # Without the cache each of these batches compiled dozens of classes again.
    assert compiled_second < 10
