"""Run singular data tests (``tests/*.sql``): attach the tables each reads, run its query, and
report its rows as failures."""

from __future__ import annotations

import time

from py4j.protocol import Py4JError
from pyspark.errors import PySparkException
from pyspark.sql import SparkSession

from runner.error_text import first_line
from runner.errors import RunnerError
from runner.model_tests.results import ERROR, TestResult
from runner.project import Project
from runner.spark.testing.data_tests import attach_dependency, record_failing_rows
from runner.specs.data_tests import Dependency
from runner.specs.seeds import SeedSpec
from runner.specs.singular import SingularTestSpec


def run_singular_test(
    spark: SparkSession, project: Project, seeds: dict[str, SeedSpec], test: SingularTestSpec
) -> TestResult:
    """The outcome of ``test``: pass when its query returns no row."""
    started = time.monotonic()
    result = TestResult(test.name, "singular", test.model, sql=test.sql)
    reads = [Dependency("model", m, project.models[m].target_table) for m in test.models]
    reads += [Dependency("seed", s, seeds[s].table) for s in test.seeds]
    try:
        for dependency in reads:
            attach_dependency(spark, project, seeds, dependency)
        record_failing_rows(spark, result)
    except RunnerError as exc:
        result.status, result.message = ERROR, str(exc)
    except (PySparkException, Py4JError) as exc:
        result.status = ERROR
        result.message = f"{test.file}:1: Spark rejected the test query: {first_line(exc)}"
    result.seconds = time.monotonic() - started
    return result
