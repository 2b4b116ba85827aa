"""Run a selected test suite on one session: the unit tests at the same time as each other and
as the data tests, each unit test on a session of its own."""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime

from pyspark.sql import SparkSession

from runner.model_tests.results import TestResult
from runner.project import Project
from runner.spark.session.isolated import isolated_session
from runner.spark.testing.data_tests import PendingCheck, check_failing_rows, prepare_data_test
from runner.spark.testing.singular_tests import prepare_singular_test
from runner.spark.testing.unit_tests import run_unit_test
from runner.specs.data_tests import Dependency
from runner.specs.suite import TestSuite
from runner.specs.unit_tests import UnitTestSpec

# Unit tests running at once: each spends most of its time in round trips and in Spark's
# driver between tiny jobs, so two keep a local server's two cores busy; more only queue.
UNIT_TEST_WORKERS = 2


def run_suite(
    spark: SparkSession,
    project: Project,
    suite: TestSuite,
    now: datetime,
    on_result: Callable[[TestResult], None] | None = None,
) -> list[TestResult]:
    """Every test of ``suite``; results (and ``on_result`` calls) in the order unit, generic
    data, singular, whatever order they finish in. ``now`` is the reference time of freshness
    tests.

    Unit tests write scratch tables of their own (runner/model_tests/scratch.py), each on its
    own session (its batch view and settings are its own), so they run side by side; the data
    tests read only the real tables, and run beside them on ``spark``.
    """
    results: list[TestResult] = []

    def report(result: TestResult) -> None:
        results.append(result)
        if on_result is not None:
            on_result(result)

    with ThreadPoolExecutor(max_workers=UNIT_TEST_WORKERS + 1) as pool:
        # the data tests first: their one query starts while the unit tests queue for workers
        checks = pool.submit(_data_checks, spark, project, suite, now)
        units = [pool.submit(_unit_test, spark, project, test) for test in suite.unit_tests]
        for unit in units:
            report(unit.result())
        for check in checks.result():
            report(check.result)
    return results


def _unit_test(spark: SparkSession, project: Project, test: UnitTestSpec) -> TestResult:
    with isolated_session(spark) as session:
        return run_unit_test(session, project, test)


def _data_checks(
    spark: SparkSession, project: Project, suite: TestSuite, now: datetime
) -> list[PendingCheck]:
    """The data and singular tests, checked: each table they read attached once, their failing
    rows counted in one query (check_failing_rows)."""
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
    return checks
