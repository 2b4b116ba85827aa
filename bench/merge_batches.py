"""The targets and 2,000-event batches the MERGE benches share (merge_dv_bench, merge_floor_bench).

A target is built in one write: order ids `o000000000` upward, every key spread over the files.
A batch holds 2,000 events: 80 % updates of random existing keys, 20 % new keys, 2 % of all
deletes; `MERGE` is the sequence-guarded statement the runner's merge() macro renders for them,
reading the batch from the temp view `batch`.
"""

from __future__ import annotations

import random
from pathlib import Path

from pyspark.sql import DataFrame, SparkSession

from runner.spark.delta.delta_log import newest_commits

BATCH_EVENTS = 2_000
MERGE = """MERGE INTO delta.`{table}` AS t USING batch AS s ON t.order_id = s.order_id
WHEN MATCHED AND s.updated_at > t.updated_at AND s.op = 'D' THEN DELETE
WHEN MATCHED AND s.updated_at > t.updated_at THEN UPDATE SET
  t.customer_id = s.customer_id, t.status = s.status, t.amount = s.amount,
  t.updated_at = s.updated_at
WHEN NOT MATCHED AND s.op <> 'D' THEN INSERT (order_id, customer_id, status, amount, updated_at)
  VALUES (s.order_id, s.customer_id, s.status, s.amount, s.updated_at)"""


def build_target(spark: SparkSession, table: Path, size: int, deletion_vectors: bool) -> None:
    """A target of ``size`` rows in files of up to 250,000 rows."""
    spark.range(size).selectExpr(
        "format_string('o%09d', id) AS order_id",
        "format_string('c%05d', id % 5000) AS customer_id",
        "'created' AS status",
        "CAST(id % 1000 AS DECIMAL(10,2)) AS amount",
        "TIMESTAMP'2024-01-01 00:00:00' AS updated_at",
    ).repartition(max(1, size // 250_000)).write.format("delta").option(
        "delta.enableDeletionVectors", str(deletion_vectors).lower()
    ).save(str(table))


def batch_of(spark: SparkSession, size: int, number: int) -> DataFrame:
    """Batch ``number`` against a target of ``size`` rows: seeded, so every run sees the same."""
    rng = random.Random(number)
    events: dict[int, tuple] = {}
    for i in range(BATCH_EVENTS):
        key = rng.randrange(size) if rng.random() < 0.8 else size + number * BATCH_EVENTS + i
        op = "D" if rng.random() < 0.02 else "U"
        events[key] = (f"o{key:09d}", f"c{key % 5000:05d}", "paid", key % 97, number, op)
    return spark.createDataFrame(
        list(events.values()),
        "order_id STRING, customer_id STRING, status STRING, amount INT, minute INT, op STRING",
    ).selectExpr(
        "order_id",
        "customer_id",
        "status",
        "CAST(amount AS DECIMAL(10,2)) AS amount",
        "TIMESTAMP'2024-01-02 00:00:00' + make_interval(0, 0, 0, 0, 0, minute, 0) AS updated_at",
        "op",
    )


def last_commit_metrics(table: Path) -> dict[str, str]:
    """Delta's operationMetrics of the table's newest commit, read from its ``_delta_log`` (no
    Spark job, so nothing of it shows among the next statement's SQL executions)."""
    commit = next(newest_commits(table, 1), None)
    if commit is None:
        raise RuntimeError(f"no Delta commit at {table}")
    return commit.metrics
