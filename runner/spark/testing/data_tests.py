"""Run data tests on the target tables: one query each, its rows are the failures."""

from __future__ import annotations

import time
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
    started = time.monotonic()
    result = TestResult(test.name, "data", test.model)
    try:
        for dependency in test.reads:
            attach_dependency(spark, project, seeds, dependency)
        result.sql = data_test_sql(project, test, now)
        record_failing_rows(spark, result)
    except RunnerError as exc:
        result.status, result.message = ERROR, str(exc)
    except (PySparkException, Py4JError) as exc:
        result.status = ERROR
        result.message = (
            f"{test.file}:{test.line}: Spark rejected the test query: {first_line(exc)}"
        )
    result.seconds = time.monotonic() - started
    return result


def record_failing_rows(spark: SparkSession, result: TestResult) -> None:
    """Run ``result.sql``; when it returns rows, mark ``result`` failed with their count and
    the first few."""
    assert result.sql is not None
    frame = spark.sql(result.sql)
    count = frame.count()
    result.failures = count
    if count:
        sample = [tuple(row) for row in frame.limit(SAMPLE_ROWS).collect()]
        result.status = FAIL
        result.message = f"{count} failing row{'s' if count != 1 else ''}"
        result.details = [failing_rows_table(result.name, frame.columns, sample, count)]


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
