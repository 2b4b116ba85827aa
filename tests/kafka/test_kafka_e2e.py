"""End to end: a real broker, 200 order events with malformed ones, `runner run` draining the
topic into Delta through the Kafka variant of the example model (in-process, on the suite's
session; tests/kafka/test_kafka_crash.py runs `runner stream` over Kafka as its own process)."""

from __future__ import annotations

import re
from pathlib import Path

from pyspark.sql import SparkSession

from runner_devtools.kafka.producer import EXPECTED_REASONS, create_topic, produce

COUNT, SEED, MALFORMED_SHARE, PER_TRIGGER = 200, 7, 0.1, 120  # two batches: 120 + 80
# "orders_kafka_merge batch 0: 90 rows in; inserted 23, updated 0, deleted 0 in 9.1s"
BATCH_LINE = re.compile(
    r"orders_kafka_merge batch (\d+): (\d+) rows in[^;]*; "
    r"inserted (\d+), updated (\d+), deleted (\d+)"
)


def test_runner_run_drains_kafka_into_delta_and_quarantines_the_malformed(
    broker: str, spark: SparkSession, example_project: Path, cli, monkeypatch
) -> None:
    create_topic(broker, "orders-e2e", partitions=2)
    sent = produce(broker, "orders-e2e", COUNT, SEED, MALFORMED_SHARE)
    assert len(sent.malformed) == 20
    streams = example_project / "streams" / "orders_kafka.yml"
    streams.write_text(
        streams.read_text()
        .replace("localhost:9092", broker)
        .replace("topic: orders", "topic: orders-e2e")
        .replace("max_offsets_per_trigger: 100", f"max_offsets_per_trigger: {PER_TRIGGER}")
    )

    monkeypatch.chdir(example_project)  # the project is found in the working directory
    result = cli("run", "--model", "orders_kafka_merge")

    assert result.exit_code == 0, result.output
    batches = [tuple(map(int, m.groups())) for m in BATCH_LINE.finditer(result.output)]
    assert [b[0] for b in batches] == list(range(len(batches)))
    assert len(batches) >= 2  # max_offsets_per_trigger cuts the topic into micro-batches

    warehouse = example_project / "target" / "local" / "warehouse"
    target = spark.read.format("delta").load(str(warehouse / "silver" / "orders_from_kafka"))
    expected = sent.expected_state()
    assert {r["order_id"]: r.asDict() for r in target.collect()} == expected

    # The MERGE counts add up to the rows in the target.
    inserted, deleted = sum(b[2] for b in batches), sum(b[4] for b in batches)
    assert inserted - deleted == len(expected)
    assert sum(b[1] for b in batches) == len(sent.good)  # rows in: every good record, once

    quarantine = spark.read.format("delta").load(
        str(warehouse / "_quarantine" / "orders_kafka_merge")
    )
    rows = quarantine.collect()
    assert len(rows) == len(sent.malformed)  # each exactly once
    assert {(r["partition"], r["offset"]): r["reason"] for r in rows} == {
        where: EXPECTED_REASONS[kind] for where, kind in sent.malformed_offsets().items()
    }
    values = {(s.partition, s.offset): s.message.value for s in sent.malformed}
    for r in rows:
        raw = values[(r["partition"], r["offset"])]
        assert r["raw"] == (None if raw is None else raw.decode())
        assert r["topic"] == "orders-e2e" and r["model"] == "orders_kafka_merge"
    # Good + quarantined = everything produced.
    assert len(sent.good) + len(rows) == COUNT

    # A second run finds nothing new: nothing is merged or quarantined again.
    again = cli("run", "--model", "orders_kafka_merge")
    assert again.exit_code == 0, again.output
    assert not BATCH_LINE.search(again.output)
    assert quarantine.count() == len(sent.malformed)
    assert target.count() == len(expected)
