"""Deterministic order events for the upsert bench, and the table they must produce.

Pure Python (no pyspark): the unit tests check the generator's properties without a JVM.

The events look like the example project's stream (streams/orders.yml). Within each file:
several events of one order (the newest must win), exact duplicates, late events (older than
an event of the same order already landed in an earlier file or the same file: they must not
win) and deletes (``op = 'D'``). :func:`expected_rows` applies the files the way the bench's
MERGE does, one file per micro-batch, and is what the targets are compared against.
"""

from __future__ import annotations

import json
import os
import random
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

EVENT_SCHEMA = (
    "order_id STRING, customer_id STRING, status STRING, amount DECIMAL(10,2), "
    "updated_at TIMESTAMP, op STRING"
)
TARGET_COLUMNS = (
    "order_id STRING, customer_id STRING, status STRING, amount DECIMAL(10,2), updated_at TIMESTAMP"
)
DELETE_OP = "D"
UPSERT_OP = "U"
STATUSES = ("created", "paid", "shipped", "delivered")
KEY_DIGITS = 8  # o00000042: string order follows number order, so key ranges mean something
CUSTOMERS = 5_000
# Fresh events are 10 s apart; a late event sits 5 s off that grid, so no two events of one
# order share an updated_at unless they are exact duplicates (ties would make the winner
# depend on the dedupe's tie-break).
TICK = timedelta(seconds=10)
ORDERS_EPOCH = datetime(2024, 1, 1)
# Pre-built targets of the target-size curve hold rows of this time; the curve's events are
# newer, so their updates win.
TARGET_ROWS_TIME = datetime(2023, 12, 1)
CURVE_EPOCH = datetime(2024, 6, 1)


def order_id(number: int) -> str:
    return f"o{number:0{KEY_DIGITS}d}"


def customer_id(number: int) -> str:
    return f"c{number % CUSTOMERS:05d}"


@dataclass(frozen=True)
class OrderEvent:
    order_id: str
    customer_id: str
    status: str
    amount_cents: int
    updated_at: datetime
    op: str

    def json_line(self) -> str:
        # amount as a JSON number with exactly two decimals: read as DECIMAL(10,2), no float
        amount = f"{self.amount_cents // 100}.{self.amount_cents % 100:02d}"
        return (
            f'{{"order_id": {json.dumps(self.order_id)}, '
            f'"customer_id": {json.dumps(self.customer_id)}, '
            f'"status": {json.dumps(self.status)}, "amount": {amount}, '
            f'"updated_at": "{self.updated_at.isoformat()}", "op": {json.dumps(self.op)}}}'
        )

    def target_row(self) -> dict[str, str]:
        """The row this event leaves in the target, as text (the bench compares text)."""
        return {
            "order_id": self.order_id,
            "customer_id": self.customer_id,
            "status": self.status,
            "amount": f"{self.amount_cents // 100}.{self.amount_cents % 100:02d}",
            "updated_at": self.updated_at.isoformat(sep=" "),
        }


@dataclass(frozen=True)
class OrdersSpec:
    """The input of the three-variant comparison: ``files`` files (one micro-batch each) of
    ``events_per_file`` events on ``keys`` orders, plus duplicates."""

    files: int
    events_per_file: int
    keys: int
    duplicate_share: float = 0.05  # exact copies added to a file
    late_share: float = 0.03  # events older than one already landed for the order
    delete_share: float = 0.02
    seed: int = 12


@dataclass(frozen=True)
class InputSummary:
    files: int
    events: int
    orders: int  # distinct order ids in the input
    duplicates: int  # exact copies of an event in the same file
    late: int
    deletes: int
    expected_rows: int


@dataclass(frozen=True)
class GeneratedOrders:
    files: list[list[OrderEvent]]
    late: frozenset[OrderEvent]  # the late events, for the tests and the summary
    duplicates: int

    def summary(self) -> InputSummary:
        events = [e for file in self.files for e in file]
        return InputSummary(
            files=len(self.files),
            events=len(events),
            orders=len({e.order_id for e in events}),
            duplicates=self.duplicates,
            late=len(self.late),
            deletes=sum(e.op == DELETE_OP for e in events),
            expected_rows=len(expected_rows(self.files)),
        )


def generate_orders(spec: OrdersSpec) -> GeneratedOrders:
    """The same files for the same spec (``random.Random(seed)``, no clock, no hash order)."""
    rng = random.Random(spec.seed)
    clock = ORDERS_EPOCH
    newest: dict[int, OrderEvent] = {}  # the newest event generated so far per order number
    files: list[list[OrderEvent]] = []
    late: set[OrderEvent] = set()
    duplicates = 0
    for _ in range(spec.files):
        events: list[OrderEvent] = []
        for _ in range(spec.events_per_file):
            draw = rng.random()
            live = _live_order(rng, newest, spec.keys)
            if draw < spec.late_share and live is not None:
                event = _late_event(rng, newest[live])
                late.add(event)
            elif draw < spec.late_share + spec.delete_share and live is not None:
                clock += TICK
                event = _delete_event(newest[live], clock)
                newest[live] = event
            else:
                clock += TICK
                number = rng.randrange(spec.keys)
                event = _next_event(rng, number, newest.get(number), clock)
                newest[number] = event
            events.append(event)
        copies = rng.sample(events, round(spec.events_per_file * spec.duplicate_share))
        duplicates += len(copies)
        events.extend(copies)
        rng.shuffle(events)
        files.append(events)
    return GeneratedOrders(files, frozenset(late), duplicates)


