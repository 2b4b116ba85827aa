"""Row expectations on a batch: count, drop, quarantine or fail (runner/expectations.py has the
declarations and their validation).

Applied by ``run_batch`` to the persisted batch before the model's statements: one aggregate
pass counts each expectation's failures; a ``fail`` expectation with failures stops the batch
before any statement or quarantine write runs; rows failing a ``quarantine`` expectation are
written to the model's quarantine table under their own idempotent-write identity (stage
``expectations``), so a replayed batch neither loses nor duplicates them; rows failing a
``drop`` or ``quarantine`` expectation are left out of the batch view the model reads.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from py4j.protocol import Py4JError
from pyspark.errors import PySparkException
from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from runner.config import ModelSpec
from runner.error_text import first_line
from runner.errors import RunnerError
from runner.expectations import Expectation
from runner.spark.quarantine import write_quarantine

FAILED = "__failed_expectations"
SAMPLE_ROWS = 5


class ExpectationFailed(RunnerError):
    """A ``fail`` expectation had failing rows: the batch stopped before any write."""


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
    warehouse: Path,
    query_id: str,
) -> tuple[DataFrame, list[ExpectationOutcome]]:
    """The rows the model's statements may read, and each expectation's counts."""
    expectations = model.config.expectations
    if not expectations:
        return batch_df, []
    line = model.config_line_of("expectations")
    columns = batch_df.columns
    checked = batch_df.withColumn(FAILED, _failed_names(expectations))
    try:
        totals = checked.agg(
            F.count(F.lit(1)).alias("__rows"),
            *[
                F.sum(F.array_contains(FAILED, e.name).cast("bigint")).alias(e.name)
                for e in expectations
            ],
        ).first()
    except (PySparkException, Py4JError) as exc:
        raise ExpectationFailed(
            f"model '{model.name}': an expectation cannot be evaluated on batch {batch_id}: "
            f"{first_line(exc)}",
            file=model.file,
            line=line,
            hint="each condition may use the batch's columns: " + ", ".join(columns),
        ) from None
    assert totals is not None  # an aggregate without grouping has one row
    rows = int(totals["__rows"])
    outcomes = [
        ExpectationOutcome(
            e.name, e.action, rows - int(totals[e.name] or 0), int(totals[e.name] or 0)
        )
        for e in expectations
    ]
    for expectation, outcome in zip(expectations, outcomes, strict=True):
        if expectation.action == "fail" and outcome.failed:
            raise _failure(model, checked, expectation, outcome, columns, batch_id, line)
    quarantined = _names(expectations, "quarantine")
    if quarantined and any(o.failed for o in outcomes if o.action == "quarantine"):
        rejected = checked.where(F.arrays_overlap(FAILED, _literals(quarantined)))
        write_quarantine(
            rejected.select(
                _position(model, columns, batch_id).alias("position"),
                F.to_json(F.struct(*[F.col(f"`{c}`") for c in columns])).alias("raw"),
                F.concat(F.lit("failed expectation(s): "), F.array_join(F.col(FAILED), ", ")).alias(
                    "reason"
                ),
            ),
            model_name=model.name,
            batch_id=batch_id,
            source="expectation",
            warehouse=warehouse,
            query_id=query_id,
            stage="expectations",
        )
    removed = _names(expectations, "drop") + quarantined
    kept = checked.where(~F.arrays_overlap(FAILED, _literals(removed))) if removed else checked
    return kept.drop(FAILED), outcomes


def _failed_names(expectations: tuple[Expectation, ...]) -> Column:
    """An array of the names of the expectations a row fails (false or NULL condition)."""
    checks = [
        F.when(F.coalesce(F.expr(f"({e.condition})"), F.lit(False)), F.lit(None)).otherwise(
            F.lit(e.name)
        )
        for e in expectations
    ]
    return F.filter(F.array(*checks), lambda name: name.isNotNull())


def _names(expectations: tuple[Expectation, ...], action: str) -> list[str]:
    return [e.name for e in expectations if e.action == action]


def _literals(names: list[str]) -> Column:
    return F.array(*[F.lit(n) for n in names])


def _position(model: ModelSpec, columns: list[str], batch_id: int) -> Column:
    """Where a rejected row came from: the batch and its key (``batch 7, order_id=o12``)."""
    keys = [k for k in model.config.unique_keys if k in columns]
    parts = [
        F.concat(F.lit(f"{k}="), F.coalesce(F.col(f"`{k}`").cast("string"), F.lit("NULL")))
        for k in keys
    ]
    return F.concat_ws(", ", F.lit(f"stream {model.config.stream}, batch {batch_id}"), *parts)


def _failure(
    model: ModelSpec,
    checked: DataFrame,
    expectation: Expectation,
    outcome: ExpectationOutcome,
    columns: list[str],
    batch_id: int,
    line: int,
) -> ExpectationFailed:
    sample = (
        checked.where(F.array_contains(FAILED, expectation.name))
        .select(*[F.col(f"`{c}`") for c in columns])
        .limit(SAMPLE_ROWS)
        .collect()
    )
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
