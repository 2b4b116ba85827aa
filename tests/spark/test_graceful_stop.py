"""Ctrl-C during `runner stream`: the batch in flight finishes, the process exits 0, and the
next start carries on from there."""

from __future__ import annotations

import re
import signal
from pathlib import Path

from pyspark.sql import SparkSession

from tests.spark.processes import StreamProcess
from tests.spark.test_orders_pipeline import EXPECTED_ORDERS, land_sample


def test_sigint_stops_after_the_batch_in_flight(spark: SparkSession, example_project: Path, cli):
    land_sample(example_project, ["001.json", "002.json", "003.json", "004.json"])
    stream = StreamProcess(example_project, select="orders_merge")

    started = stream.wait_for(re.compile(r"orders_merge batch 1 batch\[0\] CREATE"), 0, 180)
    assert started is not None, "\n".join(stream.lines)
    stream.process.send_signal(signal.SIGINT)  # as Ctrl-C does; the JVM ignores SIGINT
    assert stream.process.wait(timeout=120) == 0, "\n".join(stream.lines)
    stream.join()

    output = "\n".join(stream.lines)
    assert "SIGINT: stopping after the batch in flight..." in output
    assert output.rstrip().endswith("stopped cleanly.")
    # batch 1 was running when the signal came: it finished, every statement of it
    assert re.search(r"orders_merge batch 1: 3 rows in; inserted 1, updated 1, deleted 1", output)
    assert "batch 3:" not in output
    warehouse = example_project / "target" / "local" / "warehouse"
    log = spark.read.format("delta").load(str(warehouse / "_runner" / "event_log"))
    finished = sorted(r["batch_id"] for r in log.collect())
    commits = example_project / "target" / "local" / "checkpoints" / "orders_merge" / "commits"
    committed = sorted(int(p.name) for p in commits.iterdir() if p.name.isdigit())
    assert finished == committed and 1 in finished  # nothing ran without being committed

    drained = cli("run", "-m", "orders_merge", "-p", example_project)  # in-process: no new JVM
    assert drained.exit_code == 0, drained.output
    orders = spark.read.format("delta").load(str(warehouse / "silver" / "orders"))
    assert [tuple(r) for r in orders.orderBy("order_id").collect()] == EXPECTED_ORDERS
