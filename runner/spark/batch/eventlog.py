"""The event log: one row per micro-batch per model, in a Delta table beside the targets.

Written inside the batch, once per (query, model, batch), so a batch Spark replays after a crash
still leaves exactly one row. Spark replays only the first batch a query runs after it starts,
and only one its offset log held then, so only such a batch looks for its row before appending
(BatchExecutor.may_be_replay: one read per restart of an interrupted batch, and per start over
Spark Connect); every other batch appends blindly. No row uses Delta's idempotent-write
options (txnAppId / txnVersion): checking them makes Delta rebuild the event log's whole
snapshot state on every append, most of the append's time (bench/results/event-log-append.md).
Each append records its identity in the commit's ``userMetadata`` instead, where ``runner
history --timings`` finds it.
``runner history`` reads the rows.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from pyspark.sql import Row, SparkSession
from pyspark.sql import functions as F

from runner.spark.batch.report import BATCH_PHASES, BatchReport
from runner.spark.delta.delta_log import identity_metadata
from runner.spark.delta.statements import Transaction
from runner.spark.delta.targets import (
    delta_table_exists,
    forget_stale_registration,
    missing_properties,
)
from runner.spark.local_frames import local_frame
from runner.spark.session.conflicts import retry_on_conflict
from runner.specs.target import TargetSpec
from runner.storage import Location

EVENT_LOG_SCHEMA = (
    "model STRING, batch_id BIGINT, query_id STRING, started_at TIMESTAMP, seconds DOUBLE, "
    "input_rows BIGINT, inserted BIGINT, updated BIGINT, deleted BIGINT, quarantined BIGINT, "
    "statements ARRAY<STRUCT<label: STRING, keyword: STRING, seconds: DOUBLE, skipped: BOOLEAN, "
    "inserted: BIGINT, updated: BIGINT, deleted: BIGINT>>, recovered BOOLEAN, "
    "expectations ARRAY<STRUCT<name: STRING, action: STRING, passed: BIGINT, failed: BIGINT>>, "
    "phases ARRAY<STRUCT<phase: STRING, seconds: DOUBLE>>, dropped BIGINT"
)


# Delta writes a table's checkpoint every delta.checkpointInterval commits (10 by default), in
# the commit that reaches it: with 10, one event-log append in ten also wrote the checkpoint and
# took several times a plain append (bench/results/event-log-append.md). The event log's
# readers, `runner history` and the first batch of a query start, replay up to 99 small JSON
# commits instead.
EVENT_LOG_PROPERTIES = {"delta.checkpointInterval": "100"}


# The event log's name in a shared catalog (a target's catalog:), where SQL clients find it.
EVENT_LOG_TABLE = "_runner.event_log"


def event_log_location(target: TargetSpec) -> Location:
    return target.table_location(EVENT_LOG_TABLE)


def event_log_transaction(query_id: str, model: str, batch_id: int) -> Transaction:
    """The identity of a batch's event-log append: its Delta commit is found by it."""
    return Transaction(f"{query_id}:{model}:event_log", batch_id)


def record_batch(
    session: SparkSession,
    target: TargetSpec,
    report: BatchReport,
    query_id: str,
    *,
    may_be_replay: bool = True,
) -> None:
    """Append ``report`` to the event log, at most once per (query, model, batch).

    ``may_be_replay``: the batch is the first its query ran since it started, the only one Spark
    can be replaying, so its row may already be there; it is looked for first. The caller that
    knows a batch is not a replay passes False and saves that read.
    """
    if may_be_replay and is_recorded(session, target, report.model, query_id, report.batch_id):
        return
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
        [  # in the order they are shown, whatever the order they ran in
            Row(phase=name, seconds=round(report.phases[name], 3))
            for name in BATCH_PHASES
            if name in report.phases
        ],
        report.dropped,
    )
    frame = local_frame(session, [row], EVENT_LOG_SCHEMA)
    txn = event_log_transaction(query_id, report.model, report.batch_id)
    writer = (
        frame.write.format("delta")
        .mode("append")
        .option("userMetadata", identity_metadata(txn))
        .option("mergeSchema", "true")  # logs from before 'recovered', 'expectations', 'phases',
        # 'dropped'
    )
    retry_on_conflict(lambda: writer.save(str(event_log_location(target))))


def is_recorded(
    session: SparkSession, target: TargetSpec, model: str, query_id: str, batch_id: int
) -> bool:
    """Whether the event log holds the row of ``model``'s batch ``batch_id`` of query
    ``query_id`` (Delta's file statistics skip every file of other batches)."""
    location = event_log_location(target)
    if not delta_table_exists(session, location):
        return False
    rows = (
        session.read.format("delta")
        .load(str(location))
        .where(
            (F.col("model") == model)
            & (F.col("query_id") == query_id)
            & (F.col("batch_id") == batch_id)
        )
        .limit(1)
        .collect()
    )
    return bool(rows)


def ensure_event_log(spark: SparkSession, target: TargetSpec) -> None:
    """Create the event log before any query runs: two models' first batches would otherwise
    both try to create it, and one would fail. An event log made before EVENT_LOG_PROPERTIES
    gets them. With a shared catalog it is registered there as EVENT_LOG_TABLE."""
    location = event_log_location(target)
    table = f"delta.`{location}`"
    properties = ", ".join(f"'{k}' = '{v}'" for k, v in EVENT_LOG_PROPERTIES.items())
    if not delta_table_exists(spark, location):  # the statement alone costs a Spark job
        spark.sql(
            f"CREATE TABLE IF NOT EXISTS {table} ({EVENT_LOG_SCHEMA}) USING DELTA "
            f"TBLPROPERTIES ({properties})"
        )
    elif missing_properties(spark, table, EVENT_LOG_PROPERTIES):
        # two runners starting together both set them: the one that loses the race retries
        alter = f"ALTER TABLE {table} SET TBLPROPERTIES ({properties})"
        retry_on_conflict(lambda: spark.sql(alter))
    if target.catalog is not None:
        schema = EVENT_LOG_TABLE.split(".")[0]
        spark.sql(f"CREATE SCHEMA IF NOT EXISTS {schema}")
        forget_stale_registration(
            spark, EVENT_LOG_TABLE, location, file=target.catalog.file or Path("project.yml")
        )
        spark.sql(f"CREATE TABLE IF NOT EXISTS {EVENT_LOG_TABLE} USING DELTA LOCATION '{location}'")


def read_history(spark: SparkSession, target: TargetSpec, model: str, limit: int) -> list[Row]:
    """The newest ``limit`` event-log rows of ``model``, oldest first. With a shared catalog,
    the table of that name (where another process finds it too)."""
    location = event_log_location(target)
    if not delta_table_exists(spark, location):
        return []
    shared = target.catalog is not None and spark.catalog.tableExists(EVENT_LOG_TABLE)
    rows = (
        (spark.table(EVENT_LOG_TABLE) if shared else spark.read.format("delta").load(str(location)))
        .where(f"model = '{model}'")
        .orderBy("started_at", ascending=False)
        .limit(limit)
        .collect()
    )
    return list(reversed(rows))
