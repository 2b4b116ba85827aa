"""Retrying statements that lose a race with a concurrent Delta writer.

Real concurrent commits are timing-dependent, so these tests raise real Spark errors carrying
Delta's conflict error class from SQL (``raise_error``), which is what the runner inspects.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from pyspark.errors import PySparkException
from pyspark.sql import SparkSession

from runner.errors import ModelSqlError
from runner.model_sql import CompiledStatement
from runner.spark.delta.statements import run_statement
from runner.spark.session import conflicts as errors
from runner.spark.session.conflicts import ConflictRetriesExhausted, retry_on_conflict

CONFLICT = (
    "SELECT raise_error('[DELTA_CONCURRENT_APPEND] Files were added to the root of the table "
    "by a concurrent update. Please try the operation again.')"
)


def test_a_conflict_is_retried_until_it_succeeds(spark: SparkSession) -> None:
    calls: list[int] = []
    retries: list[int] = []

    def action() -> int:
        calls.append(1)
        if len(calls) < 3:
            spark.sql(CONFLICT).collect()
        return spark.sql("SELECT 42").first()[0]

    result = retry_on_conflict(action, backoff=0.01, on_retry=lambda n, _: retries.append(n))

    assert result == 42
    assert len(calls) == 3 and retries == [1, 2]


def test_a_conflict_that_never_clears_fails_with_its_cause(spark: SparkSession) -> None:
    with pytest.raises(ConflictRetriesExhausted) as info:
        retry_on_conflict(lambda: spark.sql(CONFLICT).collect(), attempts=3, backoff=0.01)
    assert info.value.attempts == 3
    assert "DELTA_CONCURRENT_APPEND" in str(info.value)


def test_other_errors_are_not_retried(spark: SparkSession) -> None:
    calls: list[int] = []

    def action() -> None:
        calls.append(1)
        spark.sql("SELECT no_such_column FROM range(1)").collect()

    with pytest.raises(PySparkException):
        retry_on_conflict(action, backoff=0.01)
    assert len(calls) == 1


def test_run_statement_reports_a_lasting_conflict_at_the_model_line(
    spark: SparkSession, monkeypatch
) -> None:
    monkeypatch.setattr(errors, "CONFLICT_BACKOFF_SECONDS", 0.01)
    statement = CompiledStatement("batch", 1, CONFLICT, Path("models/m.sql"), 12)

    with pytest.raises(ModelSqlError) as info:
        run_statement(spark, statement)

    message = str(info.value)
    assert "models/m.sql:12" in message
    assert (
        f"conflicted with concurrent writers to the same table {errors.CONFLICT_ATTEMPTS}"
        in message
    )
    assert "DELTA_CONCURRENT_APPEND" in message
