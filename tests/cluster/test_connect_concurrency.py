"""Two models streaming at the same time on one Spark Connect server.

Over Connect a foreachBatch function gets the session that started its query, not a child
session per query: two models started from one session would share temp views and the Delta
idempotency settings (txnAppId / txnVersion) that run_statement sets around each MERGE. The
runner starts each model's query from its own server-side session
(runner/spark/streaming/remote_batches.py).

Both models here use the same temp view name and add to running totals, so a view or a
transaction identity leaking from one to the other shows in the tables (wrong customers, a MERGE
skipped or applied twice) and in the Delta logs (a commit carrying the other model's app id).
"""

from __future__ import annotations

import json
import os
import re
import signal
from decimal import Decimal
from pathlib import Path

from pyspark.sql import SparkSession

from runner_devtools.local_cluster import LocalCluster
from tests.cluster.conftest import add_targets
from tests.conftest import land_events, write_project
from tests.spark.processes import StreamProcess
from tests.spark.test_crash_recovery import table_rows

FILES = 3  # batches per model: three each are enough to overlap (CI time)
MODEL = """{{{{ config(stream='{stream}', target='{schema}.totals', unique_key='customer_id',
    columns='customer_id STRING, total DECIMAL(14,2)') }}}}

CREATE OR REPLACE TEMPORARY VIEW deltas AS
SELECT customer_id, SUM(amount) AS amount FROM {{{{ batch }}}} GROUP BY customer_id;

MERGE INTO {{{{ this }}}} AS t USING deltas AS s ON t.customer_id = s.customer_id
WHEN MATCHED THEN UPDATE SET t.total = t.total + s.amount
WHEN NOT MATCHED THEN INSERT (customer_id, total) VALUES (s.customer_id, s.amount);
"""
STREAM = """  {name}:
    format: json
    path: landing/{name}
    schema: "customer_id STRING, amount DECIMAL(10,2)"
    options:
      maxFilesPerTrigger: 1
    trigger:
      processing_time: 1 second
"""


def events(prefix: str, number: int) -> list[dict[str, object]]:
    return [
        {"customer_id": f"{prefix}{(number + i) % 3}", "amount": f"{number + 1}.{i}5"}
        for i in range(4)
    ]


def commits(table: Path) -> list[list[dict]]:
    """The actions of every commit in the Delta log of ``table``, oldest first."""
    files = sorted((table / "_delta_log").glob("*.json"))
    return [[json.loads(line) for line in f.read_text().splitlines() if line] for f in files]


def test_two_models_on_one_connect_server_keep_their_own_transactions(
    spark: SparkSession, tmp_path: Path, local_cluster: LocalCluster
) -> None:
    models = {
        "totals_a": MODEL.format(stream="orders_a", schema="a"),
        "totals_b": MODEL.format(stream="orders_b", schema="b"),
    }
    streams = "streams:\n" + STREAM.format(name="orders_a") + STREAM.format(name="orders_b")
    project = write_project(tmp_path / "two", models, streams=streams)
    add_targets(project, local_cluster, default="connect")
    oracle: dict[str, dict[str, Decimal]] = {"a": {}, "b": {}}
    for number in range(FILES):
        for prefix in ("a", "b"):
            batch = events(prefix, number)
            land_events(
                project / "landing" / f"orders_{prefix}",
                f"{number:03d}.json",
                [json.dumps(e) for e in batch],
            )
            for event in batch:
                key = str(event["customer_id"])
                oracle[prefix][key] = oracle[prefix].get(key, Decimal(0)) + Decimal(
                    str(event["amount"])
                )

    stream = StreamProcess(project, select="totals_a totals_b")
    for model in models:
        last = re.compile(rf"{model} batch {FILES - 1}: ")
        assert stream.wait_for(last, 0, timeout=600) is not None, "\n".join(stream.lines)
    os.killpg(stream.process.pid, signal.SIGTERM)
    assert stream.process.wait(timeout=120) == 0, "\n".join(stream.lines)
    print("\n".join(stream.lines))

    warehouse = project / "target" / "connect" / "warehouse"
    for prefix in ("a", "b"):
        expected = sorted((k, v) for k, v in oracle[prefix].items())
        assert table_rows(spark, warehouse / prefix / "totals", "customer_id") == expected
        model = f"totals_{prefix}"
        merges = 0
        for actions in commits(warehouse / prefix / "totals"):
            info = next(a["commitInfo"] for a in actions if "commitInfo" in a)
            txns = [a["txn"]["appId"] for a in actions if "txn" in a]
            assert all(f":{model}:" in app_id for app_id in txns), (info["operation"], txns)
            if info["operation"] == "MERGE":
                merges += 1
                assert len(txns) == 1 and txns[0].endswith(f":{model}:batch[1]"), txns
        assert merges == FILES

    # the two models' batches really ran at the same time
    log = spark.read.format("delta").load(str(warehouse / "_runner" / "event_log")).collect()
    spans = {(r["model"], r["batch_id"]): (r["started_at"].timestamp(), r["seconds"]) for r in log}
    overlaps = [
        (a, b)
        for a, (a_start, a_len) in spans.items()
        for b, (b_start, b_len) in spans.items()
        if a[0] == "totals_a" and b[0] == "totals_b"
        and a_start < b_start + b_len and b_start < a_start + a_len
    ]  # fmt: skip
    print(f"{len(overlaps)} pairs of batches of the two models overlapped in time")
    assert overlaps
