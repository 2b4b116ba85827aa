"""foreachBatch over Spark Connect: the batch function runs in a Python worker on the server.

What changes from a local run, and how the runner handles it:

- The function is pickled and sent to the server. A loaded Project (its Jinja environment) does
  not pickle, so ``RemoteBatch`` carries only the project's directory, target and vars, and the
  worker loads the project once (the directory must be readable by the server at that path).
- ``batch_df.sparkSession`` in the worker is the session that *started* the query, not a child
  session per query as in local mode. Each model's query is therefore started from its own
  server-side session (``query_session``): temp views (``orders_merge__batch``, a model's own
  views) and the per-statement Delta idempotency settings (``txnAppId`` / ``txnVersion``) of
  one model can never be seen by another model's MERGE.
- Nothing the worker does calls back into the client. The client learns each batch from the
  event log, which run_batch writes in every batch (``EventLogProgress``), and a failure from
  the query's exception: the worker raises the model's error (file, line, hint) as one line of
  JSON (``RemoteBatchFailed``) that ``remote_error`` turns back into the same typed error.
- Each model's server-side session is released when its query has ended
  (``release_connect_session``), and the client's own at exit.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pyspark.sql import DataFrame, Row, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.streaming import StreamingQuery

from runner.errors import RunnerError
from runner.model_sql import CompiledStatement
from runner.spark.batch.eventlog import event_log_location
from runner.spark.batch.report import BatchReport
from runner.spark.batch.run import BatchExecutor
from runner.spark.delta.statements import StatementResult
from runner.spark.delta.targets import delta_table_exists
from runner.specs.target import TargetSpec
from runner.storage import Location


def query_session(spark: SparkSession, target: TargetSpec) -> SparkSession:
    """The session a model's query starts from: a server-side clone of ``spark`` over Spark
    Connect (own confs, own temp views), ``spark`` itself otherwise (foreachBatch already gets
    a child session per query there)."""
    if target.kind != "connect":
        return spark
    from runner.spark.session.connect_watch import watch_client, watch_of

    clone: SparkSession = spark.cloneSession()  # type: ignore[attr-defined]  # Connect's
    watch = watch_of(spark)
    if watch is not None:  # the clone's client starts with pyspark's own retry policy
        watch_client(clone, watch)
    return clone


@dataclass
class RemoteBatch:
    """The foreachBatch function sent to a Spark Connect server for one model."""

    root: Path
    target: str
    vars: dict[str, Any]
    model: str
    checkpoint: Location
    _executor: BatchExecutor | None = None  # built in the worker, on the first batch

    def __call__(self, batch_df: DataFrame, batch_id: int) -> None:
        try:
            if self._executor is None:
                from runner.project import load

                project = load(self.root, self.target, self.vars)
                model = project.models[self.model]
                self._executor = BatchExecutor(project, model, self.checkpoint, warm_state=False)
            self._executor(batch_df, batch_id)
        except RunnerError as exc:
            raise RemoteBatchFailed(exc) from None
        except Exception:
            failure = self._executor.failure if self._executor is not None else None
            if failure is None:
                raise
            raise RemoteBatchFailed(failure) from None


# What a worker's error looks like in the query's exception text: the last line of the
# Python traceback is
# "runner.spark.streaming.remote_batches.RemoteBatchFailed: runner-error: {...}".
REMOTE_ERROR_MARK = "runner-error: "


class RemoteBatchFailed(Exception):
    """A RunnerError raised in the server's batch worker, as one line the client can read."""

    def __init__(self, error: RunnerError) -> None:
        fields = {
            "type": type(error).__name__,
            "message": error.message,
            "file": str(error.file) if error.file is not None else None,
            "line": error.line,
            "hint": error.hint,
            "detail": error.detail,
        }
        super().__init__(REMOTE_ERROR_MARK + json.dumps(fields))


def remote_error(text: str) -> RunnerError | None:
    """The RunnerError a server's batch worker raised, rebuilt from a query's exception text;
    None when the text carries none."""
    start = text.rfind(REMOTE_ERROR_MARK)
    if start < 0:
        return None
    line = text[start + len(REMOTE_ERROR_MARK) :].splitlines()[0]
    try:
        fields = json.loads(line)
    except ValueError:
        return None
    kind = _error_types().get(fields.pop("type", ""), RunnerError)
    return kind(fields.pop("message", ""), **fields)


def _error_types() -> dict[str, type[RunnerError]]:
    found: dict[str, type[RunnerError]] = {}
    pending: list[type[RunnerError]] = [RunnerError]
    while pending:
        kind = pending.pop()
        found[kind.__name__] = kind
        pending.extend(kind.__subclasses__())
    return found


class EventLogProgress:
    """The batches a remote query finished in this run, read back from the event log.

    The event log also holds the batches of earlier runs of the same checkpoint (same query
    id): the newest batch it holds for the model when the query starts is this run's baseline,
    and only later batches are returned, so a restart does not print again what an earlier run
    did. (A query's ``recentProgress`` cannot say where the run began: a short run may have
    ended, its progress gone, before the client looks.)"""

    def __init__(self, spark: SparkSession, target: TargetSpec, model: str) -> None:
        self.spark = spark
        self.location = event_log_location(target)
        self.model = model
        self.last_batch: int | None = self._newest_logged()
        self._seen_progress: int | None = None

    def _newest_logged(self) -> int | None:
        if not delta_table_exists(self.spark, self.location):
            return None
        newest = (
            self.spark.read.format("delta")
            .load(str(self.location))
            .where(f"model = '{self.model}'")
            .agg(F.max("batch_id"))
            .first()
        )
        return None if newest is None else newest[0]

    def new_batches(self, query: StreamingQuery, *, final: bool = False) -> list[BatchReport]:
        """Reports of batches newer than the last one returned. Reads the event log only when
        the query reported a new batch (or ``final``)."""
        progress = query.lastProgress if query.isActive else None
        batch = progress["batchId"] if progress else None
        if not final and (batch is None or batch == self._seen_progress):
            return []
        self._seen_progress = batch
        after = -1 if self.last_batch is None else self.last_batch
        rows = (
            self.spark.read.format("delta")
            .load(str(self.location))
            .where(f"model = '{self.model}' AND query_id = '{query.id}' AND batch_id > {after}")
            .orderBy("batch_id")
            .collect()
        )
        reports = [report_from_row(row) for row in rows]
        if reports:
            self.last_batch = reports[-1].batch_id
        return reports


def report_from_row(row: Row) -> BatchReport:
    """A BatchReport rebuilt from its event-log row (what progress output needs)."""
    report = BatchReport(
        row["model"],
        row["batch_id"],
        started_at=row["started_at"],
        seconds=row["seconds"],
        input_rows=row["input_rows"],
        quarantined=row["quarantined"] or 0,
        dropped=row.asDict().get("dropped") or 0,  # a row written before it had the column
        # a row written before the event log had phases has none
        phases={p["phase"]: p["seconds"] for p in row.asDict().get("phases") or []},
    )
    for item in row["statements"] or []:
        phase, _, index = item["label"].partition("[")
        statement = CompiledStatement(phase, int(index.rstrip("]")), item["keyword"], Path(), 0)
        metrics = {
            f"num_{name}_rows": item[name]
            for name in ("inserted", "updated", "deleted")
            if item[name] is not None
        }
        report.statements.append(
            StatementResult(statement, item["seconds"], metrics=metrics, skipped=item["skipped"])
        )
    return report
