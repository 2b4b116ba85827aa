"""The event log: one row per micro-batch per model, in a Delta table beside the targets.

Written once per (query, model, batch), so a batch Spark replays after a crash still leaves
exactly one row. A stream's batch on a classic session writes its row to a file that the stream
appends with others (runner/spark/batch/event_log_buffer.py); any other batch appends its row
itself. Spark replays only the first batch a query runs after it starts, and only one its
offset log held then, so only such a batch looks for its row (waiting or appended) before
writing it (BatchExecutor.may_be_replay: one read per restart of an interrupted batch, and per
start over Spark Connect); every other batch writes blindly. No append uses Delta's
idempotent-write options (txnAppId / txnVersion): checking them makes Delta rebuild the event
log's whole snapshot state on every append, most of the append's time
(bench/results/event-log-append.md). Each append declares the identities of its rows in the
commit's ``userMetadata`` instead. ``runner history`` reads the rows, the waiting ones too.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pyspark.sql import Row, SparkSession
from pyspark.sql import functions as F

from runner import storage
from runner.event_log_files import is_waiting, pending_folder, waiting_rows
from runner.spark.batch.report import BATCH_PHASES, BatchReport
from runner.spark.delta.delta_log import identity_metadata
from runner.spark.delta.statements import Transaction
from runner.spark.delta.targets import (
    delta_table_exists,
    forget_stale_registration,
    missing_properties,
)
from runner.spark.local_frames import json_row, json_rows_frame
from runner.spark.session.conflicts import retry_on_conflict
from runner.specs.target import TargetSpec
from runner.storage import Location

EVENT_LOG_SCHEMA = (
    "model STRING, batch_id BIGINT, query_id STRING, started_at TIMESTAMP, seconds DOUBLE, "
    "input_rows BIGINT, inserted BIGINT, updated BIGINT, deleted BIGINT, quarantined BIGINT, "
    "statements ARRAY<STRUCT<label: STRING, keyword: STRING, seconds: DOUBLE, skipped: BOOLEAN, "
    "inserted: BIGINT, updated: BIGINT, deleted: BIGINT>>, recovered BOOLEAN, "
    "expectations ARRAY<STRUCT<name: STRING, action: STRING, passed: BIGINT, failed: BIGINT>>, "
    "phases ARRAY<STRUCT<phase: STRING, seconds: DOUBLE>>, dropped BIGINT, logged_at TIMESTAMP"
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


def event_log_pending(target: TargetSpec, model: str) -> Location:
    """Where ``model``'s rows wait to be appended (runner/event_log_files.py)."""
    return pending_folder(event_log_location(target), model)


def record_batch(
    session: SparkSession,
    target: TargetSpec,
    report: BatchReport,
    query_id: str,
    *,
    may_be_replay: bool = True,
) -> None:
    """Append ``report``'s row to the event log now, at most once per (query, model, batch). A
    stream on a classic session hands it to its EventLogBuffer instead (``record``).

    ``may_be_replay``: the batch is the first its query ran since it started, the only one Spark
    can be replaying, so its row may already be there; it is looked for first. The caller that
    knows a batch is not a replay passes False and saves that read.
    """
    if may_be_replay and is_recorded(session, target, report.model, query_id, report.batch_id):
        return
    row = json_row(event_log_row(report, query_id), EVENT_LOG_SCHEMA)
    txn = event_log_transaction(query_id, report.model, report.batch_id)
    append_rows(session, target, [row], [txn])


def event_log_row(
    report: BatchReport, query_id: str, logged_at: datetime | None = None
) -> tuple[Any, ...]:
    """``report`` as a row of EVENT_LOG_SCHEMA. ``logged_at``: when a row that waits in a file
    was handed to it, from which ``runner history --timings`` times what follows the batch;
    None for a row appended in its batch, which its commit dates."""
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
    return (
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
        logged_at,
    )


