"""The example project, unchanged but for its target, on a standalone cluster and over Spark
Connect: the same two tables as on local[*] (tests/spark/test_orders_pipeline.py's expectation);
history, seed and test over Connect."""

from __future__ import annotations

import json
import re
import signal
import threading
from decimal import Decimal
from pathlib import Path

from pyspark.sql import Row, SparkSession

from runner.local_cluster import LocalCluster
from tests.cluster.conftest import add_targets, runner
from tests.spark.processes import StreamProcess
from tests.spark.test_crash_recovery import table_rows
from tests.spark.test_orders_pipeline import EXPECTED_ORDERS, land_sample

SAMPLES = ["001.json", "002.json", "003.json", "004.json"]
EXPECTED_TOTALS = [
    ("c1", 1, Decimal("10.00")),
    ("c2", 1, Decimal("25.50")),
    ("c3", 1, Decimal("5.00")),
]
EXECUTOR_CLASS = "CoarseGrainedExecutorBackend"


def processes() -> dict[int, tuple[int, str]]:
    """pid -> (parent pid, command line) of every process on the machine."""
    found = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
                parent = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
            found[int(entry.name)] = (parent, command)
    return found


def watch_executors(workers: set[int], stop: threading.Event, seen: dict[int, str]) -> None:
    """Record the executor JVMs the workers start while ``stop`` is not set."""
    while not stop.wait(0.5):
        for pid, (parent, command) in processes().items():
            if parent in workers and EXECUTOR_CLASS in command:
                seen[pid] = command


def check_example_tables(spark: SparkSession, warehouse: Path) -> None:
    orders = table_rows(spark, warehouse / "silver" / "orders", "order_id")
    assert [row[:5] for row in orders] == EXPECTED_ORDERS
    assert table_rows(spark, warehouse / "gold" / "customer_totals", "customer_id") == (
        EXPECTED_TOTALS
    )


def test_example_on_standalone_cluster(
    spark: SparkSession, example_project: Path, local_cluster: LocalCluster
) -> None:
    add_targets(example_project, local_cluster, default="cluster")
    land_sample(example_project, SAMPLES)
    workers = {pid for name, pid in local_cluster.pids().items() if name.startswith("worker")}
    stop, executors = threading.Event(), {}
    watcher = threading.Thread(target=watch_executors, args=(workers, stop, executors))
    watcher.start()
    try:
        result = runner(example_project, "run", "--select", "orders_merge+")
    finally:
        stop.set()
        watcher.join()

    print(result.stdout)
    assert f"(target cluster, {local_cluster.master_url})" in result.stdout
    assert "orders_merge batch 0: 5 rows in; inserted 3, updated 0, deleted 0" in result.stdout
    # the batches ran on executors: JVMs the worker started, not the runner's own process
    assert executors, "no executor process was started by the worker"
    assert all("spark://CoarseGrainedScheduler@" in c for c in executors.values())
    check_example_tables(spark, example_project / "target" / "cluster" / "warehouse")
    # `runner history` / `seed` / `test` run the same code on both targets; they are checked
    # over Connect below (on standalone each would start another application: ~1 min here)


def test_example_over_spark_connect(
    spark: SparkSession, example_project: Path, local_cluster: LocalCluster
) -> None:
    add_targets(example_project, local_cluster, default="connect")
    land_sample(example_project, SAMPLES)

    # Ctrl-C while `runner stream` runs: over Connect the batch runs on the server, and the
    # client waits until the query is between triggers before it stops the query
    stream = StreamProcess(example_project, select="orders_merge")
    first = stream.wait_for(re.compile(r"orders_merge batch 0: 5 rows in"), 0, 240)
    assert first is not None, "\n".join(stream.lines)
    stream.process.send_signal(signal.SIGINT)
    assert stream.process.wait(timeout=240) == 0, "\n".join(stream.lines)
    stream.join()
    print("\n".join(stream.lines))
    assert stream.lines[-1] == "stopped cleanly."
    warehouse = example_project / "target" / "connect" / "warehouse"
    logged = sorted(r["batch_id"] for r in event_log(spark, warehouse, "orders_merge"))
    commits = example_project / "target" / "connect" / "checkpoints" / "orders_merge" / "commits"
    committed = sorted(int(p.name) for p in commits.iterdir() if p.name.isdigit())
    assert logged == committed and 0 in logged  # no batch ran without being committed

    # `runner run` carries on from the checkpoint and drains the rest
    result = runner(example_project, "run", "--select", "orders_merge+", "--verbose")

    print(result.stdout)
    assert f"(target connect, {local_cluster.connect_url})" in result.stdout
    # progress comes back from the event log: the batch function ran on the server
    assert "orders_merge batch 0: 5 rows in; inserted 3, updated 0, deleted 0" in result.stdout
    assert "orders_merge batch 3 batch[1] MERGE: " in result.stdout
    check_example_tables(spark, warehouse)
    history = json.loads(
        runner(example_project, "history", "-m", "orders_merge", "--format", "json").stdout
    )
    assert [b["input_rows"] for b in history] == [5, 3, 3, 4]
    seeded = runner(example_project, "seed").stdout
    assert "customers: loaded 3 rows in ref.customers" in seeded
    tested = runner(example_project, "test", "--select", "unique_orders_merge_order_id").stdout
    assert "PASS data unique_orders_merge_order_id" in tested
    assert " 0 failed, 0 errors" in tested


def event_log(spark: SparkSession, warehouse: Path, model: str) -> list[Row]:
    log = spark.read.format("delta").load(str(warehouse / "_runner" / "event_log"))
    return log.where(log.model == model).collect()
