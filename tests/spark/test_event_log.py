"""The event log holds exactly one row per (query, model, batch): a replayed batch finds its row
and appends none, without Delta's idempotent-write check, whose snapshot rebuild made every
append several times slower. Each append declares its identity in the commit's userMetadata."""

from __future__ import annotations

import json
from datetime import datetime
from decimal import Decimal
from pathlib import Path

from pyspark.sql import SparkSession

from runner import project as project_loader
from runner.spark.batch import run_batch
from runner.spark.delta_log import newest_commits
from runner.spark.eventlog import event_log_location, event_log_transaction
from runner.spark.targets import ensure_target, reset_model
from tests.conftest import ORDERS_SCHEMA, write_project

MODEL = """{{ config(stream='orders', target='eventlog.orders', unique_key='order_id',
    columns='order_id STRING, status STRING, amount DECIMAL(10,2), updated_at TIMESTAMP') }}
MERGE INTO {{ this }} AS t USING {{ batch }} AS s ON t.order_id = s.order_id
WHEN MATCHED THEN UPDATE SET *
WHEN NOT MATCHED THEN INSERT *;
"""


def test_a_replayed_batch_leaves_one_row_and_each_commit_names_its_batch(
    spark: SparkSession, tmp_path: Path
):
    project = project_loader.load(write_project(tmp_path / "p", {"m": MODEL}))
    model = project.model("m")
    reset_model(spark, project, model)
    ensure_target(spark, project, model)
    at = datetime(2024, 1, 1, 10)

    def batch(order: str):
        return spark.createDataFrame([(order, "c1", "new", Decimal(1), at, "U")], ORDERS_SCHEMA)

    # batch 0 is the first the query runs: it may be a replay, and here it is one, twice over
    run_batch(project, model, batch("o1"), 0, query_id="q", may_be_replay=True)
    run_batch(project, model, batch("o1"), 0, query_id="q", may_be_replay=True)
    run_batch(project, model, batch("o2"), 1, query_id="q", may_be_replay=False)
    # a new query (the checkpoint was reset) starts its own batch 0
    run_batch(project, model, batch("o3"), 0, query_id="q2", may_be_replay=True)

    log = event_log_location(project.target)
    rows = spark.read.format("delta").load(str(log)).select("query_id", "batch_id").collect()
    assert sorted((r["query_id"], r["batch_id"]) for r in rows) == [("q", 0), ("q", 1), ("q2", 0)]

    appends = [c for c in newest_commits(log, limit=10) if c.operation == "WRITE"]
    declared = [t for c in appends for t in c.transactions]
    assert len(declared) == 3 and set(declared) == {
        event_log_transaction("q", "m", 0),
        event_log_transaction("q", "m", 1),
        event_log_transaction("q2", "m", 0),
    }
    # no txn action: Delta's idempotent-write check is what the event log no longer pays for
    newest = sorted((log / "_delta_log").glob("*.json"))[-1]
    actions = [json.loads(line) for line in newest.read_text().splitlines()]
    assert not any("txn" in a for a in actions)
