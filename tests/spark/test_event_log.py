"""The event log holds exactly one row per (query, model, batch): a replayed batch finds its row
and appends none, without Delta's idempotent-write check, whose snapshot rebuild made every
append several times slower. Each append declares its identities in the commit's userMetadata.
A stream's rows wait in files and are appended together; a killed run's are appended by the
next start, once."""

from __future__ import annotations

import json
import threading
from datetime import datetime
from decimal import Decimal
from pathlib import Path

import pytest
from pyspark.sql import SparkSession

from runner import project as project_loader
from runner.event_log_files import waiting_rows
from runner.spark.batch import event_log_buffer
from runner.spark.batch.event_log_buffer import EventLogBuffer
from runner.spark.batch.eventlog import (
    EVENT_LOG_PROPERTIES,
    EVENT_LOG_SCHEMA,
    append_rows,
    ensure_event_log,
    event_log_location,
    event_log_pending,
    event_log_transaction,
    is_recorded,
    read_history,
    recover_waiting_rows,
)
from runner.spark.batch.run import run_batch
from runner.spark.delta.delta_log import newest_commits
from runner.spark.delta.statements import TXN_APP_ID, TXN_VERSION, statement_transaction
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


def stream_batches(spark: SparkSession, tmp_path: Path):
    """A project whose model's target exists, and a function that runs one of its batches the
    way a stream on a classic session does: its event-log row to ``buffer``'s files."""
    project = project_loader.load(write_project(tmp_path / "p", {"m": MODEL}))
    model = project.model("m")
    reset_model(spark, project, model)
    ensure_target(spark, project, model)
    ensure_event_log(spark, project.target)
    at = datetime(2024, 1, 1, 10)

    def run(buffer: EventLogBuffer, batch_id: int, *, may_be_replay: bool = False) -> None:
        rows = [(f"o{batch_id}", "c1", "new", Decimal(1), at, "U")]
        batch = spark.createDataFrame(rows, ORDERS_SCHEMA)
        run_batch(
            project, model, batch, batch_id, query_id="q", may_be_replay=may_be_replay,
            log_buffer=buffer,
        )  # fmt: skip

    return project, run


def logged(spark: SparkSession, location: Path) -> list[tuple[str, int]]:
    rows = spark.read.format("delta").load(str(location)).collect()
    return sorted((r["query_id"], r["batch_id"]) for r in rows)


def test_a_streams_rows_wait_in_files_then_are_appended_in_one_commit(
    spark: SparkSession, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    project, run = stream_batches(spark, tmp_path)
    log = event_log_location(project.target)
    buffer = EventLogBuffer(project.target, "m")
    run(buffer, 0)
    run(buffer, 1)
    run(buffer, 1, may_be_replay=True)  # Spark replays batch 1: its row is found waiting

    # in files, none in the event log yet; `runner history` shows them all the same
    assert logged(spark, log) == []
    assert sorted(p.name for p in event_log_pending(project.target, "m").iterdir()) == [
        "q.0.json",
        "q.1.json",
    ]
    history = read_history(spark, project.target, "m", 10)
    assert [(r["batch_id"], r["input_rows"]) for r in history] == [(0, 1), (1, 1)]
    assert all(r["logged_at"] >= r["started_at"] for r in history)
    assert is_recorded(spark, project.target, "m", "q", 1)

    buffer.flush_if_due()  # the oldest has not waited FLUSH_SECONDS
    assert logged(spark, log) == [] and buffer.waiting == 2
    monkeypatch.setattr(event_log_buffer, "FLUSH_SECONDS", 0.0)
    buffer.flush_if_due()

    assert logged(spark, log) == [("q", 0), ("q", 1)]
    assert list(event_log_pending(project.target, "m").iterdir()) == []
    appends = [c for c in newest_commits(log, limit=10) if c.operation == "WRITE"]
    assert [c.transactions for c in appends] == [
        {event_log_transaction("q", "m", 0), event_log_transaction("q", "m", 1)}
    ]
    after = read_history(spark, project.target, "m", 10)
    assert [(r["batch_id"], r["logged_at"]) for r in after] == [
        (r["batch_id"], r["logged_at"]) for r in history
    ]


def test_rows_a_killed_run_left_waiting_are_appended_once_by_the_next_start(
    spark: SparkSession, tmp_path: Path
):
    project, run = stream_batches(spark, tmp_path)
    log = event_log_location(project.target)
    killed = EventLogBuffer(project.target, "m")
    for batch_id in range(3):
        run(killed, batch_id)
    # the kill came after batch 0's row was appended, before its file was removed
    (first, *_) = waiting_rows(event_log_pending(project.target, "m"))
    append_rows(spark, project.target, [first.row], [event_log_transaction("q", "m", 0)])

    assert recover_waiting_rows(spark, project.target, "m") == 2

    assert logged(spark, log) == [("q", 0), ("q", 1), ("q", 2)]
    assert list(event_log_pending(project.target, "m").iterdir()) == []
    rows = spark.read.format("delta").load(str(log)).collect()
    assert all(r["logged_at"] is not None and r["logged_at"] >= r["started_at"] for r in rows)
    assert recover_waiting_rows(spark, project.target, "m") == 0


def test_an_append_that_fails_leaves_the_rows_waiting_and_says_so(
    spark: SparkSession, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys
):
    project, run = stream_batches(spark, tmp_path)
    buffer = EventLogBuffer(project.target, "m")
    run(buffer, 0)

    def refused(*args: object, **kwargs: object) -> None:
        raise OSError("the event log's storage refused the write")

    monkeypatch.setattr(event_log_buffer, "append_rows", refused)
    buffer.flush_at_end()

    said = capsys.readouterr().err
    assert "event log: 1 row(s) of m wait in" in said
    assert "the event log's storage refused the write" in said
    assert "the model's next start appends them" in said
    assert [w.batch_id for w in waiting_rows(event_log_pending(project.target, "m"))] == [0]
    monkeypatch.undo()
    assert recover_waiting_rows(spark, project.target, "m") == 1
    assert logged(spark, event_log_location(project.target)) == [("q", 0)]


def test_an_append_while_a_batch_merges_keeps_every_row(
    spark: SparkSession, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    """The watcher appends waiting rows while the next batch runs its MERGE, whose
    idempotent-write identity is set on the batch's session (Delta reads it from there). Had the
    append run on that session, Delta would record the MERGE's identity in the event log's
    commit and skip the next append made under it as already applied: a row lost (the upsert
    bench lost batch 1's row this way)."""
    project, run = stream_batches(spark, tmp_path)
    log = event_log_location(project.target)
    buffer = EventLogBuffer(project.target, "m")
    monkeypatch.setattr(event_log_buffer, "FLUSH_SECONDS", 0.0)
    merging = statement_transaction("q", "m", "batch[1]", 2)
    for batch_id in (0, 1):
        run(buffer, batch_id)
        spark.conf.set(TXN_APP_ID, merging.app_id)  # batch 2's MERGE, in flight
        spark.conf.set(TXN_VERSION, str(merging.version))
        try:
            buffer.flush_if_due()
        finally:
            spark.conf.unset(TXN_APP_ID)
            spark.conf.unset(TXN_VERSION)

    assert logged(spark, log) == [("q", 0), ("q", 1)]
    assert list(event_log_pending(project.target, "m").iterdir()) == []
    log_txns = [
        json.loads(line)["txn"]
        for commit in sorted((log / "_delta_log").glob("*.json"))
        for line in commit.read_text().splitlines()
        if "txn" in json.loads(line)
    ]
    assert log_txns == []  # the event log's own identities are in its commits' userMetadata
