"""Goal 3, freshness: land files at a steady rate while a stream runs, then tell, for each file,
how long after it landed its rows became visible in the target. No pyspark: it reads the files
Spark and Delta write.

How visibility is observed (and why this way): a reader sees a Delta table's new rows once the
commit's JSON file exists in ``_delta_log/`` (Delta writes it atomically, as the last step of a
commit), so a MERGE commit file's modification time is when its rows became visible. Which
MERGE holds which landed file comes from the stream's checkpoint: Spark's file source logs,
per batch, the files it read (``sources/0/<batch>``, compacted into ``<batch>.compact`` every
10 batches, each entry naming its ``batchId``), and writes ``offsets/<batch>`` before the
batch runs. A batch's rows are visible at the first MERGE commit written after its offsets
file: one query's batches run one after another, each making one MERGE. This reads the
same files for the runner and the hand-written recipe, so neither is timed by its own clock;
polling the table instead would add the poll interval to every figure.
"""

from __future__ import annotations

import json
import math
import os
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from bench.upsert.events import OrderEvent


def percentile(values: Sequence[float], share: float) -> float:
    """The nearest-rank percentile (``share`` 0.95 for p95): the smallest value with at least
    ``share`` of the values at or below it."""
    if not values:
        raise ValueError("no values")
    ordered = sorted(values)
    return ordered[max(0, math.ceil(share * len(ordered)) - 1)]


def files_by_batch(checkpoint: Path) -> dict[str, int]:
    """File name -> batch id, from the file source's log in ``checkpoint/sources/0``."""
    found: dict[str, int] = {}
    log = checkpoint / "sources" / "0"
    if not log.is_dir():
        return found
    for entry in log.iterdir():
        if entry.name.startswith(".") or entry.name.endswith(".tmp"):
            continue
        try:
            text = entry.read_text()
        except FileNotFoundError:  # deleted since the listing: a .compact file holds its entries
            continue
        for line in text.splitlines()[1:]:  # the first line is the version, v1
            if line.strip():
                item = json.loads(line)
                found[item["path"].rsplit("/", 1)[-1]] = int(item["batchId"])
    return found


def batch_planned(checkpoint: Path) -> dict[int, float]:
    """Batch id -> when its offsets were written (epoch seconds), before it ran."""
    offsets = checkpoint / "offsets"
    if not offsets.is_dir():
        return {}
    found = {}
    for entry in offsets.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            found[int(entry.name)] = entry.stat().st_mtime
        except FileNotFoundError:  # Spark deleted it since the listing (it keeps the newest 100)
            continue
    return found


class PlannedBatches:
    """``batch_planned``, remembered across reads. Spark keeps only the newest offsets files of
    a checkpoint (``spark.sql.streaming.minBatchesToRetain``, 100 by default) and deletes older
    ones as the stream goes on, so the first batches of a longer stream (goal 3 at full size
    makes about 200) are gone by its end. Read while the stream runs (the bench polls every
    second, and a file is deleted only 100 batches after it was written), every batch's time
    is kept."""

    def __init__(self, checkpoint: Path) -> None:
        self.checkpoint = checkpoint
        self._seen: dict[int, float] = {}

    def __call__(self) -> dict[int, float]:
        self._seen.update(batch_planned(self.checkpoint))
        return dict(self._seen)


def merge_commits(table: Path) -> list[float]:
    """When each MERGE commit of the Delta table at ``table`` became visible (its JSON file's
    modification time, epoch seconds), oldest first."""
    log = table / "_delta_log"
    if not log.is_dir():
        return []
    times = []
    for entry in sorted(log.glob("*.json")):
        for line in entry.read_text().splitlines():
            info = json.loads(line).get("commitInfo") if line.strip() else None
            if info and info.get("operation") == "MERGE":
                times.append(entry.stat().st_mtime)
    return sorted(times)


def visible_at(planned: dict[int, float], merges: Sequence[float]) -> dict[int, float]:
    """Batch id -> when its rows became visible: the first MERGE commit after the batch was
    planned and before the next batch was (a batch without one is left out: not visible)."""
    found = {}
    ordered = sorted(planned.items())
    for position, (batch, at) in enumerate(ordered):
        until = ordered[position + 1][1] if position + 1 < len(ordered) else math.inf
        commit = next((m for m in merges if at <= m < until), None)
        if commit is not None:
            found[batch] = commit
    return found


@dataclass(frozen=True)
class Latencies:
    seconds: dict[str, float]  # landed file -> seconds from landing to its rows visible
    missing: tuple[str, ...]  # landed files whose rows are not visible (yet)
    batches: dict[int, tuple[str, ...]]  # batch id -> the landed files it read, by name

    @property
    def p50(self) -> float:
        return percentile(list(self.seconds.values()), 0.5)

    @property
    def p95(self) -> float:
        return percentile(list(self.seconds.values()), 0.95)


def latencies(
    landed: dict[str, float],
    checkpoint: Path,
    table: Path,
    planned: PlannedBatches | None = None,
) -> Latencies:
    """For each landed file (name -> epoch seconds it landed), the seconds to visibility.
    ``planned``: the batches' times as remembered while the stream ran (else read now)."""
    batch_of = files_by_batch(checkpoint)
    times = planned() if planned is not None else batch_planned(checkpoint)
    visible = visible_at(times, merge_commits(table))
    seconds, missing = {}, []
    batches: dict[int, list[str]] = {}
    for name, at in sorted(landed.items()):
        batch = batch_of.get(name)
        if batch is None or batch not in visible:
            missing.append(name)
            continue
        seconds[name] = visible[batch] - at
        batches.setdefault(batch, []).append(name)
    return Latencies(seconds, tuple(missing), {b: tuple(f) for b, f in sorted(batches.items())})


class Lander:
    """Lands ``files`` in ``landing`` one every ``interval`` seconds, in a thread, each written
    beside the landing directory and renamed into it (atomic: the stream never reads half a
    file). ``landed``: file name -> epoch seconds it appeared."""

    def __init__(
        self,
        files: Sequence[Sequence[OrderEvent]],
        landing: Path,
        interval: float,
        first_number: int = 0,
    ):
        self.files, self.landing, self.interval = files, landing, interval
        self.first_number = first_number  # names count on from here
        self.landed: dict[str, float] = {}
        self.staging = landing.with_name(landing.name + ".staging")
        self._thread = threading.Thread(target=self._land, daemon=True, name="lander")

    def start(self) -> None:
        self.landing.mkdir(parents=True, exist_ok=True)
        self.staging.mkdir(parents=True, exist_ok=True)
        self._thread.start()

    def join(self, timeout: float | None = None) -> None:
        self._thread.join(timeout)

    @property
    def landing_files(self) -> bool:
        """Whether files are still to land."""
        return self._thread.is_alive()

    def _land(self) -> None:
        began = time.monotonic()
        for number, events in enumerate(self.files):
            name = f"{self.first_number + number:05d}.json"
            staged = self.staging / name
            staged.write_text("".join(e.json_line() + "\n" for e in events))
            # a steady rate: the n-th file at began + n * interval, however long writing took
            time.sleep(max(0.0, began + number * self.interval - time.monotonic()))
            os.replace(staged, self.landing / name)
            self.landed[name] = time.time()
