"""Does a source still hold what a model's target was built from? Backfill asks before it
replaces the live target's rows with what the source holds now.

- a file stream: the files the live checkpoint's file-source log lists (every file a batch
  read) that are gone from disk now;
- a Delta stream (a path or another model's target) read from a numbered ``startingVersion``:
  the versions from it up to the oldest commit left in the table's ``_delta_log`` (the log was
  cleaned up);
- a Kafka stream: per partition, the offsets from where the live checkpoint started reading
  (Spark's initial-offsets file ``sources/0/0``) up to its newest ``offsets/`` file, against the
  topic's earliest offset now (the broker's answer comes in through ``earliest``: Spark asks it,
  runner/spark/sources/kafka_offsets.py); records deleted by retention are the gap;
- a Delta table by name is not checked (``SourceGap.checked`` False, saying so).

Pure Python: files of the checkpoint and of the source's directory.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from urllib.parse import unquote, urlparse

from runner import storage
from runner.backfill_report import SourceGap
from runner.checkpoint_files import newest_offset
from runner.project import Project
from runner.specs.model import ModelSpec
from runner.specs.stream import KAFKA_FORMAT, StreamSpec
from runner.storage import Location

FILE_SOURCE_LOG = Path("sources") / "0"  # a query with one source: Spark's log of its files
KAFKA_INITIAL_OFFSETS = FILE_SOURCE_LOG / "0"  # Kafka's: where the query started, per partition

TopicPartition = tuple[str, int]
Offsets = dict[TopicPartition, int]
# asks the broker for the earliest offset it holds now of each partition (Spark's part)
EarliestOffsets = Callable[[StreamSpec, set[TopicPartition]], Offsets]


def files_read(log_dir: Location) -> set[str]:
    """Paths the file source recorded, from every batch file of its log (and compactions)."""
    read: set[str] = set()
    for name in storage.names_in(log_dir):
        if name.startswith("."):
            continue
        try:
            lines = storage.read_text(log_dir / name).splitlines()
        except (OSError, IsADirectoryError):
            continue  # being written right now
        for line in lines:
            if line.startswith("{"):
                read.add(unquote(urlparse(json.loads(line).get("path", "")).path))
    return read


def source_gap(
    project: Project,
    model: ModelSpec,
    checkpoint: Location,
    earliest: EarliestOffsets | None = None,
) -> SourceGap:
    """What the source of ``model`` no longer holds of what its live ``checkpoint`` read.
    A Kafka source is checked only with ``earliest`` (it needs the broker)."""
    stream = project.stream_of(model)
    if stream.format == KAFKA_FORMAT:
        if earliest is None:
            return SourceGap(
                False,
                note="Kafka retention is not checked without the broker: compare the topic's "
                f"earliest offsets with {checkpoint / KAFKA_INITIAL_OFFSETS} before applying",
            )
        start, end = kafka_read_range(checkpoint)
        return kafka_gap(start, end, earliest(stream, set(end)))
    if stream.format == "delta":
        location = (
            project.target.table_location(project.models[stream.ref].target_table)
            if stream.ref
            else stream.path
        )
        if location is None:
            return SourceGap(False, note=f"a Delta table by name ({stream.table}) is not checked")
        return _delta_gap(location, stream.options.get("startingVersion"))
    if stream.path is None:
        return SourceGap(False, note=f"a {stream.format} stream has no files to check")
    read = files_read(checkpoint / FILE_SOURCE_LOG)
    missing = sorted(path for path in read if not Path(path).exists())
    if not missing:
        return SourceGap(True, note=f"all {len(read)} file(s) the live model read are there")
    return SourceGap(
        True,
        tuple(_shown(path, project.root) for path in missing),
        f"{len(missing)} of the {len(read)} file(s) the live model read are gone",
    )


def delta_log_versions(table: Location) -> list[int]:
    """The versions of the commit files in a Delta table's ``_delta_log``."""
    names = storage.names_in(table / "_delta_log")
    return [int(name[:-5]) for name in names if name.endswith(".json") and name[:-5].isdigit()]


def _delta_gap(location: Location, starting_version: str | None) -> SourceGap:
    if starting_version is None or not str(starting_version).isdigit():
        return SourceGap(
            False, note="a Delta stream from its snapshot at start needs no old versions"
        )
    log = location / "_delta_log"
    versions = delta_log_versions(location)
    if not versions:
        return SourceGap(False, note=f"no Delta log to check at {log}")
    start, oldest = int(starting_version), min(versions)
    if oldest <= start:
        return SourceGap(True, note=f"versions from {start} on are in {log}")
    return SourceGap(
        True,
        tuple(f"version {v}" for v in range(start, oldest)),
        f"the Delta log at {log} starts at version {oldest}, after the stream's "
        f"startingVersion {start}",
    )


def _shown(path: str, root: Path) -> str:
    found = Path(path)
    return str(found.relative_to(root)) if found.is_relative_to(root) else path


def kafka_read_range(checkpoint: Location) -> tuple[Offsets, Offsets]:
    """Per partition, the offset the live query started reading at and the offset after the
    last record its newest batch read. A partition missing from the start (created later) was
    read from its beginning, 0, as Spark reads new partitions from the earliest offset."""
    end = _source_offsets(_newest_offsets_file(checkpoint))
    start = _source_offsets(checkpoint / KAFKA_INITIAL_OFFSETS)
    return {tp: start.get(tp, 0) for tp in end}, end


def kafka_gap(start: Offsets, end: Offsets, earliest: Offsets) -> SourceGap:
    """The records ``[start, end)`` per partition the live target was built from that the topic
    no longer holds (its earliest offset now is past ``start``)."""
    missing = []
    for (topic, partition), first in sorted(start.items()):
        now = earliest.get((topic, partition))
        if now is None or now <= first:
            continue
        last = min(now, end[(topic, partition)]) - 1
        if last >= first:
            missing.append(f"{topic}/{partition} offsets {first} to {last}")
    if not missing:
        return SourceGap(
            True, note=f"all {len(start)} partition(s) still hold every record the live model read"
        )
    return SourceGap(
        True,
        tuple(missing),
        f"{len(missing)} of the {len(start)} partition(s) the live model read lost records to "
        "retention",
    )


def _newest_offsets_file(checkpoint: Location) -> Location:
    newest = newest_offset(checkpoint)
    return checkpoint / "offsets" / str(newest or 0)  # 0 with none: read as no offsets


def _source_offsets(path: Location) -> Offsets:
    """The Kafka offsets of one source in a checkpoint file: the JSON line
    ``{"topic": {"0": 12, ...}}`` of an ``offsets/<batch>`` file (after the version and the
    batch's metadata) or of ``sources/0/0`` (after a zero byte and the version, SPARK-19517).
    Negative offsets (Spark's -1 latest / -2 earliest) name no record and are left out."""
    try:
        lines = storage.read_text(path).lstrip("\x00").splitlines()
    except (FileNotFoundError, UnicodeDecodeError):
        return {}
    found: Offsets = {}
    for line in lines:
        try:
            parsed = json.loads(line)
        except ValueError:
            continue  # the version line, "v1"
        if not isinstance(parsed, dict) or "batchWatermarkMs" in parsed:
            continue  # the batch's metadata
        for topic, partitions in parsed.items():
            if isinstance(partitions, dict):
                for partition, offset in partitions.items():
                    if isinstance(offset, int) and offset >= 0:
                        found[(topic, int(partition))] = offset
    return found
