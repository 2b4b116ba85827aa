"""Exactly-once across crashes: `runner stream` is SIGKILLed again and again while events keep
landing, then drained; the tables equal an oracle computed in plain Python.

The downstream model adds to running totals (``t.total_amount + s.amount_delta``), so a batch
applied twice would show. Half of the kills land right after a batch's first statement finished,
while its MERGE runs; the others at random moments. Some files carry malformed lines (not JSON,
a wrong-typed amount), and some events a negative amount, which an expectation of orders_merge
quarantines: the quarantine must hold each of both kinds exactly once, the target none of them.
"""

from __future__ import annotations

import json
import random
import threading
import time
from collections import Counter
from dataclasses import dataclass, replace
from decimal import Decimal
from pathlib import Path

from pyspark.sql import SparkSession

from tests.conftest import Report, land_events
from tests.spark.processes import kill_repeatedly

FILES = 16
KILLS, SLOW_KILLS = 2, 4  # SIGKILLs of `runner stream`: by default, and with --slow
SEED = 20261121
REFUND_EVERY = 12  # every 12th new order or update carries a negative amount
EXPECTATION = (
    "    expectations={'amount_positive': "
    "{'expect': \"op = 'D' OR amount > 0\", 'on_violation': 'quarantine'}},\n"
)


@dataclass(frozen=True)
class Event:
    order_id: str
    customer_id: str
    amount: Decimal
    updated_at: str
    op: str

    def json(self) -> str:
        return json.dumps(
            {
                "order_id": self.order_id,
                "customer_id": self.customer_id,
                "status": "deleted" if self.op == "D" else "open",
                "amount": float(self.amount),
                "updated_at": self.updated_at,
                "op": self.op,
            }
        )

    @property
    def fails_amount_positive(self) -> bool:
        """``op = 'D' OR amount > 0`` is false: quarantined by the expectation, never applied."""
        return self.op != "D" and self.amount <= 0

    def quarantined_raw(self) -> str:
        """The row as the expectation quarantines it: ``to_json`` of the batch row (the
        session's time zone is UTC; ``_rescued_data`` is NULL, so left out)."""
        return (
            f'{{"order_id":"{self.order_id}","customer_id":"{self.customer_id}",'
            f'"status":"{"deleted" if self.op == "D" else "open"}","amount":{self.amount:.2f},'
            f'"updated_at":"{self.updated_at}.000Z","op":"{self.op}"}}'
        )


def generate_files(seed: int, count: int) -> list[list[Event]]:
    """Files of order events: new orders, updates (some moving an order to another customer),
    deletes, late events older than what the table holds, and exact duplicates in a file.
    Every REFUND_EVERY-th new order or update has a negative amount: the model's expectation
    quarantines it, so it never becomes the order's state."""
    rng = random.Random(seed)
    live: dict[str, Event] = {}
    next_id = 0
    clock = 0
    made = 0

    def stamp(seconds: int) -> str:
        return f"2024-01-01T{seconds // 3600:02d}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"

    files = []
    for _ in range(count):
        events: list[Event] = []
        for _ in range(rng.randint(3, 7)):
            clock += 60
            roll = rng.random()
            if roll < 0.4 or not live:
                next_id += 1
                event = Event(
                    f"o{next_id}", f"c{rng.randint(1, 5)}", Decimal(rng.randint(100, 9999)) / 100,
                    stamp(clock), "U",
                )  # fmt: skip
            elif roll < 0.75:
                old = live[rng.choice(sorted(live))]
                customer = f"c{rng.randint(1, 5)}" if rng.random() < 0.3 else old.customer_id
                event = Event(
                    old.order_id, customer, Decimal(rng.randint(100, 9999)) / 100, stamp(clock), "U"
                )
            elif roll < 0.85:
                old = live.pop(rng.choice(sorted(live)))
                event = Event(old.order_id, old.customer_id, old.amount, stamp(clock), "D")
                events.append(event)
                continue
            elif roll < 0.95:
                old = live[rng.choice(sorted(live))]  # late: one second older than the latest
                late_at = stamp(_seconds(old.updated_at) - 1)
                events.append(Event(old.order_id, "c9", Decimal("999.99"), late_at, "U"))
                continue
            else:
                events.append(
                    events[-1] if events else Event("o0", "c1", Decimal(1), stamp(0), "D")
                )
                continue
            made += 1
            if made % REFUND_EVERY == REFUND_EVERY // 2:
                events.append(replace(event, amount=-event.amount))
                continue
            live[event.order_id] = event
            events.append(event)
        files.append(events)
    return files


def malformed_lines(number: int) -> list[tuple[str, str]]:
    """The bad lines appended to file ``number``, with the reason each gets."""
    lines = []
    if number % 3 == 0:
        lines.append((f'{{"order_id": "bad{number}", "amount": ', "invalid JSON"))
    if number % 4 == 1:
        wrong = {"order_id": f"x{number}", "amount": "ten", "updated_at": "2024-01-01T00:00:00"}
        lines.append((json.dumps(wrong), "schema mismatch: amount (DECIMAL(10,2))"))
    return lines