def _live_order(rng: random.Random, newest: dict[int, OrderEvent], keys: int) -> int | None:
    """An order whose newest event is an upsert (it is in the target), or None."""
    for _ in range(8):
        number = rng.randrange(keys)
        if number in newest and newest[number].op == UPSERT_OP:
            return number
    return None


def _next_event(
    rng: random.Random, number: int, previous: OrderEvent | None, at: datetime
) -> OrderEvent:
    if previous is None or previous.op == DELETE_OP:
        return OrderEvent(
            order_id(number), customer_id(number), STATUSES[0], rng.randrange(100, 100_000), at, "U"
        )
    status = STATUSES[min(STATUSES.index(previous.status) + 1, len(STATUSES) - 1)]
    return OrderEvent(
        previous.order_id, previous.customer_id, status, previous.amount_cents, at, UPSERT_OP
    )


def _late_event(rng: random.Random, newest: OrderEvent) -> OrderEvent:
    """An event older than ``newest`` (5 s off the tick grid), with a different amount."""
    before = TICK * rng.randrange(0, 6) + TICK / 2
    return OrderEvent(
        newest.order_id,
        newest.customer_id,
        STATUSES[0],
        newest.amount_cents + rng.randrange(1, 1_000),
        newest.updated_at - before,
        UPSERT_OP,
    )


def _delete_event(newest: OrderEvent, at: datetime) -> OrderEvent:
    return OrderEvent(
        newest.order_id, newest.customer_id, "cancelled", newest.amount_cents, at, DELETE_OP
    )


def expected_rows(files: Iterable[Sequence[OrderEvent]]) -> dict[str, OrderEvent]:
    """The target after MERGE-ing each file as one micro-batch: the newest event per order in
    the batch; a matched row changes only if that event is newer (deleted if it is a delete);
    an unmatched order is inserted unless the event is a delete."""
    target: dict[str, OrderEvent] = {}
    for events in files:
        latest: dict[str, OrderEvent] = {}
        for event in events:
            seen = latest.get(event.order_id)
            if seen is None or event.updated_at > seen.updated_at:
                latest[event.order_id] = event
        for key, event in latest.items():
            current = target.get(key)
            if current is None:
                if event.op != DELETE_OP:
                    target[key] = event
            elif event.updated_at > current.updated_at:
                if event.op == DELETE_OP:
                    del target[key]
                else:
                    target[key] = event
    return target


RECENT_SHARE = 0.9  # of a "recent" batch's updates, those that hit the newest keys
RECENT_WINDOW = 0.05  # the newest keys: this share of the orders placed so far


def curve_batches(
    target_rows: int,
    batches: int,
    events: int,
    *,
    insert_share: float = 0.2,
    seed: int = 7,
    skew: str = "uniform",
) -> list[list[OrderEvent]]:
    """Batches against a target of orders ``0 .. target_rows - 1`` (all older than these
    events): ``events`` events per batch, about ``insert_share`` of them new orders (numbers
    from ``target_rows`` up), the rest updates. ``uniform``: distinct orders drawn uniformly
    from the whole target (the target-size curve). ``recent``: RECENT_SHARE of the updates hit
    the newest RECENT_WINDOW of the orders placed so far, the others any order, drawn with
    replacement (an order updated twice in a batch: the newer event wins). Seeded: the same
    batches every run."""
    if skew not in ("uniform", "recent"):
        raise ValueError(f"skew must be 'uniform' or 'recent', not {skew!r}")
    rng = random.Random(seed)
    clock = CURVE_EPOCH
    next_new = target_rows
    out: list[list[OrderEvent]] = []
    for _ in range(batches):
        inserts = sum(rng.random() < insert_share for _ in range(events))
        numbers = list(range(next_new, next_new + inserts))
        if skew == "recent":
            numbers += [_recent_key(rng, next_new) for _ in range(events - inserts)]
        else:
            numbers += rng.sample(range(target_rows), min(events - inserts, target_rows))
        next_new += inserts
        batch = []
        for number in numbers:
            clock += TICK
            amount = rng.randrange(100, 100_000)
            batch.append(
                OrderEvent(order_id(number), customer_id(number), "paid", amount, clock, "U")
            )
        rng.shuffle(batch)
        out.append(batch)
    return out


def _recent_key(rng: random.Random, placed: int) -> int:
    """An order among the ``placed`` so far: one of the newest RECENT_WINDOW with probability
    RECENT_SHARE, else any."""
    if rng.random() < RECENT_SHARE:
        return placed - 1 - rng.randrange(max(1, int(placed * RECENT_WINDOW)))
    return rng.randrange(placed)


def land_files(files: Sequence[Sequence[OrderEvent]], landing: Path) -> list[Path]:
    """Write one JSON-lines file per batch, oldest first by modification time (the file
    source's order), and return their paths."""
    landing.mkdir(parents=True, exist_ok=True)
    base = time.time() - 10 * len(files) - 60
    paths = []
    for number, events in enumerate(files):
        path = landing / f"{number:04d}.json"
        path.write_text("".join(e.json_line() + "\n" for e in events))
        os.utime(path, (base + 10 * number, base + 10 * number))
        paths.append(path)
    return paths


def write_expected(rows: dict[str, OrderEvent], path: Path) -> None:
    """The expected target as JSON lines of text values (read back by the bench's check)."""
    path.write_text("".join(json.dumps(rows[k].target_row()) + "\n" for k in sorted(rows)))
