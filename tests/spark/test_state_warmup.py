"""The target's Delta state, computed between batches (runner/spark/delta/state_warmup.py): a
MERGE after a warm-up runs no state computation of its own.

Spark's SQL status store names each execution Delta runs inside a MERGE: the state of the
version the MERGE starts from is an execution described "Compute snapshot for version: N",
nested in the MERGE's root execution, when the MERGE has to compute it itself."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pyspark.sql import SparkSession

from runner.spark.delta.state_warmup import StateWarmer
from tests.conftest import land_events, write_project

STATE = "Compute snapshot"
MERGE_STEP = "MERGE operation"  # Delta's own jobs inside a MERGE: "MERGE operation - ..."


# Spark's status store keeps the newest spark.sql.ui.retainedExecutions (1,000) executions and
# drops older ones, so in a long suite its count stops growing: executions are told apart by
# their ids, among the newest WINDOW, which holds all that one test runs.
WINDOW = 500


def newest_executions(spark: SparkSession) -> list[tuple[int, int, str]]:
    """(execution id, root execution id, description) of the newest WINDOW SQL executions."""
    store = spark._jsparkSession.sharedState().statusStore()
    listed = store.executionsList(max(0, store.executionsCount() - WINDOW), WINDOW)
    found = []
    for i in range(listed.size()):
        execution = listed.apply(i)
        found.append(
            (execution.executionId(), execution.rootExecutionId(), str(execution.description()))
        )
    return found


def merges_computing_state(executions: list[tuple[int, int, str]]) -> tuple[int, int]:
    """(root executions running a MERGE, those of them that computed a table's state inside).
    A root is a MERGE statement's own execution, or a stream's micro-batch, which nests all that
    its foreachBatch function runs."""
    nested: dict[int, list[str]] = {}
    for execution, root, description in executions:
        if execution != root:
            nested.setdefault(root, []).append(description)
    merges = [steps for steps in nested.values() if any(MERGE_STEP in s for s in steps)]
    return len(merges), sum(any(STATE in s for s in steps) for steps in merges)


def during(spark: SparkSession, action: Callable[[], Any]) -> list[tuple[int, int, str]]:
    """The SQL executions ``action`` ran."""
    before = max((execution for execution, _, _ in newest_executions(spark)), default=-1)
    action()
    # the store is filled by a listener, asynchronously: let it catch up with the action
    spark.sparkContext._jsc.sc().listenerBus().waitUntilEmpty()
    return [found for found in newest_executions(spark) if found[0] > before]


def test_a_merge_after_the_warm_up_does_not_compute_the_state(spark: SparkSession, tmp_path):
    table = tmp_path / "target"
    spark.range(1000).selectExpr("id", "'new' AS status").write.format("delta").save(str(table))
    spark.range(995, 1005).selectExpr("id", "'paid' AS status").createOrReplaceTempView("changes")
    merge = (
        f"MERGE INTO delta.`{table}` AS t USING changes AS s ON t.id = s.id "
        "WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *"
    )
    spark.sql(merge).collect()  # version 1: nobody has computed its state yet

    # the control: a MERGE starting from a version whose state nobody computed computes it
    assert merges_computing_state(during(spark, lambda: spark.sql(merge).collect())) == (1, 1)

    warmer = StateWarmer()
    warmer.warm(spark, table)  # version 2, written by the MERGE above
    warmer.settle()
    assert warmer.last_error is None
    assert merges_computing_state(during(spark, lambda: spark.sql(merge).collect())) == (1, 0)


def test_a_failed_warm_up_is_recorded_and_harmless(spark: SparkSession, tmp_path):
    warmer = StateWarmer()
    warmer.warm(spark, tmp_path / "not-a-table")
    warmer.settle()
    assert warmer.last_error is not None and "not-a-table" in warmer.last_error


MODEL = """{{ config(stream='orders', target='warm.orders', unique_key='order_id',
    columns='order_id STRING, status STRING, amount DECIMAL(10,2), updated_at TIMESTAMP') }}
MERGE INTO {{ this }} AS t USING {{ batch }} AS s ON t.order_id = s.order_id
WHEN MATCHED THEN UPDATE SET *
WHEN NOT MATCHED THEN INSERT *;
"""


def run_over_files(spark: SparkSession, cli, root: Path, malformed: bool):
    """The SQL executions of `runner run` of the model ``warm`` over four files of one order
    event each (a batch a file), each file with a malformed line after its event when
    ``malformed``."""
    landing = root / "landing" / "orders"
    for n in range(4):
        event = {
            "order_id": f"o{n % 2}",
            "customer_id": "c1",
            "status": f"s{n}",
            "amount": n,
            "updated_at": f"2024-01-01T1{n}:00:00",
            "op": "U",
        }
        land_events(landing, f"{n}.json", [json.dumps(event), *(['{"order_id":'] * malformed)])
    result = None

    def run() -> None:
        nonlocal result
        result = cli("run", "--model", "warm", "--project-dir", root)

    executions = during(spark, run)
    assert result is not None and result.exit_code == 0, result and result.output
    return executions


def test_a_streams_merges_find_the_state_computed(spark: SparkSession, cli, tmp_path: Path):
    root = write_project(tmp_path / "warm", {"warm": MODEL})
    assert merges_computing_state(run_over_files(spark, cli, root, malformed=False)) == (4, 0)


def test_a_streams_quarantine_writes_find_the_state_computed(spark, cli, tmp_path: Path):
    """Each batch quarantines a line. Its write checks the quarantine table's idempotent-write
    identity, which reads the state of the version the previous write made: warmed after each
    batch (and waited for by the next batch's write), no batch after the first computes one.
    The first writes into the table it has just created, which no warm-up has seen. With the
    quarantine table left out of the warm-up, every batch did: (4, 4)."""
    root = write_project(tmp_path / "warm", {"warm": MODEL})
    merges, computing = merges_computing_state(run_over_files(spark, cli, root, malformed=True))
    assert merges == 4 and computing <= 1
