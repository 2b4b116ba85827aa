"""Row expectations on a batch: count, drop, quarantine or fail (runner/expectations.py has the
declarations, their validation and the SQL this runs).

Applied by ``run_batch`` to the persisted batch before the model's statements, by running the
statements ``runner compile`` shows (``expectation_checks``) on the batch's session: one view
adds each row's failed expectation names, one aggregate pass counts each expectation's
failures; a ``fail`` expectation with failures stops the batch before any statement or
quarantine write runs; rows failing a ``quarantine`` expectation are written to the model's
quarantine table under their own idempotent-write identity (stage ``expectations``), so a
replayed batch neither loses nor duplicates them; rows failing a ``drop`` or ``quarantine``
expectation are left out of the batch view the model reads.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from py4j.protocol import Py4JError
from pyspark.errors import PySparkException
from pyspark.sql import DataFrame, Row, SparkSession

from runner.error_text import first_line
from runner.errors import RunnerError
from runner.expectations import (
    DROPPED_ROWS,
    QUARANTINED_ROWS,
    SAMPLE_ROWS,
    Expectation,
    ExpectationChecks,
    expectation_checks,
)
from runner.spark.sources.quarantine import write_quarantine
from runner.specs.model import ModelSpec
from runner.storage import Location


class ExpectationFailed(RunnerError):
    """A ``fail`` expectation had failing rows: the batch stopped before any write."""


@dataclass(frozen=True)
class ExpectationsApplied:
    """What the expectations did to one batch: each one's counts, and the rows quarantined and
    dropped (each row once, however many expectations it fails)."""

    outcomes: list[ExpectationOutcome] = field(default_factory=list)
    quarantined: int = 0
    dropped: int = 0


@dataclass(frozen=True)
class ExpectationOutcome:
    """One expectation's result on one batch."""

    name: str
    action: str
    passed: int
    failed: int


def apply_expectations(
    model: ModelSpec,
    batch_df: DataFrame,
    batch_id: int,
    *,
    warehouse: Location,
    query_id: str,
) -> tuple[DataFrame, ExpectationsApplied]:
    """Register the rows the model's statements may read as its batch view, and return them
    with each expectation's counts and the rows left out."""
    expectations = model.config.expectations
    if not expectations:
        batch_df.createOrReplaceTempView(model.batch_view)
        return batch_df, ExpectationsApplied()
    session = batch_df.sparkSession
    line = model.config_line_of("expectations")
    columns = batch_df.columns
    checks = expectation_checks(
        expectations,
        model_name=model.name,
        stream=model.config.stream or "",
        batch_view=model.batch_view,
        batch_id=batch_id,
        columns=columns,
        unique_keys=model.config.unique_keys,
    )
    batch_df.createOrReplaceTempView(checks.input_view)
    try:
        session.sql(checks.check)
        totals = session.sql(checks.counts).first()
    except (PySparkException, Py4JError) as exc:
        raise ExpectationFailed(
            f"model '{model.name}': an expectation cannot be evaluated on batch {batch_id}: "
            f"{first_line(exc)}",
            file=model.file,
            line=line,
            hint="each condition may use the batch's columns: " + ", ".join(columns),
        ) from None
    assert totals is not None  # an aggregate without grouping has one row
    rows = int(totals[0])
    failed = [int(totals[index + 1] or 0) for index in range(len(expectations))]
    outcomes = [
        ExpectationOutcome(e.name, e.action, rows - count, count)
        for e, count in zip(expectations, failed, strict=True)
    ]
    for expectation, outcome in zip(expectations, outcomes, strict=True):
        if expectation.action == "fail" and outcome.failed:
            raise _failure(model, session, checks, expectation, outcome, batch_id, line)
    if checks.quarantine is not None and any(
        o.failed for o in outcomes if o.action == "quarantine"
    ):
        write_quarantine(
            session.sql(checks.quarantine),
            model_name=model.name,
            batch_id=batch_id,
            source="expectation",
            warehouse=warehouse,
            query_id=query_id,
            stage="expectations",
        )
    session.sql(checks.batch)
    applied = ExpectationsApplied(
        outcomes,
        quarantined=_count(totals, QUARANTINED_ROWS),
        dropped=_count(totals, DROPPED_ROWS),
    )
    return session.table(model.batch_view), applied


def _count(totals: Row, column: str) -> int:
    """A row count of the counts query; 0 when it has no such column (no such action)."""
    return int(totals.asDict().get(column) or 0)


def _failure(
    model: ModelSpec,
    session: SparkSession,
    checks: ExpectationChecks,
    expectation: Expectation,
    outcome: ExpectationOutcome,
    batch_id: int,
    line: int,
) -> ExpectationFailed:
    sample = session.sql(checks.sample(expectation.name, SAMPLE_ROWS)).collect()
    shown = "\n".join(
        "    " + ", ".join(f"{k}={v!r}" for k, v in row.asDict().items()) for row in sample
    )
    return ExpectationFailed(
        f"expectation '{expectation.name}' ({expectation.condition}) failed for "
        f"{outcome.failed} of {outcome.passed + outcome.failed} rows of batch {batch_id} of "
        f"model '{model.name}'; the batch stopped before any write",
        file=model.file,
        line=line,
        detail=f"first {len(sample)} failing rows:\n{shown}",
        hint="fix the input or the condition (or make it on_violation='quarantine'); the batch "
        "runs again on the next start",
    )
