"""Goal 3's observation of freshness (bench/upsert/freshness.py), on files laid out as Spark's
stream checkpoint and a Delta log lay them out: which batch read a landed file, which MERGE
commit made its rows visible, and the percentiles. No JVM."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from bench.upsert.freshness import (
    PlannedBatches,
    batch_planned,
    files_by_batch,
    latencies,
    percentile,
    visible_at,
)


def test_percentile_is_the_nearest_rank() -> None:
    values = [float(v) for v in range(1, 21)]  # 1 .. 20
    assert percentile(values, 0.5) == 10.0
    assert percentile(values, 0.95) == 19.0
    assert percentile(list(reversed(values)), 0.95) == 19.0
    assert percentile([3.0], 0.95) == 3.0
    with pytest.raises(ValueError):
        percentile([], 0.5)


def test_a_batch_is_visible_at_the_first_merge_after_it_was_planned() -> None:
    planned = {0: 100.0, 1: 110.0, 2: 120.0}
    merges = [95.0, 105.0, 107.0, 125.0]  # 95: before any batch; 107: batch 0's second
    assert visible_at(planned, merges) == {0: 105.0, 2: 125.0}  # batch 1 made none


def write(path: Path, text: str, mtime: float) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    os.utime(path, (mtime, mtime))


def commit(operation: str) -> str:
    return json.dumps({"commitInfo": {"operation": operation}}) + "\n" + '{"add": {}}\n'


def test_latencies_join_landing_batch_and_merge_commit(tmp_path: Path) -> None:
    checkpoint, table = tmp_path / "checkpoint", tmp_path / "table"
    entry = '{{"path":"file:///landing/{}","timestamp":1,"batchId":{}}}'
    # batches 0 and 1 compacted together, as Spark's file-source log does every 10 batches
    write(
        checkpoint / "sources" / "0" / "1.compact",
        "v1\n" + entry.format("00000.json", 0) + "\n" + entry.format("00001.json", 1),
        0,
    )
    write(checkpoint / "sources" / "0" / "2", "v1\n" + entry.format("00002.json", 2), 0)
    for batch, at in ((0, 1_000.5), (1, 1_002.5), (2, 1_004.5)):
        write(checkpoint / "offsets" / str(batch), "v1", at)
    log = table / "_delta_log"
    write(log / f"{0:020d}.json", commit("CREATE TABLE"), 999.0)
    write(log / f"{1:020d}.json", commit("MERGE"), 1_001.5)  # batch 0
    write(log / f"{2:020d}.json", commit("MERGE"), 1_003.0)  # batch 1
    write(log / f"{3:020d}.json", commit("OPTIMIZE"), 1_003.5)  # batch 1's maintenance
    landed = {"00000.json": 1_000.0, "00001.json": 1_001.0, "00002.json": 1_002.0}
    found = latencies(landed | {"00003.json": 1_003.0}, checkpoint, table)
    assert found.seconds == {"00000.json": 1.5, "00001.json": 2.0}
    assert found.missing == ("00002.json", "00003.json")  # no MERGE yet; not read yet
    assert found.batches == {0: ("00000.json",), 1: ("00001.json",)}
    write(log / f"{4:020d}.json", commit("MERGE"), 1_006.0)
    assert latencies(landed, checkpoint, table).seconds["00002.json"] == 4.0


def test_planned_batches_keep_the_times_of_offsets_spark_deleted(tmp_path: Path) -> None:
    checkpoint = tmp_path / "checkpoint"
    for batch, at in ((0, 1_000.0), (1, 1_002.0)):
        write(checkpoint / "offsets" / str(batch), "v1", at)
    planned = PlannedBatches(checkpoint)
    assert planned() == {0: 1_000.0, 1: 1_002.0}
    # Spark keeps the newest minBatchesToRetain offsets files: batch 0's goes as batch 2 comes
    (checkpoint / "offsets" / "0").unlink()
    write(checkpoint / "offsets" / "2", "v1", 1_004.0)
    assert planned() == {0: 1_000.0, 1: 1_002.0, 2: 1_004.0}
    assert batch_planned(checkpoint) == {1: 1_002.0, 2: 1_004.0}  # what a late read finds


def test_a_checkpoint_file_deleted_between_listing_and_reading_is_skipped(tmp_path: Path) -> None:
    """Spark deletes old offsets files and compacted source-log files while the bench reads the
    checkpoint: a file listed, then gone, is left out (a dangling link is listed and gone)."""
    checkpoint = tmp_path / "checkpoint"
    write(checkpoint / "offsets" / "1", "v1", 1_002.0)
    (checkpoint / "offsets" / "0").symlink_to(tmp_path / "deleted")
    assert batch_planned(checkpoint) == {1: 1_002.0}
    source = checkpoint / "sources" / "0"
    write(source / "1", 'v1\n{"path":"file:///landing/00001.json","batchId":1}', 1_002.0)
    (source / "0").symlink_to(tmp_path / "deleted")
    assert files_by_batch(checkpoint) == {"00001.json": 1}
