"""`runner server start` in the example project (whose Kafka model makes the server load Spark's
Kafka connector), then commands as their own processes through that server: `runner run` of the
Kafka model, which reads the topic, merges and quarantines on the server; `runner run` and
`runner show` of the file model (the fast inner loop of docs/inner-loop.md); then `runner server
stop`. One server for both (a server start is a JVM with Delta and the Kafka connector). The
broker is this folder's; the server is this test's and stopped by PID at its end."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

from pyspark.sql import SparkSession

from runner.processes import alive
from runner_devtools.kafka.producer import EXPECTED_REASONS, create_topic, produce
from tests.cluster.conftest import RUNNER, runner
from tests.kafka.test_kafka_e2e import BATCH_LINE
from tests.spark.test_orders_pipeline import land_sample

COUNT, SEED, MALFORMED_SHARE, PER_TRIGGER = 60, 11, 0.1, 40
USING = re.compile(r"^using the local server (sc://127\.0\.0\.1:\d+) \(runner server stop", re.M)


def cells(stdout: str) -> list[list[str]]:
    """The rows of a rich table as lists of cell texts."""
    return [
        [cell.strip() for cell in line.strip("│").split("│")]
        for line in stdout.splitlines()
        if line.startswith("│")
    ]


def test_kafka_and_file_models_run_through_the_local_server_with_its_quarantine(
    broker: str, spark: SparkSession, example_project: Path
) -> None:
    create_topic(broker, "orders-connect", partitions=2)
    sent = produce(broker, "orders-connect", COUNT, SEED, MALFORMED_SHARE)
    streams = example_project / "streams" / "orders_kafka.yml"
    streams.write_text(
        streams.read_text()
        .replace("localhost:9092", broker)
        .replace("topic: orders", "topic: orders-connect")
        .replace("max_offsets_per_trigger: 100", f"max_offsets_per_trigger: {PER_TRIGGER}")
    )
    land_sample(example_project, ["001.json"])
    started = runner(example_project, "server", "start")
    state_file = example_project / "target" / "server" / "server.json"
    state = json.loads(state_file.read_text())
    pid = state["pid"]
    try:
        assert alive(pid)
        assert f"{state['address']}, pid {pid}" in started.stdout
        assert state["warehouse"] == str(example_project / "target" / "local" / "warehouse")
        ran = runner(example_project, "run", "--model", "orders_kafka_merge")

        files = runner(example_project, "run", "--select", "orders_merge")
        assert USING.search(files.stderr), files.stderr
        assert "orders_merge batch 0: 5 rows in; inserted 3" in files.stdout
        shown = runner(example_project, "show", "--model", "orders_merge")
        used = USING.search(shown.stderr)
        assert used is not None and used.group(1) == state["address"], shown.stderr
        assert "silver.orders (3 rows)" in shown.stdout
        assert cells(shown.stdout) == [
            ["o1", "c1", "paid", "10.00", "2024-01-01 10:05:00"],
            ["o2", "c2", "created", "25.50", "2024-01-01 10:01:00"],
            ["o3", "c1", "created", "7.25", "2024-01-01 10:02:00"],
        ]
        # the same table in the same warehouse: the checkpoint is where in-process runs keep it
        checkpoints = example_project / "target" / "local" / "checkpoints"
        assert (checkpoints / "orders_merge" / "commits" / "0").exists()
        assert "running, pid" in runner(example_project, "server", "status").stdout
    finally:
        stopped = runner(example_project, "server", "stop")
    assert f"stopped the local server (pid {pid})" in stopped.stdout
    assert not alive(pid)
    assert not state_file.exists()
    status = subprocess.run(
        [RUNNER, "server", "status", "-p", str(example_project)], capture_output=True, text=True
    )
    assert status.returncode == 1 and "no local server" in status.stdout

    assert USING.search(ran.stderr), ran.stderr
    batches = [tuple(map(int, m.groups())) for m in BATCH_LINE.finditer(ran.stdout)]
    assert [b[0] for b in batches] == list(range(len(batches))) and len(batches) >= 2
    warehouse = example_project / "target" / "local" / "warehouse"
    target = spark.read.format("delta").load(str(warehouse / "silver" / "orders_from_kafka"))
    assert {r["order_id"]: r.asDict() for r in target.collect()} == sent.expected_state()
    assert sum(b[1] for b in batches) == len(sent.good)  # rows in: every good record, once
    quarantine = spark.read.format("delta").load(
        str(warehouse / "_quarantine" / "orders_kafka_merge")
    )
    assert {(r["partition"], r["offset"]): r["reason"] for r in quarantine.collect()} == {
        where: EXPECTED_REASONS[kind] for where, kind in sent.malformed_offsets().items()
    }
    assert quarantine.count() == len(sent.malformed) > 0  # each exactly once
