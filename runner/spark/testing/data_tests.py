"""Run data tests on the target tables: one query each, its rows are the failures."""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime

from py4j.protocol import Py4JError
from pyspark.errors import PySparkException
from pyspark.sql import SparkSession

from runner.error_text import first_line
from runner.errors import RunnerError
from runner.model_sql import CompiledStatement, compile_setup
from runner.model_tests.data_test_sql import data_test_sql
from runner.model_tests.results import ERROR, FAIL, TestResult, failing_rows_table
from runner.project import Project
from runner.seed_sql import seed_statements
from runner.spark.delta.relations import attach_existing
from runner.specs.data_tests import DataTestSpec, Dependency
from runner.specs.seeds import SeedSpec

SAMPLE_ROWS = 5


class MissingTable(RunnerError):
    """A table a data test reads does not exist yet."""


def run_data_test(
    spark: SparkSession,
    project: Project,
    seeds: dict[str, SeedSpec],
    test: DataTestSpec,
    now: datetime,
) -> TestResult:
    """Attach the tables ``test`` reads, run its query, and report the failing rows: their
    count and the first few."""
    check = prepare_data_test(spark, project, seeds, test, now, set())
    check_failing_rows(spark, [check])
    return check.result


@dataclass
class PendingCheck:
    """A data or singular test whose tables are attached and whose query is known (or which
    already failed with an error): ``where`` is the file:line an error names."""

    result: TestResult
    where: str
    started: float = field(default_factory=time.monotonic)

    def error(self, exc: Exception) -> None:
        self.result.status = ERROR
        if isinstance(exc, RunnerError):
            self.result.message = str(exc)
        else:
            self.result.message = f"{self.where}: Spark rejected the test query: {first_line(exc)}"


def prepare_data_test(
    spark: SparkSession,
    project: Project,
    seeds: dict[str, SeedSpec],
    test: DataTestSpec,
    now: datetime,
    attached: set[Dependency],
) -> PendingCheck:
    """Attach the tables ``test`` reads (those not in ``attached`` yet) and compile its query."""
    check = PendingCheck(TestResult(test.name, "data", test.model), f"{test.file}:{test.line}")
    try:
        attach_dependencies(spark, project, seeds, test.reads, attached)
        check.result.sql = data_test_sql(project, test, now)
    except (RunnerError, PySparkException, Py4JError) as exc:
        check.error(exc)
    return check


def check_failing_rows(spark: SparkSession, checks: list[PendingCheck]) -> None:
    """Run the queries of ``checks`` and mark each test failed (with its count and first rows)
    or passed. The counts of all of them come from one Spark job (a UNION ALL of counts: on a
    server each job is a round trip and a scheduling delay); a test with failures then gets its
    sample. When that one query fails, each test runs on its own, so that an error names its
    test."""
    for check in checks:  # what preparing it took
        check.result.seconds = time.monotonic() - check.started
    pending = [c for c in checks if c.result.status != ERROR]
    counts: dict[int, int] | None = None
    shared = 0.0  # each test's share of the query that counts them all
    if len(pending) > 1:
        started = time.monotonic()
        try:
            counts = _counts_at_once(spark, [c.result.sql or "" for c in pending])
        except (PySparkException, Py4JError):
            counts = None  # one query is wrong: each runs alone below, naming its test
        shared = (time.monotonic() - started) / len(pending)
    for index, check in enumerate(pending):
        started = time.monotonic()
        try:
            if counts is None:
                record_failing_rows(spark, check.result)
            else:
                record_failing_rows(spark, check.result, counts.get(index, 0))
        except (RunnerError, PySparkException, Py4JError) as exc:
            check.error(exc)
        check.result.seconds += shared + time.monotonic() - started


def _counts_at_once(spark: SparkSession, queries: list[str]) -> dict[int, int]:
    """Each query's row count by its index, in one job. A query's trailing semicolon is
    dropped and it ends on its own line (it may end in a comment)."""
    parts = [
        f"SELECT {index} AS check_index, COUNT(*) AS failing FROM (\n"
        f"{query.strip().rstrip(';')}\n) AS check_{index}"
        for index, query in enumerate(queries)
    ]
    rows = spark.sql("\nUNION ALL\n".join(parts)).collect()
    return {int(row["check_index"]): int(row["failing"]) for row in rows}


def record_failing_rows(spark: SparkSession, result: TestResult, count: int | None = None) -> None:
    """Run ``result.sql`` (its row count when not given); when it returns rows, mark ``result``
    failed with their count and the first few."""
    assert result.sql is not None
    if count is None:
        count = spark.sql(result.sql).count()
    result.failures = count
    if count:
        frame = spark.sql(result.sql)
        sample = [tuple(row) for row in frame.limit(SAMPLE_ROWS).collect()]
        result.status = FAIL
        result.message = f"{count} failing row{'s' if count != 1 else ''}"
        result.details = [failing_rows_table(result.name, frame.columns, sample, count)]


def attach_dependencies(
    spark: SparkSession,
    project: Project,
    seeds: dict[str, SeedSpec],
    dependencies: Iterable[Dependency],
    attached: set[Dependency],
) -> None:
    """attach_dependency for each of ``dependencies`` not in ``attached`` (then added): the
    tests of one run read the same few tables, and each attach costs statements."""
    for dependency in dependencies:
        if dependency not in attached:
            attach_dependency(spark, project, seeds, dependency)
            attached.add(dependency)


def attach_dependency(
    spark: SparkSession, project: Project, seeds: dict[str, SeedSpec], dependency: Dependency
) -> None:
    """Register a model's target or a seed's table under its name; MissingTable when it has
    not been built yet. A table named directly must already be known to the session."""
    if dependency.kind == "table":
        return
    location = project.target.table_location(dependency.table)
    if dependency.kind == "model":
        model = project.models[dependency.name]
        setup = compile_setup(project, model)
        statements: tuple[CompiledStatement, ...] = (setup.create_schema, setup.attach)
        hint = f"run the model first: runner run --model {model.name}"
    else:
        statements = seed_statements(project, seeds[dependency.name])
        hint = f"load the seed first: runner seed --select {dependency.name}"
    if not attach_existing(spark, dependency.table, location, *statements):
        raise MissingTable(
            f"{dependency.kind} {dependency.name}: table {dependency.table} does not exist "
            f"yet (no Delta table at {location})",
            hint=hint,
        )
