"""prune_by: the batch's key range as literals in MERGE ON lets Delta skip target files.

The scan figures come from the MERGE command's own metrics (number of target files before /
after skipping), read from Spark's SQL status store after run_batch ran the statement.
"""

from __future__ import annotations

import time
import uuid

from pyspark.sql import SparkSession

from runner import project as project_loader
from runner.spark.batch.run import run_batch
from runner.spark.delta.targets import ensure_target, reset_model
from tests.conftest import write_project
from tests.spark.test_merge_properties import EVENTS_SCHEMA, STREAMS

FILES = 8
ROWS_PER_FILE = 50
BEFORE = "number of target files before skipping"
AFTER = "number of target files after skipping"


def model_sql(table: str, prune: bool) -> str:
    prune_by = "prune_by=['id'], " if prune else ""
    return (
        f"{{{{ config(stream='events', target='{table}', unique_key='id', sequence_by='seq', "
        f"{prune_by}columns='id BIGINT, seq BIGINT, v STRING') }}}}\n"
        "{{ merge(delete_column='op') }};\n"
    )


def last_merge_scan(spark: SparkSession, after_id: int) -> dict[str, int]:
    """Skipping metrics of the newest MERGE execution after ``after_id`` (the status store is
    fed by Spark's listener bus, asynchronously: poll briefly)."""
    store = spark._jsparkSession.sharedState().statusStore()
    for _ in range(50):
        found: dict[int, dict[str, int]] = {}
        executions = store.executionsList().iterator()
        while executions.hasNext():
            execution = executions.next()
            if execution.executionId() <= after_id:
                continue
            names = {}
            metrics = execution.metrics().iterator()
            while metrics.hasNext():
                metric = metrics.next()
                names[metric.accumulatorId()] = metric.name()
            if BEFORE not in names.values():
                continue
            values = {}
            entries = store.executionMetrics(execution.executionId()).iterator()
            while entries.hasNext():
                entry = entries.next()
                if names.get(entry._1()) in (BEFORE, AFTER):
                    values[names[entry._1()]] = int(entry._2().replace(",", ""))
            if len(values) == 2:
                found[execution.executionId()] = values
        if found:
            return found[max(found)]
        time.sleep(0.2)
    raise AssertionError("no MERGE scan metrics in the SQL status store")


def newest_execution_id(spark: SparkSession) -> int:
    executions = spark._jsparkSession.sharedState().statusStore().executionsList().iterator()
    newest = -1
    while executions.hasNext():
        newest = max(newest, executions.next().executionId())
    return newest


def test_prune_by_scans_only_the_files_the_batch_keys_can_be_in(
    spark: SparkSession, tmp_path
) -> None:
    root = write_project(
        tmp_path / "project",
        {"pruned": model_sql("prune.pruned", True), "full": model_sql("prune.full", False)},
        streams=STREAMS,
    )
    project = project_loader.load(root)
    # a batch of three updates and one new key, all in the id range of the target's 4th file
    batch = [(150 + i, 9, "u", "U") for i in range(3)] + [(175, 9, "d", "D")]
    scans, tables = {}, {}
    for name in ("pruned", "full"):
        model = project.model(name)
        reset_model(spark, project, model)
        ensure_target(spark, project, model)
        location = str(project.target.table_location(model.target_table))
        for f in range(FILES):  # one file per disjoint id range
            spark.range(f * ROWS_PER_FILE, (f + 1) * ROWS_PER_FILE).selectExpr(
                "id", "CAST(1 AS BIGINT) AS seq", "'v' AS v"
            ).coalesce(1).write.format("delta").mode("append").save(location)
        before = newest_execution_id(spark)
        report = run_batch(
            project,
            model,
            spark.createDataFrame(batch, EVENTS_SCHEMA),
            0,
            query_id=str(uuid.uuid4()),
        )
        assert report.merge_counts == {
            "num_inserted_rows": 0,
            "num_updated_rows": 3,
            "num_deleted_rows": 1,
        }
        scans[name] = last_merge_scan(spark, before)
        history = spark.sql(f"DESCRIBE HISTORY {model.target_table} LIMIT 1").collect()[0]
        scans[name]["removed"] = int(history["operationMetrics"]["numTargetFilesRemoved"])
        tables[name] = sorted(tuple(r) for r in spark.table(model.target_table).collect())

    print(f"\nMERGE scan with and without prune_by: {scans}")
    assert scans["pruned"] == {BEFORE: FILES, AFTER: 1, "removed": 1}
    assert scans["full"] == {BEFORE: FILES, AFTER: FILES, "removed": 1}
    assert tables["pruned"] == tables["full"]
    assert (151, 9, "u") in tables["pruned"] and not any(r[0] == 175 for r in tables["pruned"])
