"""The least Spark work a project's model unit tests need, typed by hand: the floor under
`runner test --select test_type:unit`.

    .venv/bin/python -m bench.unit_test_floor -p PROJECT

For each unit test, on the session `runner test` would use (the local server when it runs):
the target's own set-up SQL (CREATE SCHEMA, CREATE TABLE) on a scratch copy, its ``given``
rows appended, each batch as the model's batch view and the model's own compiled statements
run on it, the target's rows read back (and its Change Data Feed where the test expects
changes), the scratch schema dropped. Two tests at a time, each on a session of its own, as
`runner test` runs them.

Left out is everything the runner adds to make a batch safe in a stream: the batch's row count,
expectations, the schema-drift check, the prune ranges, Delta's idempotent-write identity, the
event-log row, the row diff. What this costs is what Delta and Spark cost on this machine for
these tests; `bench/inner_loop_bench.py` runs it beside `runner test`, so the difference is the
framework's.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from pyspark.sql import SparkSession

from runner.model_sql import compile_batch, compile_setup
from runner.model_tests.scratch import scratch_for
from runner.model_tests.unit_columns import batch_columns, table_columns
from runner.project import Project, load
from runner.spark.session.builder import temporary_conf
from runner.spark.session.isolated import isolated_session
from runner.spark.session.small_data import SMALL_DATA_CONF
from runner.spark.streaming.pipeline import session_for
from runner.spark.testing.frames import typed_frame
from runner.spark.testing.suite import UNIT_TEST_WORKERS
from runner.spark.testing.unit_tests import remove_scratch
from runner.specs.unit_tests import UnitTestSpec, checked_rows
from runner.suite_selection import load_suite


def unit_test_by_hand(spark: SparkSession, project: Project, test: UnitTestSpec) -> None:
    model = project.models[test.model]
    scratch = scratch_for(project, model, Path(tempfile.mkdtemp(prefix="unit-floor-")))
    project, model = scratch.project, scratch.model
    setup = compile_setup(project, model)
    try:
        with temporary_conf(spark, SMALL_DATA_CONF):  # runner test's settings: the same plans
            spark.sql(setup.create_schema.executable)
            spark.sql(setup.create.executable)
            target = table_columns(project, model)
            given = checked_rows(test.given, target, "given")
            if given:
                frame = typed_frame(spark, given, target)
                frame.write.format("delta").mode("append").save(str(setup.location))
            inputs = batch_columns(project, model)
            for batch_id, batch in enumerate(test.batches):
                rows = typed_frame(spark, checked_rows(batch, inputs, f"batch {batch_id}"), inputs)
                rows.createOrReplaceTempView(model.batch_view)
                for statement in compile_batch(project, model, batch_id):
                    spark.sql(statement.executable).collect()
            spark.table(setup.table).collect()
            if test.expect_changes is not None:
                changes = spark.read.format("delta").option("readChangeFeed", "true")
                changes.option("startingVersion", 1).load(str(setup.location)).collect()
    finally:
        remove_scratch(spark, scratch)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-p", "--project", type=Path, default=Path("."))
    options = parser.parse_args()
    project = load(options.project)
    tests = load_suite(project).unit_tests
    spark = session_for(project)
    started = time.monotonic()

    def one(test: UnitTestSpec) -> None:
        with isolated_session(spark) as session:
            unit_test_by_hand(session, project, test)

    with ThreadPoolExecutor(max_workers=UNIT_TEST_WORKERS) as pool:
        list(pool.map(one, tests))
    print(f"{len(tests)} unit tests by hand: {time.monotonic() - started:.1f} s")


if __name__ == "__main__":
    main()
