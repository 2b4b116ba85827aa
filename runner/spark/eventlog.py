"""The event log: one row per micro-batch per model, in a Delta table beside the targets.

Written inside the batch, as an idempotent Delta append (the writer's txnAppId / txnVersion), so
a batch Spark replays after a crash still leaves exactly one row. ``runner history`` reads it.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from pyspark.sql import Row, SparkSession

from runner.config import TargetSpec
from runner.spark.batch_report import BatchReport
from runner.spark.errors import retry_on_conflict
from runner.spark.statements import Transaction

EVENT_LOG_SCHEMA = (
    "model STRING, batch_id BIGINT, query_id STRING, started_at TIMESTAMP, seconds DOUBLE, "
    "input_rows BIGINT, inserted BIGINT, updated BIGINT, deleted BIGINT, quarantined BIGINT, "
    "statements ARRAY<STRUCT<label: STRING, keyword: STRING, seconds: DOUBLE, skipped: BOOLEAN, "
    "inserted: BIGINT, updated: BIGINT, deleted: BIGINT>>, recovered BOOLEAN, "
    "expectations ARRAY<STRUCT<name: STRING, action: STRING, passed: BIGINT, failed: BIGINT>>, "
    "phases ARRAY<STRUCT<phase: STRING, seconds: DOUBLE>>"
)


def event_log_location(target: TargetSpec) -> Path:
    return target.warehouse / "_runner" / "event_log"


def event_log_transaction(query_id: str, model: str, batch_id: int) -> Transaction:
    """The identity of a batch's event-log append: its Delta commit is found by it."""
    return Transaction(f"{query_id}:{model}:event_log", batch_id)


def record_batch(
    session: SparkSession, target: TargetSpec, report: BatchReport, query_id: str
) -> None:
    """Append ``report`` to the event log, at most once per (query, model, batch)."""
    counts = report.merge_counts
    statements = [
        Row(
            label=r.statement.label,
            keyword=r.statement.keyword,
            seconds=round(r.seconds, 3),
            skipped=r.skipped,
            inserted=r.metrics.get("num_inserted_rows"),
            updated=r.metrics.get("num_updated_rows"),
            deleted=r.metrics.get("num_deleted_rows"),
        )
        for r in report.statements
    ]
    row = (
        report.model,
        report.batch_id,
        query_id,
        report.started_at or datetime.now(UTC).replace(tzinfo=None),
        round(report.seconds, 3),
        report.input_rows,
        counts.get("num_inserted_rows", 0),
        counts.get("num_updated_rows", 0),
        counts.get("num_deleted_rows", 0),
        report.quarantined,
        statements,
        # a replayed batch whose MERGE counts come from the commit that applied it
        any(r.recovered for r in report.statements),
        [
            Row(name=e.name, action=e.action, passed=e.passed, failed=e.failed)
            for e in report.expectations
        ],
        [Row(phase=name, seconds=round(took, 3)) for name, took in report.phases.items()],
    )
    frame = session.createDataFrame([row], EVENT_LOG_SCHEMA)
    txn = event_log_transaction(query_id, report.model, report.batch_id)
    writer = (
        frame.write.format("delta")
        .mode("append")
        .option("txnAppId", txn.app_id)
        .option("txnVersion", txn.version)
        .option("mergeSchema", "true")  # logs from before 'recovered', 'expectations', 'phases'
    )
    retry_on_conflict(lambda: writer.save(str(event_log_location(target))))


def ensure_event_log(spark: SparkSession, target: TargetSpec) -> None:
    """Create the event log before any query runs: two models' first batches would otherwise
    both try to create it, and one would fail."""
    location = event_log_location(target)
    spark.sql(f"CREATE TABLE IF NOT EXISTS delta.`{location}` ({EVENT_LOG_SCHEMA}) USING DELTA")


def read_history(spark: SparkSession, target: TargetSpec, model: str, limit: int) -> list[Row]:
    """The newest ``limit`` event-log rows of ``model``, oldest first."""
    location = event_log_location(target)
    if not (location / "_delta_log").exists():
        return []
    rows = (
        spark.read.format("delta")
        .load(str(location))
        .where(f"model = '{model}'")
        .orderBy("started_at", ascending=False)
        .limit(limit)
        .collect()
    )
    return list(reversed(rows))
