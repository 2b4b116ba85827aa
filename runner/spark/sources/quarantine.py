"""The quarantine: one Delta table per model for the input rows it could not use.

Every source that rejects input (Kafka records that are not JSON, file lines that do not parse,
values of the wrong type; later, rows failing an expectation) writes them here with
``write_quarantine``, so there is one place to look and one exactly-once rule.

Where
    ``<warehouse>/_quarantine/<model>``, registered as ``quarantine.<model>``.

Columns (``QUARANTINE_COLUMNS``)
    ``model``, ``batch_id``, ``source`` (``kafka``, ``json``, ``csv``, ``expectation``, ...),
    ``position`` (human-readable: ``landing/orders/part-3.json:12``, ``orders/1@104``),
    ``raw`` (the rejected input as text; null for a Kafka tombstone), ``reason``,
    ``quarantined_at``; then source details, null where they do not apply: ``file`` and
    ``line`` (file sources), ``topic``, ``partition``, ``offset``, ``timestamp``, ``key`` (Kafka).

Exactly once
    A write carries Delta's idempotent-write identity, derived like the model's MERGE:
    ``txnAppId`` = ``<query id>:<model>:quarantine:<stage>``, ``txnVersion`` = the batch id. A
    batch that Spark replays after a crash therefore neither loses its rejected rows (they are
    written again if the first attempt did not commit) nor duplicates them (Delta skips the
    write if it did). ``stage`` tells apart several quarantine writes of one batch (the source's
    parse, an expectation): each needs its own identity, or the second would be skipped.
"""

from __future__ import annotations

from typing import Literal

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from runner.error_text import first_line
from runner.errors import RunnerError
from runner.lineage import (
    DETAIL_COLUMNS,
    QUARANTINE_COLUMNS,
    QUARANTINE_SCHEMA,
    quarantine_location,
)
from runner.spark.delta.statements import Transaction
from runner.spark.session.conflicts import retry_on_conflict
from runner.storage import Location

SourceKind = Literal["kafka", "json", "csv", "expectation"]
# The columns a rejected-rows DataFrame must have (the optional ones, filled with null when
# absent, are runner.lineage's DETAIL_COLUMNS).
REQUIRED_COLUMNS = ("position", "raw", "reason")
QUERY_ID_PROPERTY = "sql.streaming.queryId"  # set by Spark on the thread running a batch

_registered: set[tuple[str, str]] = set()  # (Spark application id, quarantine location)


class QuarantineError(RunnerError):
    """Rejected rows could not be written to the quarantine table."""


def quarantine_table(model_name: str) -> str:
    """The catalog name of ``model_name``'s quarantine table: ``quarantine.`<model>```."""
    return f"{QUARANTINE_SCHEMA}.`{model_name}`"


def quarantine_transaction(
    query_id: str, model_name: str, stage: str, batch_id: int
) -> Transaction:
    """The idempotent-write identity of one quarantine write of one batch."""
    return Transaction(f"{query_id}:{model_name}:quarantine:{stage}", batch_id)


def ensure_quarantine_table(
    session: SparkSession, model_name: str, warehouse: Location
) -> Location:
    """Create (or register) the model's quarantine table; once per Spark application."""
    location = quarantine_location(warehouse, model_name)
    # spark.app.id, not sparkContext: a batch over Spark Connect has no SparkContext
    key = (session.conf.get("spark.app.id") or "", str(location))
    if key not in _registered:
        session.sql(f"CREATE SCHEMA IF NOT EXISTS {QUARANTINE_SCHEMA}")
        session.sql(
            f"CREATE TABLE IF NOT EXISTS {quarantine_table(model_name)} ({QUARANTINE_COLUMNS}) "
            f"USING DELTA LOCATION '{location}'"
        )
        _registered.add(key)
    return location


def write_quarantine(
    rejected: DataFrame,
    *,
    model_name: str,
    batch_id: int,
    source: SourceKind,
    warehouse: Location,
    query_id: str | None = None,
    stage: str | None = None,
) -> None:
    """Append ``rejected`` to the model's quarantine table, exactly once per (query, stage, batch).

    ``rejected`` has the columns ``position``, ``raw`` and ``reason`` (strings) and any of
    ``DETAIL_COLUMNS``; this adds ``model``, ``batch_id``, ``source`` and ``quarantined_at``.
    ``query_id`` is the streaming query's id (the checkpoint's); when None it is read from the
    Spark thread running the batch. ``stage`` defaults to ``source``.

    Example, inside a batch::

        bad = parsed.where("reason IS NOT NULL").select("position", "raw", "reason")
        write_quarantine(bad, model_name="orders_merge", batch_id=7, source="json",
                         warehouse=project.target.warehouse, query_id=query_id)
    """
    session = rejected.sparkSession
    missing = [c for c in REQUIRED_COLUMNS if c not in rejected.columns]
    if missing:
        raise QuarantineError(f"rejected rows lack the column(s) {', '.join(missing)}")
    location = ensure_quarantine_table(session, model_name, warehouse)
    txn = quarantine_transaction(
        query_id or _query_id(session, model_name), model_name, stage or source, batch_id
    )
    present = set(rejected.columns)
    rows = rejected.select(
        F.lit(model_name).alias("model"),
        F.lit(batch_id).cast("bigint").alias("batch_id"),
        F.lit(source).alias("source"),
        *[F.col(c).cast("string").alias(c) for c in REQUIRED_COLUMNS],
        F.current_timestamp().alias("quarantined_at"),
        *[
            (F.col(f"`{name}`") if name in present else F.lit(None)).cast(kind).alias(name)
            for name, kind in DETAIL_COLUMNS.items()
        ],
    )
    writer = (
        rows.write.format("delta")
        .mode("append")
        .option("txnAppId", txn.app_id)
        .option("txnVersion", str(txn.version))
    )
    try:
        retry_on_conflict(lambda: writer.save(str(location)))
    except Exception as exc:  # the JVM error text is what there is to say
        raise QuarantineError(
            f"could not write the rejected rows of batch {batch_id} of model '{model_name}' "
            f"to {location}: {first_line(exc)}",
            hint="the batch was not committed: it runs again on the next start",
        ) from None


def _query_id(session: SparkSession, model_name: str) -> str:
    """The streaming query's id (kept in its checkpoint), which Spark sets on the thread that
    runs the batch. Stable across restarts; new when the checkpoint is reset."""
    query_id = session.sparkContext.getLocalProperty(QUERY_ID_PROPERTY)
    if not query_id:
        raise QuarantineError(
            f"model '{model_name}': the streaming query id is unknown, so the quarantine write "
            "cannot be made idempotent",
            hint="quarantine inside foreachBatch, or pass the query id",
        )
    return query_id