def _seconds(stamp: str) -> int:
    hours, minutes, seconds = (int(p) for p in stamp[11:].split(":"))
    return hours * 3600 + minutes * 60 + seconds


def oracle(files: list[list[Event]]) -> dict[str, Event]:
    """The orders table the model promises: per file, the latest event per key; applied when
    newer than the stored row; a delete removes; a delete of an unknown key does nothing."""
    table: dict[str, Event] = {}
    for events in files:
        latest: dict[str, Event] = {}
        for event in events:
            if event.order_id not in latest or event.updated_at > latest[event.order_id].updated_at:
                latest[event.order_id] = event
        for key, event in latest.items():
            stored = table.get(key)
            if stored is None:
                if event.op != "D":
                    table[key] = event
            elif event.updated_at > stored.updated_at:
                if event.op == "D":
                    del table[key]
                else:
                    table[key] = event
    return table


def land_slowly(landing: Path, files: list[list[Event]], pause: float = 1.2) -> threading.Thread:
    """A thread that lands ``files`` one by one, ``pause`` seconds apart (started)."""

    def produce() -> None:
        for number, events in enumerate(files):
            land_events(landing, f"{number:03d}.json", [e.json() for e in events])
            time.sleep(pause)

    producer = threading.Thread(target=produce, daemon=True)
    producer.start()
    return producer


def expect_positive_amounts(project: Path) -> None:
    """Give orders_merge an expectation in quarantine mode: ``op = 'D' OR amount > 0``."""
    model = project / "models" / "orders_merge.sql"
    text = model.read_text()
    assert "    optimize_every=2,\n" in text
    model.write_text(
        text.replace("    optimize_every=2,\n", "    optimize_every=2,\n" + EXPECTATION)
    )


def fast_triggers(project: Path, files_per_batch: int = 2) -> None:
    """Batches every second, ``files_per_batch`` files each: the final table does not depend on
    where batches are cut (keys are never reused after a delete, timestamps of a key never
    tie)."""
    for name in ("orders.yml", "order_changes.yml"):
        path = project / "streams" / name
        text = path.read_text().replace("processing_time: 5 seconds", "processing_time: 1 second")
        path.write_text(
            text.replace("maxFilesPerTrigger: 1", f"maxFilesPerTrigger: {files_per_batch}")
        )


