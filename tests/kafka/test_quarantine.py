"""Parsing a Kafka batch: good rows go on with their Kafka columns, each kind of malformed
record lands in the quarantine table once, with its reason. Real Spark and Delta; the batch is
built in the Kafka source's shape, so no broker is needed here."""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal
from pathlib import Path

import pytest
from pyspark.sql import DataFrame, SparkSession

from runner.spark.sources.kafka import prepare_kafka_batch
from runner.spark.sources.quarantine import QuarantineError, quarantine_location
from runner.spark.sources.source_batch import BatchSourceContext, SourceCounts, quarantine_rejected
from runner.spark.sources.streams import prepare_batch
from runner.specs.kafka import KafkaSpec
from tests.conftest import ORDERS_SCHEMA

GOOD = (
    '{"order_id":"o1","customer_id":"c1","status":"paid","amount":12.5,'
    '"updated_at":"2024-01-01T10:00:00Z","op":"U"}'
)
RECORDS = [  # (value, expected reason or None)
    (GOOD, None),
    ('{"order_id":"o2","amount":"7.25","updated_at":1704103200,"op":"I","extra":1}', None),
    (None, "null value"),
    ('{"order_id":"o3","amount":', "invalid JSON"),
    ("", "invalid JSON"),
    ('[{"order_id":"o4"}]', "not a JSON object"),
    ('"o5"', "not a JSON object"),
    ('{"order_id":"o6","amount":"ten","updated_at":"2024-01-01T10:00:00Z","op":"I"}',
     "schema mismatch: amount (DECIMAL(10,2))"),
    ('{"order_id":"o7","amount":1,"updated_at":"yesterday","op":"I"}',
     "schema mismatch: updated_at (TIMESTAMP)"),
    ('{"order_id":"o8","amount":123456789012.5,"updated_at":"2024-01-01T10:00:00Z","op":"I"}',
     "schema mismatch: amount (DECIMAL(10,2))"),
    ('{"order_id":null,"amount":1,"updated_at":"2024-01-01T10:00:00Z","op":"I"}',
     "missing required field(s): order_id"),
    ('{"amount":1,"op":"I"}', "missing required field(s): order_id, updated_at"),
]  # fmt: skip


@pytest.fixture
def stream(example_project: Path):
    from runner.project import load

    spec = load(example_project).streams["orders_kafka"]
    assert spec.kafka == KafkaSpec(
        bootstrap_servers="localhost:9092",
        topics=("orders",),
        max_offsets_per_trigger=100,
        value_schema=ORDERS_SCHEMA,
        required=("order_id", "updated_at", "op"),
    )
    return spec


def kafka_batch(spark: SparkSession, records: list[tuple[str | None, str | None]]):
    rows = [
        (f"k{i}".encode(), None if v is None else v.encode(), "orders", 0, 100 + i,
         datetime(2024, 1, 2, 0, 0, i))
        for i, (v, _) in enumerate(records)
    ]  # fmt: skip
    return spark.createDataFrame(
        rows,
        "key BINARY, value BINARY, topic STRING, partition INT, offset BIGINT, timestamp TIMESTAMP",
    )


def test_malformed_records_are_quarantined_with_their_reason(spark, stream, tmp_path) -> None:
    context = BatchSourceContext("kq", 0, tmp_path / "warehouse", query_id="query-1")
    source = prepare_batch(stream, kafka_batch(spark, RECORDS), context)
    quarantine_rejected(source, context)
    good = source.rows

    assert good.columns == [
        *["order_id", "customer_id", "status", "amount", "updated_at", "op"],
        *["kafka_key", "kafka_topic", "kafka_partition", "kafka_offset", "kafka_timestamp"],
    ]
    rows = sorted(tuple(r) for r in good.collect())
    assert rows == [
        ("o1", "c1", "paid", Decimal("12.50"), datetime(2024, 1, 1, 10), "U",
         "k0", "orders", 0, 100, datetime(2024, 1, 2, 0, 0, 0)),
        ("o2", None, None, Decimal("7.25"), datetime(2024, 1, 1, 10), "I",
         "k1", "orders", 0, 101, datetime(2024, 1, 2, 0, 0, 1)),
    ]  # fmt: skip

    quarantined = spark.read.format("delta").load(
        str(quarantine_location(tmp_path / "warehouse", "kq"))
    )
    by_offset = {r["offset"]: r for r in quarantined.collect()}
    expected = {100 + i: reason for i, (_, reason) in enumerate(RECORDS) if reason}
    assert {o: r["reason"] for o, r in by_offset.items()} == expected
    sample = by_offset[103]
    assert (sample["model"], sample["batch_id"], sample["topic"], sample["partition"]) == (
        "kq",
        0,
        "orders",
        0,
    )
    assert (sample["key"], sample["raw"]) == ("k3", '{"order_id":"o3","amount":')
    assert (sample["source"], sample["position"], sample["file"]) == ("kafka", "orders/0@103", None)
    assert by_offset[102]["raw"] is None and by_offset[102]["quarantined_at"] is not None
    assert spark.table("quarantine.kq").count() == len(expected)  # registered in the catalog

    assert source.counts == SourceCounts(rows_read=12, rows_quarantined=10)
    assert source.counts.rows_parsed == 2
    assert source.row_count == source.rows.count() == 2  # run_batch reads it, no second job
    source.release()


def reads_cache(frame: DataFrame) -> bool:
    """Whether a query over ``frame`` planned now reads a persisted frame."""
    plan = frame.select("*")._jdf.queryExecution().withCachedData().toString()
    return "InMemoryRelation" in plan


def persisted_rdds(spark: SparkSession) -> int:
    return len(spark.sparkContext._jsc.getPersistentRDDs())


def test_the_parsed_batch_is_cached_until_it_is_released(spark, stream, tmp_path) -> None:
    source = prepare_kafka_batch(stream, kafka_batch(spark, RECORDS[:2]))
    assert reads_cache(source.rows)  # the good rows come from the parse, computed once
    assert source.rows.count() == 2
    source.release()
    assert not reads_cache(source.rows)


def quarantine_once(stream, batch: DataFrame, context: BatchSourceContext) -> None:
    """What run_batch does with a batch's malformed records: parse, write, release."""
    source = prepare_kafka_batch(stream, batch)
    try:
        quarantine_rejected(source, context)
    finally:
        source.release()


def test_a_replayed_batch_is_not_quarantined_twice(spark, stream, tmp_path) -> None:
    warehouse = tmp_path / "warehouse"
    batch = kafka_batch(spark, RECORDS[:4])
    for batch_id, query_id in [(0, "q-a"), (0, "q-a"), (1, "q-a"), (1, "q-a")]:
        quarantine_once(stream, batch, BatchSourceContext("kr", batch_id, warehouse, query_id))
    table = spark.read.format("delta").load(str(quarantine_location(warehouse, "kr")))
    assert sorted(r["batch_id"] for r in table.collect()) == [0, 0, 1, 1]
    # A reset checkpoint is a new query: its batch 0 is new input, quarantined again.
    quarantine_once(stream, batch, BatchSourceContext("kr", 0, warehouse, "q-b"))
    assert table.count() == 6


def test_without_a_query_id_outside_a_stream_it_refuses(spark, stream, tmp_path) -> None:
    before = persisted_rdds(spark)
    context = BatchSourceContext("kn", 0, tmp_path)
    with pytest.raises(QuarantineError, match="query id is unknown"):
        quarantine_once(stream, kafka_batch(spark, RECORDS[2:3]), context)
    assert persisted_rdds(spark) == before  # a failed write still releases the parsed batch
