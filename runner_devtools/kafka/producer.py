"""A deterministic producer of realistic order events, with malformed messages mixed in.

Events have the columns of the example's orders stream: order_id, customer_id, status, amount,
updated_at, op ('I' insert, 'U' update, 'D' delete), as JSON, keyed by order_id. With the same
seed and count the same messages are produced in the same order. The stream contains:

- duplicates: an earlier event sent again, byte for byte;
- out-of-order updates: an event older (updated_at) than one already sent for the order;
- deletes: an order's last event, with its newest updated_at;
- malformed messages (``malformed_share`` of all): invalid JSON, a value that is not a JSON
  object, a string where a number or a timestamp is expected, a null value, a null order_id.

The generator keeps the final state of the target independent of how records are cut into
micro-batches, for a MERGE with a sequence guard (``s.updated_at > t.updated_at``) that deletes
on op 'D': an order's first event is an insert, and nothing is sent for an order after its
delete (a late event after a delete would re-insert it, which no MERGE can tell apart). So
``ProducedEvents.expected_state()`` is an oracle for any batch size.

Command line::

    python -m runner_devtools.kafka.producer --bootstrap-servers localhost:9092 --topic orders \\
        --count 200 --seed 7 --malformed-share 0.1
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any

START = datetime(2024, 1, 1, tzinfo=UTC)
STATUSES = ("created", "paid", "packed", "shipped", "delivered")
MALFORMED_KINDS = (
    "invalid_json",
    "not_an_object",
    "amount_not_a_number",
    "updated_at_not_a_timestamp",
    "null_value",
    "null_order_id",
)
# The quarantine reason each kind gets (runner/spark/sources/kafka.py), for tests and docs.
EXPECTED_REASONS = {
    "invalid_json": "invalid JSON",
    "not_an_object": "not a JSON object",
    "amount_not_a_number": "schema mismatch: amount (DECIMAL(10,2))",
    "updated_at_not_a_timestamp": "schema mismatch: updated_at (TIMESTAMP)",
    "null_value": "null value",
    "null_order_id": "missing required field(s): order_id",
}


@dataclass(frozen=True)
class Message:
    """One message to send; ``event`` is set for good ones, ``malformed`` (a kind) for bad."""

    key: bytes | None
    value: bytes | None
    event: dict[str, Any] | None = None
    malformed: str | None = None


@dataclass(frozen=True)
class SentMessage:
    """A message as the broker stored it."""

    message: Message
    partition: int
    offset: int


@dataclass
class ProducedEvents:
    """What was sent: every message with its partition and offset. The test oracle."""

    topic: str
    sent: list[SentMessage] = field(default_factory=list)

    @property
    def good(self) -> list[SentMessage]:
        return [s for s in self.sent if s.message.malformed is None]

    @property
    def malformed(self) -> list[SentMessage]:
        return [s for s in self.sent if s.message.malformed is not None]

    def malformed_offsets(self) -> dict[tuple[int, int], str]:
        """(partition, offset) -> malformed kind."""
        return {(s.partition, s.offset): str(s.message.malformed) for s in self.malformed}

    def expected_state(self, delete_op: str = "D") -> dict[str, dict[str, Any]]:
        """order_id -> its row in the target after every good event is merged: the event with
        the newest updated_at, unless that is a delete. Values as Python types (Decimal,
        naive UTC datetime)."""
        latest: dict[str, dict[str, Any]] = {}
        for sent in self.good:
            event = sent.message.event
            assert event is not None
            current = latest.get(event["order_id"])
            if current is None or event["updated_at"] > current["updated_at"]:
                latest[event["order_id"]] = event
        return {
            order_id: {
                "order_id": order_id,
                "customer_id": e["customer_id"],
                "status": e["status"],
                "amount": Decimal(str(e["amount"])).quantize(Decimal("0.01")),
                "updated_at": _parse_time(e["updated_at"]).replace(tzinfo=None),
            }
            for order_id, e in latest.items()
            if e["op"] != delete_op
        }


def generate(count: int, seed: int = 7, malformed_share: float = 0.1) -> list[Message]:
    """``count`` messages, about ``malformed_share`` of them malformed. Deterministic."""
    if not 0 <= malformed_share < 1:
        raise ValueError("malformed_share must be in [0, 1)")
    rng = random.Random(seed)
    n_bad = round(count * malformed_share)
    events = _events(count - n_bad, rng)
    messages = [Message(_key(e["order_id"]), _json(e), event=e) for e in events]
    for i in range(n_bad):
        kind = MALFORMED_KINDS[i % len(MALFORMED_KINDS)]
        position = rng.randrange(len(messages) + 1)
        messages.insert(position, _malformed(kind, rng))
    return messages


def produce(
    bootstrap_servers: str,
    topic: str,
    count: int,
    seed: int = 7,
    malformed_share: float = 0.1,
) -> ProducedEvents:
    """Send ``generate(count, seed, malformed_share)`` to ``topic``; returns what the broker
    acknowledged, with offsets. Raises RuntimeError if any message was not delivered."""
    from confluent_kafka import Producer

    producer = Producer(
        {
            "bootstrap.servers": bootstrap_servers,
            "enable.idempotence": True,  # no duplicates from retries: the oracle stays exact
            "linger.ms": 5,
            "log_level": 3,  # errors only: no warnings while the broker warms up
        }
    )
    result = ProducedEvents(topic)
    errors: list[str] = []
    for message in generate(count, seed, malformed_share):

        def delivered(err: Any, record: Any, message: Message = message) -> None:
            if err is not None:
                errors.append(str(err))
            else:
                result.sent.append(SentMessage(message, record.partition(), record.offset()))

        producer.produce(topic, key=message.key, value=message.value, on_delivery=delivered)
        producer.poll(0)
    remaining = producer.flush(60)
    if errors or remaining:
        raise RuntimeError(
            f"{len(errors)} message(s) failed and {remaining} undelivered to {topic} at "
            f"{bootstrap_servers}: {errors[:3]}"
        )
    result.sent.sort(key=lambda s: (s.partition, s.offset))
    return result


def create_topic(bootstrap_servers: str, topic: str, partitions: int = 1) -> None:
    """Create ``topic`` with ``partitions`` partitions (one replica); waits until it exists."""
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient({"bootstrap.servers": bootstrap_servers})
    futures = admin.create_topics([NewTopic(topic, num_partitions=partitions)])
    futures[topic].result(timeout=30)


# -- generation ----------------------------------------------------------------------------


def _events(count: int, rng: random.Random) -> list[dict[str, Any]]:
    n_orders = max(1, count // 5)
    fresh = [f"o-{i:04d}" for i in range(1, n_orders + 1)]
    open_orders: list[str] = []  # inserted, not deleted
    history: dict[str, list[dict[str, Any]]] = {}
    clock = START
    events: list[dict[str, Any]] = []
    while len(events) < count:
        clock += timedelta(seconds=rng.randint(10, 60))
        roll = rng.random()
        if fresh and (not open_orders or roll < 0.3):
            order_id = fresh.pop(rng.randrange(len(fresh)))
            event: dict[str, Any] = {
                "order_id": order_id,
                "customer_id": f"c-{rng.randint(1, 40):03d}",
                "status": "created",
                "amount": float(Decimal(rng.randint(100, 50000)) / 100),
                "updated_at": _time(clock),
                "op": "I",
            }
            open_orders.append(order_id)
        elif roll < 0.45 and any(len(history[o]) >= 2 for o in open_orders):
            order_id = rng.choice([o for o in open_orders if len(history[o]) >= 2])
            event = dict(rng.choice(history[order_id][:-1]))  # a duplicate of an older event
        elif roll < 0.55 and any(len(history[o]) >= 1 for o in open_orders):
            order_id = rng.choice(open_orders)
            late = _late_update(history[order_id], rng)
            if late is None:
                continue
            event = late
        elif roll < 0.62 and len(open_orders) > 1:
            order_id = open_orders.pop(rng.randrange(len(open_orders)))
            event = {**history[order_id][-1], "op": "D", "updated_at": _time(clock)}
        elif open_orders:
            order_id = rng.choice(open_orders)
            last = max(history[order_id], key=lambda e: e["updated_at"])
            status = STATUSES[min(STATUSES.index(last["status"]) + 1, len(STATUSES) - 1)]
            amount = last["amount"]
            if rng.random() < 0.3:
                amount = float(Decimal(rng.randint(100, 50000)) / 100)
            event = {**last, "status": status, "amount": amount}
            event.update(updated_at=_time(clock), op="U")
        else:
            break  # every order inserted and deleted
        history.setdefault(order_id, []).append(event)
        events.append(event)
    return events


def _late_update(history: list[dict[str, Any]], rng: random.Random) -> dict[str, Any] | None:
    """An update older than the order's newest event (sent after it: out of order), with a
    timestamp no other event of the order has."""
    newest = max(_parse_time(e["updated_at"]) for e in history)
    oldest = min(_parse_time(e["updated_at"]) for e in history)
    taken = {e["updated_at"] for e in history}
    for _ in range(5):
        when = newest - timedelta(seconds=rng.randint(1, 9))
        if when > oldest and _time(when) not in taken:
            base = max(history, key=lambda e: e["updated_at"])
            return {**base, "status": "paid", "updated_at": _time(when), "op": "U"}
    return None


def _malformed(kind: str, rng: random.Random) -> Message:
    order_id = f"o-{rng.randint(1, 9999):04d}"
    good = {
        "order_id": order_id,
        "customer_id": "c-001",
        "status": "created",
        "amount": 10.5,
        "updated_at": _time(START),
        "op": "I",
    }
    if kind == "invalid_json":
        value: bytes | None = _json(good)[:-7]  # cut off: unbalanced braces
    elif kind == "not_an_object":
        value = json.dumps([good]).encode()
    elif kind == "amount_not_a_number":
        value = _json({**good, "amount": "ten euros"})
    elif kind == "updated_at_not_a_timestamp":
        value = _json({**good, "updated_at": "yesterday"})
    elif kind == "null_value":
        value = None
    elif kind == "null_order_id":
        value = _json({**good, "order_id": None})
    else:
        raise ValueError(f"unknown malformed kind {kind!r}")
    return Message(_key(order_id), value, malformed=kind)


def _time(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def _parse_time(text: str) -> datetime:
    return datetime.strptime(text, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)


def _key(order_id: str) -> bytes:
    return order_id.encode()


def _json(event: dict[str, Any]) -> bytes:
    return json.dumps(event, separators=(",", ":")).encode()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m runner_devtools.kafka.producer",
        description="Produce deterministic order events (with malformed ones) to a topic.",
    )
    parser.add_argument("--bootstrap-servers", default="localhost:9092")
    parser.add_argument("--topic", default="orders")
    parser.add_argument("--count", type=int, default=200)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--malformed-share", type=float, default=0.1)
    args = parser.parse_args(argv)
    result = produce(
        args.bootstrap_servers, args.topic, args.count, args.seed, args.malformed_share
    )
    kinds: dict[str, int] = {}
    for sent in result.malformed:
        kinds[str(sent.message.malformed)] = kinds.get(str(sent.message.malformed), 0) + 1
    print(
        f"sent {len(result.sent)} messages to {args.topic}: {len(result.good)} order events "
        f"({len(result.expected_state())} orders remain after merging), "
        f"{len(result.malformed)} malformed"
    )
    for sent in result.malformed:
        print(f"  malformed at partition {sent.partition} offset {sent.offset}: "
              f"{sent.message.malformed}")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
