"""Run one compiled statement on a session: idempotency settings around DML, located errors."""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from typing import Any

from py4j.protocol import Py4JError
from pyspark.errors import PySparkException
from pyspark.sql import SparkSession

from runner.error_text import error_text, first_line, with_root_cause
from runner.errors import ModelSqlError
from runner.model_sql import CompiledStatement
from runner.spark.session.conflicts import ConflictRetriesExhausted, retry_on_conflict

TXN_APP_ID = "spark.databricks.delta.write.txnAppId"
TXN_VERSION = "spark.databricks.delta.write.txnVersion"
_POSITION = re.compile(r"line (\d+),? pos (\d+)")
MERGE_METRICS = ("num_inserted_rows", "num_updated_rows", "num_deleted_rows")


@dataclass(frozen=True)
class Transaction:
    """Delta's idempotent-write identity of one statement in one batch.

    Delta records (app_id, version) in the table's log with the commit; a later statement with
    the same app id and a version not above the recorded one is skipped. So a batch that Spark
    replays after a crash does not apply its MERGE twice.
    """

    app_id: str
    version: int


def statement_transaction(query_id: str, model: str, label: str, batch_id: int) -> Transaction:
    """The identity a DML statement of a model's batch writes under (``label``: ``batch[1]``);
    ``runner history --timings`` finds the statement's Delta commit by it."""
    return Transaction(f"{query_id}:{model}:{label}", batch_id)


@dataclass
class StatementResult:
    statement: CompiledStatement
    seconds: float
    metrics: dict[str, int] = field(default_factory=dict)
    skipped: bool = False  # an idempotent write Delta had already applied
    recovered: bool = False  # skipped, and ``metrics`` read from the commit that applied it


def run_statement(
    session: SparkSession, statement: CompiledStatement, txn: Transaction | None = None
) -> StatementResult:
    """Run ``statement`` on ``session``; Spark errors become ModelSqlError with the model line."""
    started = time.monotonic()
    if txn is not None:
        session.conf.set(TXN_APP_ID, txn.app_id)
        session.conf.set(TXN_VERSION, str(txn.version))
    try:
        rows = retry_on_conflict(lambda: session.sql(statement.executable).collect())
    except ConflictRetriesExhausted as exc:
        raise ModelSqlError(
            f"{statement.label} ({statement.keyword}) conflicted with concurrent writers to the "
            f"same table {exc.attempts} times: {first_line(exc.cause)}",
            file=statement.file,
            line=statement.line,
            hint="another job writes this table at the same time (an OPTIMIZE, another "
            "stream); schedule them apart or partition the writes",
        ) from None
    except (PySparkException, Py4JError) as exc:
        raise statement_error(statement, exc) from None
    finally:
        if txn is not None:
            session.conf.unset(TXN_APP_ID)
            session.conf.unset(TXN_VERSION)
    result = StatementResult(statement, time.monotonic() - started)
    if statement.keyword == "MERGE":
        if rows:
            values: dict[str, Any] = rows[0].asDict()
            result.metrics = {k: int(values[k]) for k in MERGE_METRICS if k in values}
        else:
            result.skipped = True
    return result


def statement_error(statement: CompiledStatement, exc: Exception) -> ModelSqlError:
    """A ModelSqlError naming the model line of the failure and showing the statement."""
    text = error_text(exc)
    # the analyzer appends the plan after "; line "; a task's failure is shown with its cause
    first = with_root_cause(first_line(exc).split("; line ")[0], exc)
    line = statement.line
    position = _POSITION.search(text)
    if position:
        line = statement.source_line_at(int(position.group(1)))
    return ModelSqlError(
        f"Spark rejected {statement.label} ({statement.keyword}): {first}",
        file=statement.file,
        line=line,
        detail="failing statement:\n" + _indent(statement.sql),
        hint="run `runner compile` to read the SQL this model renders",
    )


def _indent(sql: str) -> str:
    return "\n".join(f"    {line}" for line in sql.splitlines())
