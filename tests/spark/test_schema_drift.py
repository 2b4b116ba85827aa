"""config(schema_drift=...): each policy on real Delta, through run_batch."""

from __future__ import annotations

import uuid

import pytest
from pyspark.sql import SparkSession

from runner import project as project_loader
from runner.project import Project
from runner.spark.batch.run import run_batch
from runner.spark.batch.schema_drift import SchemaDriftError
from runner.spark.delta.targets import ensure_target, reset_model
from tests.conftest import write_project
from tests.spark.test_merge_properties import STREAMS

DRIFTED = "id BIGINT, seq BIGINT, v STRING, op STRING, coupon STRING"


def drift_project(spark: SparkSession, tmp_path, policy: str) -> Project:
    model = (
        f"{{{{ config(stream='events', target='drift.{policy}', unique_key='id', "
        f"sequence_by='seq', schema_drift='{policy}', "
        "columns='id BIGINT, seq BIGINT, v STRING, is_deleted BOOLEAN') }}\n"
        "{{ merge(delete_column='op', deletes='tombstone') }};\n"
    )
    root = write_project(tmp_path / policy, {"m": model}, streams=STREAMS)
    project = project_loader.load(root)
    reset_model(spark, project, project.model("m"))
    return project


def run(spark: SparkSession, project: Project, rows: list[tuple], schema: str, batch_id: int = 0):
    model = project.model("m")
    return run_batch(
        project, model, spark.createDataFrame(rows, schema), batch_id, query_id=str(uuid.uuid4())
    )


def table_rows(spark: SparkSession, project: Project) -> list[tuple]:
    return sorted(tuple(r) for r in spark.table(project.model("m").target_table).collect())


def test_fail_names_new_and_changed_columns_and_writes_nothing(spark, tmp_path) -> None:
    project = drift_project(spark, tmp_path, "fail")
    ensure_target(spark, project, project.model("m"))
    run(spark, project, [(1, 1, "a", "U")], "id BIGINT, seq BIGINT, v STRING, op STRING")
    versions = spark.sql("DESCRIBE HISTORY drift.fail").count()

    with pytest.raises(SchemaDriftError) as new_column:
        run(spark, project, [(1, 2, "b", "U", "X")], DRIFTED, batch_id=1)
    with pytest.raises(SchemaDriftError) as changed_type:
        run(spark, project, [(1, 2, 7, "U")], "id BIGINT, seq BIGINT, v INT, op STRING", 1)

    assert "new column(s) coupon string" in str(new_column.value)
    assert "changed type(s) v string -> int" in str(changed_type.value)
    assert "op" not in str(new_column.value).split(":")[-1]  # source-only column, not drift
    assert new_column.value.file == project.model("m").file
    assert spark.sql("DESCRIBE HISTORY drift.fail").count() == versions
    assert table_rows(spark, project) == [(1, 1, "a", False)]


def test_append_new_columns_alters_the_target_then_merges(spark, tmp_path) -> None:
    project = drift_project(spark, tmp_path, "append_new_columns")
    ensure_target(spark, project, project.model("m"))
    run(spark, project, [(1, 1, "a", "U")], "id BIGINT, seq BIGINT, v STRING, op STRING")

    run(spark, project, [(1, 2, "b", "U", "X"), (2, 1, "c", "U", "Y")], DRIFTED, batch_id=1)

    target = spark.table("drift.append_new_columns")
    assert target.columns == ["id", "seq", "v", "is_deleted", "coupon"]
    assert table_rows(spark, project) == [(1, 2, "b", False, "X"), (2, 1, "c", False, "Y")]
    operations = [
        r["operation"] for r in spark.sql("DESCRIBE HISTORY drift.append_new_columns").collect()
    ]
    assert "ADD COLUMNS" in operations
    with pytest.raises(SchemaDriftError, match="changed type"):
        run(spark, project, [(1, 3, 7, "U")], "id BIGINT, seq BIGINT, v INT, op STRING", 2)


def test_evolve_adds_new_columns_through_merge_schema_evolution(spark, tmp_path) -> None:
    project = drift_project(spark, tmp_path, "evolve")
    ensure_target(spark, project, project.model("m"))
    run(spark, project, [(1, 1, "a", "U")], "id BIGINT, seq BIGINT, v STRING, op STRING")

    report = run(spark, project, [(1, 2, "b", "U", "X"), (3, 1, "c", "D", "Z")], DRIFTED, 1)

    assert report.statements[0].statement.sql.startswith("MERGE WITH SCHEMA EVOLUTION INTO")
    target = spark.table("drift.evolve")
    assert "coupon" in target.columns and "op" not in target.columns
    assert table_rows(spark, project) == [(1, 2, "b", False, "X"), (3, 1, "c", True, "Z")]
    operations = [r["operation"] for r in spark.sql("DESCRIBE HISTORY drift.evolve").collect()]
    assert "ADD COLUMNS" not in operations  # the MERGE itself evolved the schema


def test_a_batch_the_policy_stops_releases_its_cached_rows(spark, tmp_path) -> None:
    project = drift_project(spark, tmp_path, "fail")
    ensure_target(spark, project, project.model("m"))
    batch = spark.createDataFrame([(1, 2, "b", "U", "X")], DRIFTED)
    with pytest.raises(SchemaDriftError):
        run_batch(project, project.model("m"), batch, 0, query_id=str(uuid.uuid4()))
    assert not batch.is_cached  # persisted for the batch, unpersisted when it failed
