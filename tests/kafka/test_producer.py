"""The order-event producer: deterministic, realistic, and honest about what it sent."""

from __future__ import annotations

from collections import Counter

from confluent_kafka import Consumer, TopicPartition

from runner_devtools.kafka.producer import MALFORMED_KINDS, create_topic, generate, produce


def test_same_seed_same_messages_other_seed_others() -> None:
    first = [(m.key, m.value) for m in generate(200, seed=3)]
    assert first == [(m.key, m.value) for m in generate(200, seed=3)]
    assert first != [(m.key, m.value) for m in generate(200, seed=4)]


def test_stream_has_duplicates_late_updates_deletes_and_every_malformed_kind() -> None:
    messages = generate(200, seed=7, malformed_share=0.1)
    assert len(messages) == 200
    kinds = Counter(m.malformed for m in messages if m.malformed)
    assert set(kinds) == set(MALFORMED_KINDS) and sum(kinds.values()) == 20
    events = [m.event for m in messages if m.event]
    values = Counter(m.value for m in messages if m.event)
    assert any(n > 1 for n in values.values()), "no duplicate"
    assert any(e["op"] == "D" for e in events), "no delete"
    newest: dict[str, str] = {}
    late = 0
    for e in events:
        if e["updated_at"] < newest.get(e["order_id"], ""):
            late += 1
        newest[e["order_id"]] = max(newest.get(e["order_id"], ""), e["updated_at"])
    assert late > 0, "no out-of-order update"
    # The invariants behind the oracle: first event an insert, nothing after a delete.
    seen: dict[str, str] = {}
    for e in events:
        assert seen.get(e["order_id"], "I") != "D"
        if e["order_id"] not in seen:
            assert e["op"] == "I"
        seen[e["order_id"]] = e["op"]


def test_produce_records_what_the_broker_stored(broker: str) -> None:
    create_topic(broker, "producer-test", partitions=2)
    sent = produce(broker, "producer-test", count=60, seed=11, malformed_share=0.2)
    assert len(sent.sent) == 60 and len(sent.malformed) == 12
    assert {s.partition for s in sent.sent} == {0, 1}

    consumer = Consumer({"bootstrap.servers": broker, "group.id": "producer-test"})
    try:
        stored = {}
        for partition in (0, 1):
            expected = sum(1 for s in sent.sent if s.partition == partition)
            consumer.assign([TopicPartition("producer-test", partition, 0)])
            for _ in range(expected):
                message = consumer.poll(10)
                if message is None:
                    break
                assert message.error() is None
                stored[(message.partition(), message.offset())] = message.value()
    finally:
        consumer.close()
    assert stored == {(s.partition, s.offset): s.message.value for s in sent.sent}
