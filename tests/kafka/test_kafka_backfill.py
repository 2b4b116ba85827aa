"""`runner backfill` of a model on Kafka after retention deleted the oldest records: the dry run
names the gap (topic, partition, offsets), plans to keep the live rows the shadow cannot
rebuild, and its difference is the one an oracle computes from the records still there;
`--apply` keeps those rows and takes the shadow's values for the rest."""

from __future__ import annotations

import json
from pathlib import Path

from pyspark.sql import SparkSession

from runner_devtools.kafka.producer import ProducedEvents, create_topic, produce

# this seed and cut leave keys only in live (all their records deleted) and changed ones
TOPIC, COUNT, SEED, DELETED_BEFORE = "orders-retention", 80, 3, 60


def delete_records_before(bootstrap_servers: str, topic: str, offset: int) -> None:
    """What retention does to the oldest segment: partition 0 then starts at ``offset``."""
    from confluent_kafka import TopicPartition
    from confluent_kafka.admin import AdminClient

    admin = AdminClient({"bootstrap.servers": bootstrap_servers})
    futures = admin.delete_records([TopicPartition(topic, 0, offset)])
    for future in futures.values():
        assert future.result(timeout=30).low_watermark == offset


def test_backfill_names_the_records_kafka_no_longer_holds_and_keeps_their_rows(
    broker: str, spark: SparkSession, example_project: Path, cli, monkeypatch
) -> None:
    create_topic(broker, TOPIC, partitions=1)
    sent = produce(broker, TOPIC, COUNT, SEED, malformed_share=0)
    streams = example_project / "streams" / "orders_kafka.yml"
    streams.write_text(
        streams.read_text()
        .replace("localhost:9092", broker)
        .replace("topic: orders", f"topic: {TOPIC}")
    )
    monkeypatch.chdir(example_project)
    live = cli("run", "--model", "orders_kafka_merge")
    assert live.exit_code == 0, live.output

    delete_records_before(broker, TOPIC, DELETED_BEFORE)
    result = cli("backfill", "--model", "orders_kafka_merge", "--format", "json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)

    assert report["source_gap"]["checked"] is True
    assert report["source_gap"]["missing"] == [f"{TOPIC}/0 offsets 0 to {DELETED_BEFORE - 1}"]
    assert (
        "1 of the 1 partition(s) the live model read lost records" in (report["source_gap"]["note"])
    )

    # the oracle: the model's result over every record (live) and over those left (shadow)
    retained = ProducedEvents(TOPIC)
    retained.sent = [s for s in sent.sent if s.offset >= DELETED_BEFORE]
    live_rows, shadow_rows = sent.expected_state(), retained.expected_state()
    only_live = len(live_rows.keys() - shadow_rows.keys())
    changed = sum(
        1 for k in live_rows.keys() & shadow_rows.keys() if live_rows[k] != shadow_rows[k]
    )
    assert only_live > 0  # the example must exercise the rule
    assert report["difference"]["only_live"] == only_live
    assert report["difference"]["only_shadow"] == len(shadow_rows.keys() - live_rows.keys())
    assert report["difference"]["changed"] == changed
    assert report["apply_plan"]["delete"] == 0 and report["apply_plan"]["keep"] == only_live

    recorded = json.loads((example_project / "target/backfill/orders_kafka_merge.json").read_text())
    assert recorded["dry_run"] is True and recorded["source_gap"] == report["source_gap"]
    assert recorded["text"]["source_gap"].startswith("source gap: 1 of the 1 partition(s)")

    applied = cli("backfill", "--model", "orders_kafka_merge", "--apply")
    assert applied.exit_code == 0, applied.output
    assert f"kept {only_live} row(s) only in live" in " ".join(applied.output.split())
    target = spark.read.format("delta").load(
        str(example_project / "target/local/warehouse/silver/orders_from_kafka")
    )
    kept = {k: v for k, v in live_rows.items() if k not in shadow_rows}
    assert {r["order_id"]: r.asDict() for r in target.collect()} == {**kept, **shadow_rows}
