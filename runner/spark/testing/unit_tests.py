"""Model unit tests through the real per-batch path, on a scratch copy of the target.

Each test gets a temporary warehouse: the project's TargetSpec with its warehouse and checkpoints
under a temp dir. The model's target is created there (``ensure_target``), filled with the
``given`` rows, then each batch goes through ``run_batch`` (exactly what ``foreachBatch`` runs)
with query id ``unit-test:<name>``. The user's real tables are never written: while a test runs,
the target's name points at the scratch table, and afterwards the name is released.
"""

from __future__ import annotations

import dataclasses
import shutil
import tempfile
import time
from pathlib import Path

from py4j.protocol import Py4JError
from pyspark.errors import PySparkException
from pyspark.sql import DataFrame, SparkSession

from runner.error_text import first_line
from runner.errors import RunnerError
from runner.model_tests.diff import RowDiff, diff_rows, diff_table
from runner.model_tests.results import ERROR, FAIL, TestResult
from runner.model_tests.unit_columns import batch_columns, change_columns, table_columns
from runner.project import Project
from runner.spark.batch.run import run_batch
from runner.spark.delta.targets import ensure_target, latest_version, registration
from runner.spark.session.builder import temporary_conf
from runner.spark.testing.frames import text_rows, typed_frame
from runner.specs.model import ModelSpec
from runner.specs.unit_tests import Rows, UnitTestSpec, checked_rows
from runner.specs.values import Column
from runner.storage import Location

# Settings for a few rows, for the length of a test: one shuffle partition (the target's count is
# sized for real batches and would only make each MERGE write more tiny files) and no adaptive
# re-planning (it costs more than it saves on a few rows: bench/results/unit_tests.md).
# The statements and the code path are the same as in a stream.
SMALL_DATA_CONF = {"spark.sql.shuffle.partitions": "1", "spark.sql.adaptive.enabled": "false"}


def run_unit_test(spark: SparkSession, project: Project, test: UnitTestSpec) -> TestResult:
    """Run ``test``; a failure carries the row diff (and the Change Data Feed diff)."""
    started = time.monotonic()
    result = TestResult(test.name, "unit", test.model)
    scratch = Path(tempfile.mkdtemp(prefix="runner-unit-"))
    model = project.models[test.model]
    try:
        with temporary_conf(spark, SMALL_DATA_CONF):
            diffs = _run_in(spark, _scratch_project(project, scratch), model, test)
        failed = [(title, diff) for title, diff in diffs if not diff.ok]
        if failed:
            result.status = FAIL
            result.message = "; ".join(f"{title}: {diff.summary()}" for title, diff in failed)
            result.details = [diff_table(diff, f"{test.name}: {title}") for title, diff in failed]
    except RunnerError as exc:
        result.status, result.message = ERROR, str(exc)
    except (PySparkException, Py4JError) as exc:
        result.status, result.message = ERROR, f"{test.file}:{test.line}: {first_line(exc)}"
    finally:
        _release_name(spark, model.target_table, scratch)
        shutil.rmtree(scratch, ignore_errors=True)
    result.seconds = time.monotonic() - started
    return result


def _scratch_project(project: Project, scratch: Path) -> Project:
    target = dataclasses.replace(
        project.target, warehouse=scratch / "warehouse", checkpoint_root=scratch / "checkpoints"
    )
    return dataclasses.replace(project, target=target)


def _run_in(
    spark: SparkSession, project: Project, model: ModelSpec, test: UnitTestSpec
) -> list[tuple[str, RowDiff]]:
    location = project.target.table_location(model.target_table)
    target = table_columns(project, model)
    inputs = batch_columns(project, model)
    ensure_target(spark, project, model)
    given = checked_rows(test.given, target, "given")
    if given:
        typed_frame(spark, given, target).write.format("delta").mode("append").save(str(location))
    before = latest_version(spark, location)
    for batch_id, batch in enumerate(test.batches):
        frame = typed_frame(spark, checked_rows(batch, inputs, f"batch {batch_id}"), inputs)
        run_batch(project, model, frame, batch_id, query_id=f"unit-test:{test.name}")
    keys = model.config.unique_keys
    diffs = [
        ("target rows", _compare(spark, test.expect, target, spark.table(model.target_table), keys))
    ]
    if test.expect_changes is not None:
        changes = _changes_since(spark, location, before)
        diffs.append(
            (
                "change data feed",
                _compare(spark, test.expect_changes, change_columns(project, model), changes, []),
            )
        )
    return diffs


def _compare(
    spark: SparkSession, expected: Rows, columns: list[Column], actual: DataFrame, keys: list[str]
) -> RowDiff:
    """Compare on the columns ``expected`` names (all of ``columns`` when it names none)."""
    named = expected.columns or [c.name for c in columns]
    used = [c for c in columns if c.name in named]
    wanted = text_rows(typed_frame(spark, checked_rows(expected, used, "expect"), used), named)
    return diff_rows(wanted, text_rows(actual, named), named, keys)


def _changes_since(spark: SparkSession, location: Location, version: int) -> DataFrame:
    """The Change Data Feed rows of the versions after ``version`` (the batches' commits)."""
    reader = spark.read.format("delta").option("readChangeFeed", "true")
    if latest_version(spark, location) <= version:
        return reader.option("startingVersion", version).load(str(location)).limit(0)
    return reader.option("startingVersion", version + 1).load(str(location))


def _release_name(spark: SparkSession, table: str, scratch: Path) -> None:
    """Drop the name's registration if it points into the scratch warehouse (the data goes with
    the temp dir); the next command that needs the real target attaches it again."""
    found = registration(spark, table)
    if found is not None and found[0].startswith(str(scratch)) and found[1] == "EXTERNAL":
        spark.sql(f"DROP TABLE {table}")
