"""After a crash between a batch's MERGE commit and its event-log row, the replayed batch's
MERGE is skipped by Delta; its event-log row reports the counts of the commit that applied it
(read from the Delta log by transaction identity), marked as recovered."""

from __future__ import annotations

import shutil
from datetime import datetime
from decimal import Decimal

from pyspark.sql import SparkSession

from runner import project as project_loader
from runner.spark.batch.eventlog import event_log_location
from runner.spark.batch.run import run_batch
from runner.spark.delta.targets import ensure_target, reset_model
from tests.conftest import ORDERS_SCHEMA, write_project

MODEL = """{{ config(stream='orders', target='replay.orders', unique_key='order_id',
    columns='order_id STRING, status STRING, amount DECIMAL(10,2), updated_at TIMESTAMP') }}
MERGE INTO {{ this }} AS t USING {{ batch }} AS s ON t.order_id = s.order_id
WHEN MATCHED AND s.op = 'D' THEN DELETE
WHEN MATCHED THEN UPDATE SET *
WHEN NOT MATCHED THEN INSERT *;
"""


def test_a_replayed_merge_reports_the_counts_of_its_first_commit(spark: SparkSession, tmp_path):
    project = project_loader.load(write_project(tmp_path / "p", {"m": MODEL}))
    model = project.model("m")
    reset_model(spark, project, model)
    ensure_target(spark, project, model)
    at = datetime(2024, 1, 1, 10)
    rows = [
        ("o1", "c1", "paid", Decimal("1.00"), at, "U"),
        ("o2", "c1", "new", Decimal(2), at, "U"),
    ]
    run_batch(project, model, spark.createDataFrame(rows, ORDERS_SCHEMA), 0, query_id="q")
    second = [("o1", "c1", "gone", Decimal(1), at, "D"), ("o2", "c1", "paid", Decimal(2), at, "U"),
              ("o3", "c2", "new", Decimal(3), at, "U")]  # fmt: skip
    batch = spark.createDataFrame(second, ORDERS_SCHEMA)
    first = run_batch(project, model, batch, 1, query_id="q")
    assert first.merge_counts == {
        "num_inserted_rows": 1, "num_updated_rows": 1, "num_deleted_rows": 1,
    }  # fmt: skip

    # The crash: the event log never got batch 1's row (here: no event log at all, so that
    # its own idempotent write does not skip the row). Spark replays batch 1.
    log = event_log_location(project.target)
    shutil.rmtree(log)
    replay = run_batch(project, model, batch, 1, query_id="q")

    merge = replay.statements[0]
    assert merge.skipped and merge.recovered
    assert replay.merge_counts == first.merge_counts
    row = spark.read.format("delta").load(str(log)).where("batch_id = 1").collect()
    assert len(row) == 1
    assert (row[0]["inserted"], row[0]["updated"], row[0]["deleted"], row[0]["recovered"]) == (
        1, 1, 1, True,
    )  # fmt: skip
    assert sorted(r["order_id"] for r in spark.table("replay.orders").collect()) == ["o2", "o3"]