def test_sigkill_and_restart_never_loses_or_doubles_a_batch(
    spark: SparkSession, example_project: Path, report: Report, kill_count: int, cli
) -> None:
    # the kills land while the first batches run: a batch per kill (eight files a batch by
    # default, four with --slow's four kills) leaves the drain few batches to run
    fast_triggers(example_project, files_per_batch=FILES // kill_count)
    expect_positive_amounts(example_project)
    landing = example_project / "target" / "landing" / "orders"
    files = generate_files(SEED, FILES)

    quarantined = set()  # (position, raw, reason) of malformed lines: the source's quarantine
    for number, events in enumerate(files):
        for index, (raw, reason) in enumerate(malformed_lines(number)):
            position = f"target/landing/orders/{number:03d}.json:{len(events) + index + 1}"
            quarantined.add((position, raw, reason))

    def produce() -> None:
        for number, events in enumerate(files):
            bad = [raw for raw, _ in malformed_lines(number)]
            land_events(landing, f"{number:03d}.json", [e.json() for e in events] + bad)
            time.sleep(1.2)

    producer = threading.Thread(target=produce, daemon=True)
    producer.start()
    kills = kill_repeatedly(
        example_project, "orders_merge+", "orders_merge", kill_count, random.Random(SEED)
    )
    producer.join()

    drain = cli("run", "--select", "orders_merge+", "-p", example_project)  # in-process
    assert drain.exit_code == 0, drain.output

    warehouse = example_project / "target" / "local" / "warehouse"
    accepted = [[e for e in events if not e.fails_amount_positive] for events in files]
    per_model = assert_tables_match_oracle(spark, warehouse, accepted)
    # which batch read each file, as the checkpoint recorded it: up to FILES // kill_count, but
    # a kill between the file source's log write and the offset log's leaves a batch with more
    checkpoint = example_project / "target" / "local" / "checkpoints" / "orders_merge"
    batch_of = batch_of_each_file(checkpoint)
    assert sorted(batch_of) == [f"{number:03d}.json" for number in range(FILES)]
    batches = max(batch_of.values()) + 1
    # one event-log row per batch, none twice
    assert per_model["orders_merge"] == list(range(batches))
    # (batch id, position, raw, reason) of events failing the expectation, exact duplicates
    # in a file counted twice
    refused = Counter(
        (
            batch_of[f"{number:03d}.json"],
            f"stream orders, batch {batch_of[f'{number:03d}.json']}, order_id={event.order_id}",
            event.quarantined_raw(),
            "failed expectation(s): amount_positive",
        )
        for number, events in enumerate(files)
        for event in events
        if event.fails_amount_positive
    )
    assert len(refused) >= 4  # the generator makes some; none of them reaches the target
    assert per_model["customer_totals"] == list(range(len(per_model["customer_totals"])))
    quarantine = spark.read.format("delta").load(str(warehouse / "_quarantine" / "orders_merge"))
    assert {r["source"] for r in quarantine.collect()} == {"json", "expectation"}
    # the source's rows: a file line each, with its file and line
    lines = quarantine.where("source = 'json'").collect()
    rows = [(r["position"], r["raw"], r["reason"]) for r in lines]
    assert len(rows) == len(quarantined) and set(rows) == quarantined  # each exactly once
    assert all(r["file"].endswith(r["position"].split(":")[0]) and r["line"] for r in lines)
    # the expectation's rows: a batch row each, no file line; each in its batch, once
    expected = quarantine.where("source = 'expectation'").collect()
    assert (
        Counter((r["batch_id"], r["position"], r["raw"], r["reason"]) for r in expected) == refused
    )
    assert all(r["file"] is None and r["line"] is None for r in expected)
    log = spark.read.format("delta").load(str(warehouse / "_runner" / "event_log"))
    orders_log = log.where("model = 'orders_merge'").collect()
    assert sum(r["quarantined"] for r in orders_log) == len(quarantined) + refused.total()
    # each batch counted its refused events once: the event log's expectations column
    per_batch = Counter(batch_id for batch_id, *_ in refused.elements())
    assert {
        r["batch_id"]: [(e["name"], e["action"], e["failed"]) for e in r["expectations"]]
        for r in orders_log
    } == {b: [("amount_positive", "quarantine", per_batch[b])] for b in range(batches)}
    between = [k for k in kills if "between statements" in k and "batch[0]" in k]
    report(
        f"{len(kills)} SIGKILLs ({len(between)} between two statements of a batch); quarantined "
        f"{len(quarantined)} malformed lines and {refused.total()} events failing an expectation:",
        kills,
    )
    assert len(kills) == kill_count and len(between) == (kill_count + 1) // 2  # every other kill


def batch_of_each_file(checkpoint: Path) -> dict[str, int]:
    """The streaming batch that read each landed file, from the query's checkpoint: the file
    source logs the files it adds under ``sources/0/<n>`` (entries carry their ``batchId`` n,
    also in compacted files), and ``offsets/<batch>`` ends with that source's ``logOffset``.
    Batch b read the source entries after batch b-1's offset, up to its own."""
    source_batch: dict[str, int] = {}
    for log in (checkpoint / "sources" / "0").iterdir():
        if log.name.startswith("."):
            continue
        for line in log.read_text().splitlines()[1:]:
            entry = json.loads(line)
            source_batch[Path(entry["path"]).name] = int(entry["batchId"])
    offsets = {
        int(log.name): json.loads(log.read_text().splitlines()[-1])["logOffset"]
        for log in (checkpoint / "offsets").iterdir()
        if log.name.isdigit()
    }
    bounds = sorted(offsets.items())  # (batch, the last source entry it read)
    return {
        name: next(batch for batch, last in bounds if entry <= last)
        for name, entry in source_batch.items()
    }


def assert_tables_match_oracle(
    spark: SparkSession, warehouse: Path, files: list[list[Event]]
) -> dict[str, list[int]]:
    """Both tables of the example equal the oracle of ``files``, and no batch has two
    event-log rows. Returns each model's batch ids from the event log."""
    expected = oracle(files)
    assert table_rows(spark, warehouse / "silver" / "orders", "order_id") == sorted(
        (e.order_id, e.customer_id, "open", e.amount.quantize(Decimal("0.01")),
         _timestamp(e.updated_at))
        for e in expected.values()
    )  # fmt: skip
    totals: dict[str, tuple[int, Decimal]] = {}
    for event in expected.values():
        count, amount = totals.get(event.customer_id, (0, Decimal(0)))
        totals[event.customer_id] = (count + 1, amount + event.amount)
    assert table_rows(spark, warehouse / "gold" / "customer_totals", "customer_id") == [
        (customer, count, amount.quantize(Decimal("0.01")))
        for customer, (count, amount) in sorted(totals.items())
    ]
    log = spark.read.format("delta").load(str(warehouse / "_runner" / "event_log"))
    per_model = {
        model: sorted(r["batch_id"] for r in log.where(f"model = '{model}'").collect())
        for model in ("orders_merge", "customer_totals")
    }
    for model, batches in per_model.items():
        assert len(batches) == len(set(batches)), f"{model}: a batch logged twice: {batches}"
    return per_model


def table_rows(spark: SparkSession, location: Path, order_by: str) -> list[tuple]:
    """Rows of the Delta table at ``location`` (the runs were other processes: no table name
    is registered in this session)."""
    frame = spark.read.format("delta").load(str(location))
    return [tuple(row) for row in frame.orderBy(order_by).collect()]


def _timestamp(stamp: str):
    from datetime import datetime

    return datetime.fromisoformat(stamp)
