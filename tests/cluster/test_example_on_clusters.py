"""The example project, unchanged but for its target, over Spark Connect with warehouse and
checkpoints on s3a:// (the local object store): the same two tables as on local[*]
(tests/spark/test_orders_pipeline.py's expectation); Ctrl-C, history, seed and test over
Connect. The Connect server runs in the cluster's directory, not the project's. On the
standalone cluster the example runs on S3 in tests/cluster/test_cluster_crashes.py, where its
tables are compared with an oracle."""

from __future__ import annotations

import json
import os
import re
import signal
from decimal import Decimal
from pathlib import Path

from pyspark.sql import Row, SparkSession

from runner.s3_client import s3_client
from runner.storage import RemotePath
from runner_devtools.local_cluster import LocalCluster
from runner_devtools.object_store import LocalBucket
from tests.cluster.conftest import add_targets, on_lake, read_from, runner
from tests.spark.processes import StreamProcess
from tests.spark.test_crash_recovery import table_rows
from tests.spark.test_orders_pipeline import EXPECTED_ORDERS, land_sample

SAMPLES = ["001.json", "002.json", "003.json", "004.json"]
EXPECTED_TOTALS = [
    ("c1", 1, Decimal("10.00")),
    ("c2", 1, Decimal("25.50")),
    ("c3", 1, Decimal("5.00")),
]


def check_example_tables(spark: SparkSession, warehouse: Path | RemotePath) -> None:
    orders = table_rows(spark, warehouse / "silver" / "orders", "order_id")
    assert [row[:5] for row in orders] == EXPECTED_ORDERS
    assert table_rows(spark, warehouse / "gold" / "customer_totals", "customer_id") == (
        EXPECTED_TOTALS
    )


def test_example_on_s3_over_spark_connect(
    spark: SparkSession, example_project: Path, local_cluster: LocalCluster, lake: LocalBucket
) -> None:
    add_targets(example_project, local_cluster, default="connect")
    on_lake(example_project, lake, "example")
    read_from(spark, lake)
    server = local_cluster.pids()["connect"]
    assert server is not None
    assert not os.readlink(f"/proc/{server}/cwd").startswith(str(example_project))
    land_sample(example_project, SAMPLES)
    # two files a batch: two batches over Connect on S3 instead of four (each some tens of
    # seconds on a busy machine); the tables do not depend on where batches are cut. The
    # trigger stays at 5 s, so Ctrl-C after batch 0 lands between triggers and `run` has one.
    streams = example_project / "streams" / "orders.yml"
    streams.write_text(
        streams.read_text().replace("maxFilesPerTrigger: 1", "maxFilesPerTrigger: 2")
    )

    # Ctrl-C while `runner stream` runs: over Connect the batch runs on the server, and the
    # client waits until the query is between triggers before it stops the query
    stream = StreamProcess(example_project, select="orders_merge")
    first = stream.wait_for(re.compile(r"orders_merge batch 0: 8 rows in"), 0, 240)
    assert first is not None, "\n".join(stream.lines)
    stream.process.send_signal(signal.SIGINT)
    assert stream.process.wait(timeout=240) == 0, "\n".join(stream.lines)
    stream.join()
    print("\n".join(stream.lines))
    assert stream.lines[-1] == "stopped cleanly."
    warehouse = RemotePath(lake.uri("example", "connect", "warehouse"))
    logged = sorted(r["batch_id"] for r in event_log(spark, warehouse, "orders_merge"))
    commits = "example/connect/checkpoints/orders_merge/commits/"
    listed = s3_client(lake.settings).list_objects_v2(Bucket=lake.name, Prefix=commits)
    names = [item["Key"].removeprefix(commits) for item in listed.get("Contents", [])]
    committed = sorted(int(name) for name in names if name.isdigit())
    assert logged == committed and 0 in logged  # no batch ran without being committed

    # `runner run` carries on from the checkpoint and drains the rest
    result = runner(example_project, "run", "--select", "orders_merge+", "--verbose")

    print(result.stdout)
    assert f"(target connect, {local_cluster.connect_url})" in result.stdout
    # progress comes back from the event log (the batch function ran on the server), and each
    # command prints only the batches it ran: the run does not print again what the stream did
    streamed = "\n".join(stream.lines)
    # files 001 and 002: o1, o2 and o4 inserted (o3 created and deleted inside the batch)
    assert "orders_merge batch 0: 8 rows in; inserted 3, updated 0, deleted 0" in streamed
    by_stream = set(re.findall(r"^orders_merge batch (\d+): ", streamed, re.M))
    by_run = set(re.findall(r"^orders_merge batch (\d+): ", result.stdout, re.M))
    assert not by_stream & by_run, result.stdout
    assert sorted(int(b) for b in by_stream | by_run) == [0, 1]
    assert "orders_merge batch 1 batch[1] MERGE: " in streamed + result.stdout
    check_example_tables(spark, warehouse)
    history = json.loads(
        runner(example_project, "history", "-m", "orders_merge", "--format", "json").stdout
    )
    assert [b["input_rows"] for b in history] == [8, 7]
    seeded = runner(example_project, "seed").stdout
    assert "customers: loaded 3 rows in ref.customers" in seeded
    tested = runner(example_project, "test", "--select", "unique_orders_merge_order_id").stdout
    assert "PASS data unique_orders_merge_order_id" in tested
    assert " 0 failed, 0 errors" in tested


def event_log(spark: SparkSession, warehouse: Path | RemotePath, model: str) -> list[Row]:
    log = spark.read.format("delta").load(str(warehouse / "_runner" / "event_log"))
    return log.where(log.model == model).collect()
