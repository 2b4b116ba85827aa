"""Where each second of a batch went, for ``runner history --timings``.

The event-log row of a batch holds what ``run_batch`` measured: the phases before the
statements (``BATCH_PHASES``), each statement, and the whole (``seconds``). What happens after
the row is written cannot be in the row; it is derived here, once per history call and never
on a batch's path, from files that exist anyway:

- event log: until the batch's row was durable, minus the end of the batch (``started_at +
  seconds``). A stream's row says when it was written to its file (``logged_at``; it is
  appended to the event log later, with others: runner/spark/batch/event_log_buffer.py). A row
  appended in its batch has none: its time is the event log's own Delta commit of the batch,
  found by the identity the commit declares in its userMetadata (a txn action, for rows
  written before the event log stopped using Delta's idempotent-write check);
- checkpoint: the modification time of ``<checkpoint>/commits/<batch_id>``, which Spark writes
  once foreachBatch has returned, minus the time the row was durable;
- Delta's part of each DML statement: the operationMetrics times of the statement's commit to
  the target (found by its identity), e.g. a MERGE's execution, scan and rewrite.

What is not there (a table on object storage, a row older than the log files kept, a checkpoint
reset since the row was written, a statement that was skipped) is None, shown as "–": never
estimated.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from typing import Any

from runner import storage
from runner.checkpoint_files import checkpoint_query_id
from runner.model_sql import DML_KEYWORDS
from runner.spark.batch.eventlog import event_log_location, event_log_transaction
from runner.spark.batch.report import BATCH_PHASES
from runner.spark.delta.delta_log import Commit, commits_of
from runner.spark.delta.statements import Transaction, statement_transaction
from runner.specs.model import ModelSpec
from runner.specs.target import TargetSpec
from runner.storage import Location

# How far back the logs are read for the rows shown (their commits are among the newest), and
# the clock's tolerance when a commit older than every row's start ends the search.
SCAN_LIMIT = 10_000
CLOCK_SLACK_MS = 60_000
ROUNDING_SECONDS = 0.001  # a row's seconds are rounded to the millisecond
# operationMetrics of a DML commit, in milliseconds -> the names timings show (in seconds)
DELTA_TIMES = {
    "executionTimeMs": "execution",
    "scanTimeMs": "scan",
    "rewriteTimeMs": "rewrite",
    "materializeSourceTimeMs": "materialize_source",
}


@dataclass(frozen=True)
class TimingFiles:
    """Where a model's timings are read from: the event log, its target, its checkpoint."""

    event_log: Location
    target: Location
    checkpoint: Location


def timing_files(target: TargetSpec, model: ModelSpec) -> TimingFiles:
    return TimingFiles(
        event_log_location(target),
        target.table_location(model.target_table),
        target.checkpoint_for(model.name),
    )


@dataclass(frozen=True)
class StatementTiming:
    keyword: str
    seconds: float | None
    skipped: bool = False
    delta: dict[str, float] = field(default_factory=dict)  # DELTA_TIMES' names; seconds


@dataclass(frozen=True)
class BatchTimings:
    """One batch's seconds, part by part (None: not known); the median row has no batch_id.
    Every value is rounded to the millisecond, as the event log records seconds, so the table
    and the JSON show the same numbers."""

    batch_id: int | None
    total: float | None  # run_batch up to the event-log write (the row's ``seconds``)
    phases: dict[str, float | None]  # BATCH_PHASES, in order
    statements: dict[str, StatementTiming]  # by label (``batch[1]``), in order
    other: float | None  # total minus phases and statements: progress output, replay look-ups
    event_log: float | None
    checkpoint: float | None

    def as_dict(self) -> dict[str, Any]:
        """The same numbers for ``--format json``."""
        return {
            "batch_id": self.batch_id,
            "total": self.total,
            "phases": self.phases,
            "statements": [
                {"label": label, **asdict(timing)} for label, timing in self.statements.items()
            ],
            "other": self.other,
            "event_log": self.event_log,
            "checkpoint": self.checkpoint,
        }


def batch_timings(rows: list[dict[str, Any]], model: str, files: TimingFiles) -> list[BatchTimings]:
    """The timings of the batches of the event-log ``rows`` (plain dicts, oldest first) of
    ``model``: each log is read once for all of them."""
    if not rows:
        return []
    not_before_ms = min(_epoch_ms(row["started_at"]) for row in rows) - CLOCK_SLACK_MS
    log_commits = commits_of(
        files.event_log,
        {_event_log_txn(row, model) for row in rows if row.get("logged_at") is None},
        limit=SCAN_LIMIT,
        not_before_ms=not_before_ms,
    )
    statement_commits = commits_of(
        files.target,
        {txn for row in rows for _, txn in _dml_transactions(row, model)},
        limit=SCAN_LIMIT,
        not_before_ms=not_before_ms,
    )
    checkpoint_query = checkpoint_query_id(files.checkpoint)
    timings = []
    for row in rows:
        logged_ms = _logged_ms(row, log_commits.get(_event_log_txn(row, model)))
        committed = None
        if logged_ms is not None and row["query_id"] == checkpoint_query:
            committed = checkpoint_commit_ms(files.checkpoint, row["batch_id"])
        timings.append(_timings_of(row, model, logged_ms, statement_commits, committed))
    return timings


