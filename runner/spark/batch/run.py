"""The foreachBatch function: one micro-batch of one model, start to finish.

It registers the batch as a temp view on the batch's own SparkSession, renders the model for
this batch id (rendering belongs to the templating layer; this module only runs SQL), and runs
each statement in order. Every DML statement runs under a Delta idempotent-write identity, so a
batch that Spark replays after a crash does not apply twice.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime

from pyspark.sql import DataFrame

from runner.checkpoint_files import checkpoint_query_id
from runner.error_text import first_line_with_cause
from runner.errors import ModelSqlError, RunnerError
from runner.lineage import quarantine_location
from runner.model_sql import compile_batch
from runner.project import Project
from runner.s3_files import reach_s3_without_jvm
from runner.spark.batch.event_log_buffer import EventLogBuffer
from runner.spark.batch.eventlog import record_batch
from runner.spark.batch.expectations import apply_expectations
from runner.spark.batch.facts import prepare_batch_facts
from runner.spark.batch.report import BatchReport
from runner.spark.batch.schema_drift import apply_schema_drift
from runner.spark.delta.replay import committed_metrics
from runner.spark.delta.state_warmup import StateWarmer
from runner.spark.delta.statements import StatementResult, run_statement, statement_transaction
from runner.spark.sources.source_batch import BatchSourceContext, quarantine_rejected
from runner.spark.sources.streams import prepare_batch
from runner.specs.model import ModelSpec
from runner.storage import Location


class BatchFailed(RunnerError):
    """A batch failed outside any statement of the model (source, event log, Spark)."""


class StopRequested(Exception):
    """Raised at the start of a batch after a stop was asked for: the batch did no work, so
    Spark replays it on the next start."""


def run_batch(
    project: Project,
    model: ModelSpec,
    batch_df: DataFrame,
    batch_id: int,
    *,
    query_id: str,
    on_statement: Callable[[str, int, StatementResult], None] | None = None,
    may_be_replay: bool = True,
    event_log: bool = True,
    log_buffer: EventLogBuffer | None = None,
    warmer: StateWarmer | None = None,
) -> BatchReport:
    """Everything one micro-batch does, on ``batch_df``'s own session: source-side work, the
    schema-drift policy, the source's quarantine write, row expectations, the batch view, the
    model's statements (DML under Delta's idempotent-write identity
    ``<query_id>:<model>:<statement>`` / ``batch_id``), maintenance, and the event-log row. What
    the source cached for the batch is released when the batch ends, whether it committed or
    failed.

    The report times each phase before the statements (``source``, its quarantine write
    included; ``schema_drift``; ``expectations``; ``render``) and each statement; ``seconds`` is
    the whole batch up to the event-log write, which cannot time itself (``runner history
    --timings`` derives it).

    ``may_be_replay`` is False only when the caller knows Spark is not replaying the batch
    (BatchExecutor: any batch after the first its query ran, and a first one the offset log did
    not hold when the query started); the event-log write then skips looking for the batch's
    row. ``event_log`` is False only for a model unit test's batch: its row would go to a scratch
    event log dropped unread with the test's scratch target. ``log_buffer``, given by a stream
    on a classic session, takes the row to its file, appended later with others
    (``event_log_buffer.py``); without it the row is appended in the batch. ``warmer``, given
    when another batch follows on this session (a stream), starts computing the new Delta state
    of the target, and of the quarantine table when the batch wrote to it, once the statements
    have committed, beside the event-log write (``state_warmup.py``).

    ``foreachBatch`` calls it through BatchExecutor; model unit tests call it directly with
    batches they build, so both go through exactly this code.
    """
    clock = PhaseClock()
    report = BatchReport(model.name, batch_id, started_at=datetime.now(UTC).replace(tzinfo=None))
    session = batch_df.sparkSession
    stream = project.stream_of(model)
    source_context = BatchSourceContext(
        model.name, batch_id, project.target.warehouse, query_id, project.root
    )
    # The source's work (parse, count); its cached frame is this batch's to release.
    source = prepare_batch(stream, batch_df, source_context)
    report.quarantined = source.counts.rows_quarantined
    report.rescued = source.counts.rows_rescued
    try:
        # a source that counted its rows (in the job that filled its cache) saves a count job
        counted = source.row_count
        report.input_rows = counted if counted is not None else source.rows.count()
        report.phases["source"] = clock.lap()
        # schema-drift policy, rescued fields included: may stop the batch before anything of
        # it is written, or ALTER the target
        rows = apply_schema_drift(session, project, model, source.rows)
        report.phases["schema_drift"] = clock.lap()
        # the source's malformed input, once the batch may go on (part of the source's time);
        # a warm-up still computing the quarantine table's state is waited for, not repeated
        if warmer is not None and source.counts.rows_quarantined:
            warmer.settle()
        quarantine_rejected(source, source_context)
        report.phases["source"] += clock.lap()
        # row expectations: counted, failing rows dropped or quarantined, or the batch stops;
        # the rows left are registered as the batch view
        rows, applied = apply_expectations(
            model, rows, batch_id, warehouse=project.target.warehouse, query_id=query_id
        )
        report.expectations = applied.outcomes
        report.quarantined += applied.quarantined  # rows, not failed expectations
        report.dropped = applied.dropped
        report.phases["expectations"] = clock.lap()
        # the batch's real columns and prune ranges, for rendering
        facts = prepare_batch_facts(session, model, rows)
        statements = compile_batch(project, model, batch_id, facts)
        report.phases["render"] = clock.lap()
        target_location = project.target.table_location(model.target_table)
        for statement in statements:
            txn = None
            if statement.is_dml:
                txn = statement_transaction(query_id, model.name, statement.label, batch_id)
            try:
                result = run_statement(session, statement, txn)
            except ModelSqlError as exc:
                raise with_type_differences(exc, rows, target_location, model) from None
            if result.skipped and txn is not None:  # a replay: what did the first attempt do?
                recovered = committed_metrics(target_location, txn)
                if recovered is not None:
                    result.metrics, result.recovered = recovered, True
            report.statements.append(result)
            if on_statement is not None:
                on_statement(model.name, batch_id, result)
        if warmer is not None:
            # the tables this batch wrote, whose next write reads their new state
            written = [target_location] if statements else []
            if report.quarantined:
                written.append(quarantine_location(project.target.warehouse, model.name))
            warmer.warm(session, *written)
    finally:
        source.release()
    report.seconds = clock.elapsed()
    if event_log:
        if log_buffer is not None:
            log_buffer.record(session, report, query_id, may_be_replay=may_be_replay)
        else:
            record_batch(session, project.target, report, query_id, may_be_replay=may_be_replay)
    return report


# A value the target's column type cannot hold: Spark names the value and the types, never the
# column; the batch's and the target's schemas do.
_CAST_FAILURES = ("[CAST_INVALID_INPUT]", "[CAST_OVERFLOW", "[NUMERIC_VALUE_OUT_OF_RANGE]")


def with_type_differences(
    error: ModelSqlError, rows: DataFrame, target_location: Location, model: ModelSpec
) -> ModelSqlError:
    """``error``, when a value of the batch did not fit the target, with a hint naming the
    columns whose types differ between the batch and the target."""
    if not any(marker in error.message for marker in _CAST_FAILURES):
        return error
    try:
        target = rows.sparkSession.read.format("delta").load(str(target_location)).schema
    except Exception:  # the hint is a help; the error stands without it
        return error
    theirs = {field.name.lower(): field.dataType for field in target.fields}
    differing = [
        f"{field.name} ({field.dataType.simpleString().upper()} in the batch, "
        f"{theirs[field.name.lower()].simpleString().upper()} in {model.target_table})"
        for field in rows.schema.fields
        if field.name.lower() in theirs and field.dataType != theirs[field.name.lower()]
    ]
    if differing:
        error.hint = (
            f"column(s) whose type differs from the target's: {', '.join(differing)}; cast "
            "them in the model, or declare them in the stream's schema with the target's type "
            "(a value that cannot be cast is then quarantined)"
        )
    return error


class PhaseClock:
    """Times the consecutive phases of a batch with the monotonic clock: each ``lap`` is the
    time since the previous lap (or since the clock started), so the phases never overlap."""

    def __init__(self) -> None:
        self._started = self._mark = time.monotonic()

    def lap(self) -> float:
        now = time.monotonic()
        took, self._mark = now - self._mark, now
        return took

    def elapsed(self) -> float:
        return time.monotonic() - self._started


class BatchExecutor:
    """Callable passed to ``foreachBatch`` for one model."""

    def __init__(
        self,
        project: Project,
        model: ModelSpec,
        checkpoint: Location,
        on_batch: Callable[[BatchReport], None] | None = None,
        on_statement: Callable[[str, int, StatementResult], None] | None = None,
        replay_bound: int | None = None,
        *,
        warm_state: bool = True,
        group_event_log: bool = False,
    ) -> None:
        """``replay_bound``: the newest batch of the checkpoint's offset log when the query
        started (-1: none), known when no other run can write the log meanwhile. Spark replays
        only the first batch a query runs after it starts, and only one the offset log already
        held: a first batch past the bound is new, and its event-log row cannot be there yet.
        None: not known (over Spark Connect a killed client's query may still run on the
        server until the new one takes over), so the first batch looks for its row.
        ``warm_state``: compute the target's new Delta state between batches (``StateWarmer``);
        False in a Spark Connect server's foreachBatch worker, where it is not measured.
        ``group_event_log``: write each batch's event-log row to its file, appended with others
        by ``flush_event_log`` (the query's watcher) and ``settle`` (``event_log_buffer.py``);
        only where this process sees the query end, never in a Connect server's worker."""
        self.project = project
        self.model = model
        self.checkpoint = checkpoint
        self.replay_bound = replay_bound
        self.on_batch = on_batch
        self.on_statement = on_statement
        self.failure: RunnerError | None = None
        self.warmer = StateWarmer() if warm_state else None
        self.log_buffer = EventLogBuffer(project.target, model.name) if group_event_log else None
        self.stop_requested = threading.Event()
        self.idle = threading.Event()
        self.idle.set()
        self._query_id: str | None = None
        self.last_batch_id: int | None = None  # the newest batch this process completed

    def __call__(self, batch_df: DataFrame, batch_id: int) -> None:
        self.idle.clear()
        try:
            if self.stop_requested.is_set():
                raise StopRequested(f"stop requested before batch {batch_id}")
            self._run(batch_df, batch_id)
        except RunnerError as exc:
            self.failure = exc  # the JVM only carries the text back; keep the typed error
            raise
        except StopRequested:
            raise
        except Exception as exc:
            self.failure = BatchFailed(
                f"batch {batch_id} of model '{self.model.name}' failed: "
                f"{first_line_with_cause(exc)}",
                file=self.model.file,
                hint="the batch was not committed: it runs again on the next start",
            )
            raise
        finally:
            self.idle.set()

    def _run(self, batch_df: DataFrame, batch_id: int) -> None:
        reach_s3_without_jvm(self.project.target)  # over Connect this runs on the server
        report = run_batch(
            self.project,
            self.model,
            batch_df,
            batch_id,
            query_id=self.query_id,
            on_statement=self.on_statement,
            may_be_replay=self.may_be_replay(batch_id),
            log_buffer=self.log_buffer,
            warmer=self.warmer,
        )
        self.last_batch_id = batch_id
        if self.on_batch is not None:
            self.on_batch(report)

    def flush_event_log(self) -> None:
        """Append the batches' waiting event-log rows once the oldest has waited long enough
        (``EventLogBuffer.flush_if_due``); called by the query's watcher, between its looks."""
        if self.log_buffer is not None:
            self.log_buffer.flush_if_due()

    def settle(self) -> None:
        """Once the query has ended: wait for what the last batch left running in the
        background (the state warm-up), so no Spark call outlives it, and append the event-log
        rows still waiting."""
        if self.warmer is not None:
            self.warmer.settle()
        if self.log_buffer is not None:
            self.log_buffer.flush_at_end()

    def may_be_replay(self, batch_id: int) -> bool:
        """Whether Spark may be running ``batch_id`` again (``replay_bound``): only the first
        batch a query runs after it starts, and only one the offset log held then."""
        if self.last_batch_id is not None:
            return False
        return self.replay_bound is None or batch_id <= self.replay_bound

    @property
    def query_id(self) -> str:
        """The streaming query's id, kept in the checkpoint: stable across restarts from the
        same checkpoint, new when the checkpoint is reset."""
        if self._query_id is None:
            found = checkpoint_query_id(self.checkpoint)
            if found is None:
                raise RuntimeError(f"no query id in {self.checkpoint / 'metadata'}")
            self._query_id = found
        return self._query_id
