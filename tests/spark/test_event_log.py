"""The event log holds exactly one row per (query, model, batch): a replayed batch finds its row
and appends none, without Delta's idempotent-write check, whose snapshot rebuild made every
append several times slower. Each append declares its identity in the commit's userMetadata."""

from __future__ import annotations

import json
import threading
from datetime import datetime
from decimal import Decimal
from pathlib import Path

from pyspark.sql import SparkSession

from runner import project as project_loader
from runner.spark.batch.eventlog import (
    EVENT_LOG_PROPERTIES,
    EVENT_LOG_SCHEMA,
    ensure_event_log,
    event_log_location,
    event_log_transaction,
)
from runner.spark.batch.run import run_batch
from runner.spark.delta.delta_log import newest_commits
from runner.spark.delta.targets import ensure_target, reset_model
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


def checkpoint_interval(spark: SparkSession, location: Path) -> str | None:
    rows = spark.sql(f"SHOW TBLPROPERTIES delta.`{location}`").collect()
    return {r["key"]: r["value"] for r in rows}.get("delta.checkpointInterval")


def test_the_event_log_checkpoints_every_100_commits_an_older_log_too(
    spark: SparkSession, tmp_path: Path
):
    assert EVENT_LOG_PROPERTIES == {"delta.checkpointInterval": "100"}
    new = project_loader.load(write_project(tmp_path / "new", {"m": MODEL})).target
    ensure_event_log(spark, new)
    assert checkpoint_interval(spark, event_log_location(new)) == "100"

    # an event log written before the property: Delta's default (a checkpoint every 10 commits)
    old = project_loader.load(write_project(tmp_path / "old", {"m": MODEL})).target
    location = event_log_location(old)
    spark.sql(f"CREATE TABLE delta.`{location}` ({EVENT_LOG_SCHEMA}) USING DELTA")
    assert checkpoint_interval(spark, location) is None
    ensure_event_log(spark, old)
    assert checkpoint_interval(spark, location) == "100"
    versions = len(list((location / "_delta_log").glob("*.json")))
    ensure_event_log(spark, old)  # already set: nothing is committed
    assert len(list((location / "_delta_log").glob("*.json"))) == versions == 2


def test_two_runners_upgrading_an_older_event_log_at_once_both_start(
    spark: SparkSession, tmp_path: Path
):
    # Both set the property; without a retry the second ALTER fails with Delta's
    # MetadataChangedException (5 times in 6 in a probe) and its runner would not start.
    target = project_loader.load(write_project(tmp_path / "p", {"m": MODEL})).target
    location = event_log_location(target)
    spark.sql(f"CREATE TABLE delta.`{location}` ({EVENT_LOG_SCHEMA}) USING DELTA")
    both = threading.Barrier(2)
    failures: list[BaseException] = []

    def start() -> None:
        both.wait()
        try:
            ensure_event_log(spark, target)
        except BaseException as exc:  # noqa: BLE001 - reported by the assertion below
            failures.append(exc)

    runners = [threading.Thread(target=start) for _ in range(2)]
    for runner in runners:
        runner.start()
    for runner in runners:
        runner.join()
    assert failures == []
    assert checkpoint_interval(spark, location) == "100"