def _logged_ms(row: dict[str, Any], log_commit: Commit | None) -> float | None:
    """When the batch's row was durable: written to its file, or its event-log commit."""
    if row.get("logged_at") is not None:
        return _epoch_ms(row["logged_at"])
    return log_commit.timestamp_ms if log_commit is not None else None


def _timings_of(
    row: dict[str, Any],
    model: str,
    logged_ms: float | None,
    statement_commits: dict[Transaction, Commit],
    checkpoint_ms: float | None,
) -> BatchTimings:
    recorded = {p["phase"]: p["seconds"] for p in row.get("phases") or []}
    phases = {name: recorded.get(name) for name in BATCH_PHASES}
    dml = dict(_dml_transactions(row, model))
    statements = {
        s["label"]: StatementTiming(
            s["keyword"],
            s["seconds"],
            s["skipped"],
            _delta_times(statement_commits.get(dml[s["label"]])) if s["label"] in dml else {},
        )
        for s in row["statements"] or []
    }
    batch_end_ms = _epoch_ms(row["started_at"]) + row["seconds"] * 1000
    return BatchTimings(
        batch_id=row["batch_id"],
        total=row["seconds"],
        phases=phases,
        statements=statements,
        other=_other(row["seconds"], recorded, statements) if recorded else None,
        event_log=_seconds_between(batch_end_ms, logged_ms),
        checkpoint=_seconds_between(logged_ms, checkpoint_ms),
    )


def _other(total: float, phases: dict[str, float], statements: dict[str, StatementTiming]) -> float:
    accounted = sum(phases.values()) + sum(s.seconds or 0.0 for s in statements.values())
    return _ms(max(0.0, total - accounted))  # each part was rounded to the millisecond


def _event_log_txn(row: dict[str, Any], model: str) -> Transaction:
    return event_log_transaction(row["query_id"], model, row["batch_id"])


def _dml_transactions(row: dict[str, Any], model: str) -> list[tuple[str, Transaction]]:
    """(label, identity) of each DML statement of the row that committed in this batch (a
    skipped one's commit is an earlier attempt's)."""
    return [
        (s["label"], statement_transaction(row["query_id"], model, s["label"], row["batch_id"]))
        for s in row["statements"] or []
        if s["keyword"] in DML_KEYWORDS and not s["skipped"]
    ]


def _delta_times(commit: Commit | None) -> dict[str, float]:
    if commit is None:
        return {}
    return {
        name: int(commit.metrics[key]) / 1000
        for key, name in DELTA_TIMES.items()
        if key in commit.metrics
    }


def checkpoint_commit_ms(checkpoint: Location, batch_id: int) -> float | None:
    """When Spark committed ``batch_id`` to the checkpoint (milliseconds since the epoch): the
    modification time of its file in ``commits/``; None when there is none."""
    return storage.modified_ms(checkpoint / "commits" / str(batch_id))


def median_timings(batches: list[BatchTimings]) -> BatchTimings:
    """Each part's median over the batches that have it (the statements by label)."""
    statements = {}
    for label in dict.fromkeys(label for b in batches for label in b.statements):
        of_label = [b.statements[label] for b in batches if label in b.statements]
        names = dict.fromkeys(name for s in of_label for name in s.delta)
        statements[label] = StatementTiming(
            of_label[-1].keyword,
            _median(s.seconds for s in of_label),
            delta={
                name: took
                for name in names
                if (took := _median(s.delta.get(name) for s in of_label)) is not None
            },
        )
    return BatchTimings(
        batch_id=None,
        total=_median(b.total for b in batches),
        phases={name: _median(b.phases.get(name) for b in batches) for name in BATCH_PHASES},
        statements=statements,
        other=_median(b.other for b in batches),
        event_log=_median(b.event_log for b in batches),
        checkpoint=_median(b.checkpoint for b in batches),
    )


def _median(values: Iterable[float | None]) -> float | None:
    known = [v for v in values if v is not None]
    return _ms(statistics.median(known)) if known else None


def _seconds_between(start_ms: float | None, end_ms: float | None) -> float | None:
    """From ``start_ms`` to ``end_ms``, in seconds. Less than a millisecond below zero is the
    rounding of a row's seconds (to the millisecond), when a stream's row is handed to its file
    within a millisecond of the batch's end: that is 0."""
    if start_ms is None or end_ms is None:
        return None
    took = (end_ms - start_ms) / 1000
    return 0.0 if -ROUNDING_SECONDS < took < 0 else _ms(took)


def _epoch_ms(naive_utc: datetime) -> float:
    return naive_utc.replace(tzinfo=UTC).timestamp() * 1000


def _ms(seconds: float) -> float:
    return round(seconds, 3)
