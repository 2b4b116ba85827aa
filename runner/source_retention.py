"""Does a source still hold what a model's target was built from? Backfill asks before it
replaces the live target's rows with what the source holds now.

- a file stream: the files the live checkpoint's file-source log lists (every file a batch
  read) that are gone from disk now;
- a Delta stream (a path or another model's target) read from a numbered ``startingVersion``:
  the versions from it up to the oldest commit left in the table's ``_delta_log`` (the log was
  cleaned up);
- Kafka and a Delta table by name are not checked (``SourceGap.checked`` False, saying so).

Pure Python: files of the checkpoint and of the source's directory.
"""

from __future__ import annotations

import json
from pathlib import Path
from urllib.parse import unquote, urlparse

from runner.backfill_report import SourceGap
from runner.project import Project
from runner.specs.model import ModelSpec
from runner.specs.stream import KAFKA_FORMAT

FILE_SOURCE_LOG = Path("sources") / "0"  # a query with one source: Spark's log of its files


def files_read(log_dir: Path) -> set[str]:
    """Paths the file source recorded, from every batch file of its log (and compactions)."""
    read: set[str] = set()
    if not log_dir.is_dir():
        return read
    for entry in log_dir.iterdir():
        if entry.name.startswith(".") or not entry.is_file():
            continue
        try:
            lines = entry.read_text(encoding="utf-8").splitlines()
        except OSError:
            continue  # being written right now
        for line in lines:
            if line.startswith("{"):
                read.add(unquote(urlparse(json.loads(line).get("path", "")).path))
    return read


def source_gap(project: Project, model: ModelSpec, checkpoint: Path) -> SourceGap:
    """What the source of ``model`` no longer holds of what its live ``checkpoint`` read."""
    stream = project.stream_of(model)
    if stream.format == KAFKA_FORMAT:
        return SourceGap(
            False,
            note="Kafka retention is not checked: compare the topic's earliest offsets with "
            f"the newest file in {checkpoint / 'offsets'} before applying",
        )
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


def _delta_gap(location: Path, starting_version: str | None) -> SourceGap:
    if starting_version is None or not str(starting_version).isdigit():
        return SourceGap(
            False, note="a Delta stream from its snapshot at start needs no old versions"
        )
    log = location / "_delta_log"
    versions = [int(p.stem) for p in log.glob("*.json") if p.stem.isdigit()]
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