def append_rows(
    session: SparkSession,
    target: TargetSpec,
    rows: Sequence[dict[str, Any]],
    transactions: Sequence[Transaction],
) -> None:
    """Append ``rows`` (``json_row``'s form) to the event log in one commit that declares
    their ``transactions``."""
    frame = json_rows_frame(session, rows, EVENT_LOG_SCHEMA)
    writer = (
        frame.write.format("delta")
        .mode("append")
        .option("userMetadata", identity_metadata(*transactions))
        # logs from before 'recovered', 'expectations', 'phases', 'dropped', 'logged_at'
        .option("mergeSchema", "true")
    )
    retry_on_conflict(lambda: writer.save(str(event_log_location(target))))


def is_recorded(
    session: SparkSession, target: TargetSpec, model: str, query_id: str, batch_id: int
) -> bool:
    """Whether the row of ``model``'s batch ``batch_id`` of query ``query_id`` waits in its
    file or is in the event log (Delta's file statistics skip every file of other batches)."""
    if is_waiting(event_log_pending(target, model), query_id, batch_id):
        return True
    return bool(_appended(session, target, model, {(query_id, batch_id)}))


def _appended(
    session: SparkSession, target: TargetSpec, model: str, batches: set[tuple[str, int]]
) -> set[tuple[str, int]]:
    """Which of ``batches`` (query id, batch id) of ``model`` the event log holds a row of."""
    location = event_log_location(target)
    if not batches or not delta_table_exists(session, location):
        return set()
    queries = sorted({query_id for query_id, _ in batches})
    ids = sorted({batch_id for _, batch_id in batches})
    rows = (
        session.read.format("delta")
        .load(str(location))
        .where(
            (F.col("model") == model)
            & F.col("query_id").isin(queries)
            & F.col("batch_id").isin(ids)
        )
        .select("query_id", "batch_id")
        .collect()
    )
    return {(row["query_id"], int(row["batch_id"])) for row in rows} & batches


def recover_waiting_rows(session: SparkSession, target: TargetSpec, model: str) -> int:
    """Append the rows a process left waiting for ``model`` (it was killed, or its last append
    failed) that the event log does not hold yet, then remove their files; how many were
    appended. Called at the model's start, before its query runs: this process holds the
    model's lock, so no other one writes or appends these rows meanwhile."""
    waiting = waiting_rows(event_log_pending(target, model))
    if not waiting:
        return 0
    there = _appended(session, target, model, {(w.query_id, w.batch_id) for w in waiting})
    missing = [w for w in waiting if (w.query_id, w.batch_id) not in there]
    if missing:
        transactions = [event_log_transaction(w.query_id, model, w.batch_id) for w in missing]
        append_rows(session, target, [w.row for w in missing], transactions)
    for row in waiting:
        storage.remove(row.location)
    return len(missing)


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
    """The newest ``limit`` rows of ``model``, oldest first: the event log's and those waiting
    to be appended (a row in both, appended but its file not yet removed, counts once). With a
    shared catalog, the event log is the table of that name (where another process finds it
    too)."""
    location = event_log_location(target)
    rows: list[Row] = []
    if delta_table_exists(spark, location):
        shared = target.catalog is not None and spark.catalog.tableExists(EVENT_LOG_TABLE)
        reader = spark.read.format("delta")
        table = spark.table(EVENT_LOG_TABLE) if shared else reader.load(str(location))
        rows = (
            table.where(F.col("model") == model)
            .orderBy("started_at", ascending=False)
            .limit(limit)
            .collect()
        )
    waiting = waiting_rows(event_log_pending(target, model))
    if waiting:
        appended = {(r["query_id"], r["batch_id"]) for r in rows}
        rows += [
            row
            for row in json_rows_frame(spark, [w.row for w in waiting], EVENT_LOG_SCHEMA).collect()
            if (row["query_id"], row["batch_id"]) not in appended
        ]
        rows = sorted(rows, key=lambda r: r["started_at"], reverse=True)[:limit]
    return list(reversed(rows))
