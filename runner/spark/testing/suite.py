"""Run a selected test suite on one session: unit tests first, then data tests."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from pyspark.sql import SparkSession

from runner.model_tests.results import TestResult
from runner.project import Project
from runner.spark.testing.data_tests import check_failing_rows, prepare_data_test
from runner.spark.testing.singular_tests import prepare_singular_test
from runner.spark.testing.unit_tests import run_unit_test
from runner.specs.data_tests import Dependency
from runner.specs.suite import TestSuite


def run_suite(
    spark: SparkSession,
    project: Project,
    suite: TestSuite,
    now: datetime,
    on_result: Callable[[TestResult], None] | None = None,
) -> list[TestResult]:
    """Every test of ``suite`` (unit, then generic data, then singular); ``now`` is the
    reference time of freshness tests.

    Unit tests write scratch tables of their own (runner/model_tests/scratch.py); the data tests
    attach the real tables they read, each table once. The data and singular tests' failing
    rows are counted in one query (check_failing_rows).
    """
    results = []
    for unit_test in suite.unit_tests:
        results.append(run_unit_test(spark, project, unit_test))
        if on_result is not None:
            on_result(results[-1])
    attached: set[Dependency] = set()
    checks = [
        prepare_data_test(spark, project, suite.seeds, data_test, now, attached)
        for data_test in suite.data_tests
    ]
    checks += [
        prepare_singular_test(spark, project, suite.seeds, singular, attached)
        for singular in suite.singular_tests
    ]
    check_failing_rows(spark, checks)
    for check in checks:
        results.append(check.result)
        if on_result is not None:
            on_result(check.result)
    return results
