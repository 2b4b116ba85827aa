"""The crash test with the Kafka source: `runner stream` over a real topic is SIGKILLed while a
batch's MERGE is in flight (with --slow three times, the others at random moments), then
drained; the target equals the producer's oracle and the quarantine holds each malformed record
exactly once. The local crash test (tests/spark/test_crash_recovery.py) kills at a random moment
too on every run."""

from __future__ import annotations

import random
from pathlib import Path

from pyspark.sql import SparkSession

from runner_devtools.kafka.producer import create_topic, produce
from tests.conftest import Report
from tests.spark.processes import kill_repeatedly

SEED, MALFORMED_SHARE, PER_TRIGGER = 11, 0.1, 40
KILLS, SLOW_KILLS = 1, 3  # SIGKILLs of `runner stream`: by default, and with --slow
MODEL = "orders_kafka_merge"


def test_sigkill_and_restart_with_kafka_loses_and_doubles_nothing(
    broker: str,
    spark: SparkSession,
    example_project: Path,
    report: Report,
    kill_count: int,
    cli,
) -> None:
    create_topic(broker, "orders-crash", partitions=2)
    # a batch for each kill to land in and one for the drain: two batches by default (four
    # with --slow) rather than four, half the batches for the drain to run
    count = PER_TRIGGER * (kill_count + 1)
    sent = produce(broker, "orders-crash", count, SEED, MALFORMED_SHARE)
    assert sent.malformed  # the quarantine is part of what the oracle checks
    streams = example_project / "streams" / "orders_kafka.yml"
    streams.write_text(
        streams.read_text()
        .replace("localhost:9092", broker)
        .replace("topic: orders", "topic: orders-crash")
        .replace("max_offsets_per_trigger: 100", f"max_offsets_per_trigger: {PER_TRIGGER}")
        .replace("processing_time: 5 seconds", "processing_time: 1 second")
    )

    kills = kill_repeatedly(example_project, MODEL, MODEL, kill_count, random.Random(SEED))

    drain = cli("run", "-m", MODEL, "-p", example_project)  # in-process, on the suite's session
    assert drain.exit_code == 0, drain.output

    warehouse = example_project / "target" / "local" / "warehouse"
    target = spark.read.format("delta").load(str(warehouse / "silver" / "orders_from_kafka"))
    assert {r["order_id"]: r.asDict() for r in target.collect()} == sent.expected_state()
    quarantine = spark.read.format("delta").load(str(warehouse / "_quarantine" / MODEL))
    offsets = sorted((r["partition"], r["offset"]) for r in quarantine.collect())
    assert offsets == sorted(sent.malformed_offsets())  # each malformed record exactly once
    log = spark.read.format("delta").load(str(warehouse / "_runner" / "event_log"))
    batch_ids = sorted(r["batch_id"] for r in log.where(f"model = '{MODEL}'").collect())
    assert batch_ids == list(range(len(batch_ids)))  # one row per batch, none twice
    between = [k for k in kills if "between statements" in k and "batch[0]" in k]
    report(f"Kafka: {len(kills)} SIGKILLs ({len(between)} between two statements):", kills)
    assert len(kills) == kill_count and len(between) == (kill_count + 1) // 2  # every other kill
