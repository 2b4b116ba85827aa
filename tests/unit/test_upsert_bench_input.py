"""The upsert bench's input generator (bench/upsert/events.py): what the input must hold for the
comparison to mean something, and the same input for the same seed. No JVM."""

from __future__ import annotations

import json
import os
from collections import Counter
from dataclasses import replace
from datetime import datetime
from pathlib import Path

import pytest

from bench.upsert.events import (
    DELETE_OP,
    RECENT_SHARE,
    RECENT_WINDOW,
    GeneratedOrders,
    OrdersSpec,
    curve_batches,
    expected_rows,
    generate_orders,
    land_files,
)
from bench.upsert.plan import SIZES
from bench.upsert.processes import tree_rss_bytes

SPEC = OrdersSpec(files=6, events_per_file=400, keys=300)


@pytest.fixture(scope="module")
def generated() -> GeneratedOrders:
    return generate_orders(SPEC)


def test_same_seed_same_files_other_seed_other_files() -> None:
    assert generate_orders(SPEC) == generate_orders(SPEC)
    assert generate_orders(replace(SPEC, seed=13)).files != generate_orders(SPEC).files


def test_files_hold_exact_duplicates(generated: GeneratedOrders) -> None:
    for events in generated.files:
        assert any(count > 1 for count in Counter(events).values())
    assert generated.duplicates == SPEC.files * round(SPEC.events_per_file * SPEC.duplicate_share)


def test_files_hold_several_versions_of_an_order(generated: GeneratedOrders) -> None:
    for events in generated.files:
        versions = Counter(e.order_id for e in set(events))
        assert max(versions.values()) > 1


def test_late_events_are_older_than_an_event_landed_before_them(
    generated: GeneratedOrders,
) -> None:
    newest_landed: dict[str, datetime] = {}  # per order, over the files before this one
    late_after_an_earlier_file = 0
    for events in generated.files:
        for event in events:
            landed = newest_landed.get(event.order_id)
            if event in generated.late and landed is not None and event.updated_at < landed:
                late_after_an_earlier_file += 1
        for event in events:
            landed = newest_landed.get(event.order_id)
            newest_landed[event.order_id] = max(event.updated_at, landed or event.updated_at)
    assert generated.late
    assert late_after_an_earlier_file > len(generated.late) // 2


def test_late_events_never_win(generated: GeneratedOrders) -> None:
    final = expected_rows(generated.files)
    assert all(final.get(e.order_id) != e for e in generated.late)


def test_deletes_remove_orders(generated: GeneratedOrders) -> None:
    deletes = [e for events in generated.files for e in events if e.op == DELETE_OP]
    final = expected_rows(generated.files)
    assert deletes
    assert any(e.order_id not in final for e in deletes)
    assert all(row.op != DELETE_OP for row in final.values())


def test_one_version_of_an_order_per_timestamp(generated: GeneratedOrders) -> None:
    """Ties would make the winner depend on a dedupe's tie-break: only exact copies tie, and
    late events, which lose anyway."""
    fresh = {e for events in generated.files for e in events if e not in generated.late}
    stamps = Counter((e.order_id, e.updated_at) for e in fresh)
    assert max(stamps.values()) == 1


def test_summary_counts(generated: GeneratedOrders) -> None:
    summary = generated.summary()
    assert summary.files == SPEC.files
    assert summary.events == SPEC.files * SPEC.events_per_file + generated.duplicates
    assert 0 < summary.expected_rows <= summary.orders <= SPEC.keys


def test_full_size_is_the_issues_input() -> None:
    orders = SIZES["full"].orders
    assert (orders.files, orders.events_per_file, orders.keys) == (50, 2_000, 20_000)
    assert SIZES["full"].curve_targets == (20_000, 200_000, 1_000_000)


def test_landed_files_are_json_lines_in_modification_time_order(
    generated: GeneratedOrders, tmp_path: Path
) -> None:
    paths = land_files(generated.files, tmp_path)
    assert [p.name for p in sorted(paths, key=os.path.getmtime)] == [p.name for p in paths]
    first = json.loads(paths[0].read_text().splitlines()[0])
    assert set(first) == {"order_id", "customer_id", "status", "amount", "updated_at", "op"}


def test_curve_batches_mix_updates_and_inserts_of_distinct_orders() -> None:
    batches = curve_batches(10_000, 3, 500)
    assert batches == curve_batches(10_000, 3, 500)
    for batch in batches:
        numbers = [int(e.order_id[1:]) for e in batch]
        assert len(set(numbers)) == len(numbers) == 500
        inserts = sum(n >= 10_000 for n in numbers)
        assert 0 < inserts < 250


def test_tree_rss_of_this_process_is_counted() -> None:
    assert tree_rss_bytes(os.getpid()) > 10 * (1 << 20)


def test_recent_batches_mostly_update_the_newest_orders() -> None:
    target = 100_000
    batches = curve_batches(target, 2, 5_000, skew="recent")
    assert batches == curve_batches(target, 2, 5_000, skew="recent")
    updates = [int(e.order_id[1:]) for b in batches for e in b if int(e.order_id[1:]) < target]
    recent = sum(n >= target * (1 - RECENT_WINDOW) for n in updates)
    # RECENT_SHARE of the draws land in the window, and a few uniform ones too
    assert RECENT_SHARE - 0.03 < recent / len(updates) < RECENT_SHARE + 0.05
    assert min(updates) < target // 2  # the others reach old orders
    assert len(set(updates)) < len(updates)  # drawn with replacement: the dedupe's work


def test_recent_batches_follow_the_orders_placed_since() -> None:
    first, second = curve_batches(1_000, 2, 1_000, skew="recent")
    placed = max(int(e.order_id[1:]) for e in first) + 1
    newest = sum(int(e.order_id[1:]) >= placed - 60 for e in second)
    assert newest > 500  # the newest window moved up with the first batch's inserts


def test_an_unknown_skew_is_refused() -> None:
    with pytest.raises(ValueError, match="skew must be"):
        curve_batches(100, 1, 10, skew="zipf")
