"""Run singular data tests (``tests/*.sql``): attach the tables each reads, run its query, and
report its rows as failures."""

from __future__ import annotations

from py4j.protocol import Py4JError
from pyspark.errors import PySparkException
from pyspark.sql import SparkSession

from runner.errors import RunnerError
from runner.model_tests.results import TestResult
from runner.project import Project
from runner.spark.testing.data_tests import PendingCheck, attach_dependencies, check_failing_rows
from runner.specs.data_tests import Dependency
from runner.specs.seeds import SeedSpec
from runner.specs.singular import SingularTestSpec


def run_singular_test(
    spark: SparkSession, project: Project, seeds: dict[str, SeedSpec], test: SingularTestSpec
) -> TestResult:
    """The outcome of ``test``: pass when its query returns no row."""
    check = prepare_singular_test(spark, project, seeds, test, set())
    check_failing_rows(spark, [check])
    return check.result


def prepare_singular_test(
    spark: SparkSession,
    project: Project,
    seeds: dict[str, SeedSpec],
    test: SingularTestSpec,
    attached: set[Dependency],
) -> PendingCheck:
    """Attach the tables ``test`` reads (those not in ``attached`` yet)."""
    check = PendingCheck(
        TestResult(test.name, "singular", test.model, sql=test.sql), f"{test.file}:1"
    )
    reads = [Dependency("model", m, project.models[m].target_table) for m in test.models]
    reads += [Dependency("seed", s, seeds[s].table) for s in test.seeds]
    try:
        attach_dependencies(spark, project, seeds, reads, attached)
    except (RunnerError, PySparkException, Py4JError) as exc:
        check.error(exc)
    return check
