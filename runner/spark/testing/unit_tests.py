"""Model unit tests through the real per-batch path, on a scratch copy of the target.

Each test gets a scratch copy of the project (runner/model_tests/scratch.py): its warehouse and
checkpoints under a scratch folder, the model's target a table of its own in a schema of its
own. The target is created there (``ensure_target``), filled with the ``given`` rows, then each
batch goes through ``run_batch`` (exactly what ``foreachBatch`` runs) with query id
``unit-test:<name>``. The user's tables, and their names in a catalog other jobs may share, are
never touched; the scratch schema and files are removed afterwards.
"""

from __future__ import annotations

import tempfile
import time
import uuid
from pathlib import Path

from py4j.protocol import Py4JError
from pyspark.errors import PySparkException
from pyspark.sql import DataFrame, SparkSession

from runner import storage
from runner.error_text import first_line
from runner.errors import RunnerError
from runner.model_sql import compile_batch
from runner.model_tests.diff import RowDiff, diff_rows, diff_table
from runner.model_tests.results import ERROR, FAIL, TestResult
from runner.model_tests.scratch import Scratch, names_target_directly, scratch_for
from runner.model_tests.unit_columns import batch_columns, change_columns, table_columns
from runner.project import Project
from runner.spark.batch.run import run_batch
from runner.spark.delta.targets import ensure_target, latest_version
from runner.spark.session.builder import temporary_conf
from runner.spark.session.small_data import SMALL_DATA_CONF
from runner.spark.testing.frames import text_rows_of_both, typed_frame
from runner.specs.unit_tests import Rows, UnitTestSpec, checked_rows
from runner.specs.values import Column
from runner.storage import Location, RemotePath


def run_unit_test(spark: SparkSession, project: Project, test: UnitTestSpec) -> TestResult:
    """Run ``test``; a failure carries the row diff (and the Change Data Feed diff)."""
    started = time.monotonic()
    result = TestResult(test.name, "unit", test.model)
    model = project.models[test.model]
    scratch = scratch_for(project, model, _scratch_root(project))
    try:
        names_target_directly(
            compile_batch(scratch.project, scratch.model, 0), model, model.target_table
        )
        with temporary_conf(spark, SMALL_DATA_CONF):
            diffs = _run_in(spark, scratch, test)
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
        remove_scratch(spark, scratch)
    result.seconds = time.monotonic() - started
    return result


def _scratch_root(project: Project) -> Location:
    """A folder the session's Spark can write: beside the warehouse when that is on object
    storage (a server elsewhere cannot write this machine's temp dir), else a temp dir."""
    warehouse = project.target.warehouse
    if isinstance(warehouse, RemotePath):
        return warehouse / "_runner_unit_tests" / uuid.uuid4().hex
    return Path(tempfile.mkdtemp(prefix="runner-unit-"))


def _run_in(spark: SparkSession, scratch: Scratch, test: UnitTestSpec) -> list[tuple[str, RowDiff]]:
    project, model = scratch.project, scratch.model
    location = project.target.table_location(model.target_table)
    target = table_columns(project, model)
    inputs = batch_columns(project, model)
    if isinstance(location, Path):
        # with its folder here, ensure_target sees from the files that the table is new
        location.parent.mkdir(parents=True, exist_ok=True)
    ensure_target(spark, project, model)
    given = checked_rows(test.given, target, "given")
    if given:
        typed_frame(spark, given, target).write.format("delta").mode("append").save(str(location))
    before = latest_version(spark, location)
    for batch_id, batch in enumerate(test.batches):
        frame = typed_frame(spark, checked_rows(batch, inputs, f"batch {batch_id}"), inputs)
        # no event-log row: it would go to a scratch event log nothing reads
        run_batch(
            project, model, frame, batch_id, query_id=f"unit-test:{test.name}", event_log=False
        )
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
    wanted_frame = typed_frame(spark, checked_rows(expected, used, "expect"), used)
    wanted, got = text_rows_of_both(wanted_frame, actual, named)
    return diff_rows(wanted, got, named, keys)


def _changes_since(spark: SparkSession, location: Location, version: int) -> DataFrame:
    """The Change Data Feed rows of the versions after ``version`` (the batches' commits)."""
    reader = spark.read.format("delta").option("readChangeFeed", "true")
    if latest_version(spark, location) <= version:
        return reader.option("startingVersion", version).load(str(location)).limit(0)
    return reader.option("startingVersion", version + 1).load(str(location))


def remove_scratch(spark: SparkSession, scratch: Scratch) -> None:
    """Drop the scratch schema (its one table is external: only the name goes) and delete the
    scratch files."""
    try:
        spark.sql(f"DROP SCHEMA IF EXISTS {scratch.schema} CASCADE")
    finally:
        storage.remove(scratch.root)
