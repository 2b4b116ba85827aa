"""Kafka over Spark Connect: `runner server start` in the example project (whose Kafka model
makes the server load Spark's Kafka connector), then `runner run` of the Kafka model as its own
process through that server, which reads the topic, merges and quarantines on the server. The
broker is this folder's; the server is this test's and stopped by PID at its end."""

from __future__ import annotations

import json
from pathlib import Path

from pyspark.sql import SparkSession

from runner.processes import alive
from runner_devtools.kafka.producer import EXPECTED_REASONS, create_topic, produce
from tests.cluster.conftest import runner
from tests.cluster.test_local_server import USING
from tests.kafka.test_kafka_e2e import BATCH_LINE

COUNT, SEED, MALFORMED_SHARE, PER_TRIGGER = 60, 11, 0.1, 40


def test_kafka_model_runs_through_the_local_server_with_its_quarantine(
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
    runner(example_project, "server", "start")
    pid = json.loads((example_project / "target" / "server" / "server.json").read_text())["pid"]
    try:
        ran = runner(example_project, "run", "--model", "orders_kafka_merge")
    finally:
        runner(example_project, "server", "stop")
    assert not alive(pid)
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
