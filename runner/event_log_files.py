"""The files event-log rows wait in before they are appended to the event log, together.

A stream's batch writes its event-log row to a file of its own, ``<query id>.<batch id>.json``
in ``<warehouse>/_runner/event_log_pending/<model>/``, and the stream appends the waiting rows
in groups (runner/spark/batch/event_log_buffer.py says why and when). Pure Python over
runner/storage.py: a local disk, or object storage through the session's Hadoop FileSystem.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from runner import storage
from runner.errors import RunnerError
from runner.storage import Location

PENDING_FOLDER = "event_log_pending"
# <query id>.<batch id>.json; storage.write_text's temporary files start with a dot
_ROW_FILE = re.compile(r"(?P<query>[^.][^/]*)\.(?P<batch>[0-9]+)\.json")


class DamagedRowFile(RunnerError):
    """A file where an event-log row waits is not the JSON the runner wrote."""


@dataclass(frozen=True)
class WaitingRow:
    """One batch's event-log row in its file, in the JSON form it is appended from."""

    location: Location
    query_id: str
    batch_id: int
    row: dict[str, Any]


def pending_folder(event_log: Location, model: str) -> Location:
    """Where ``model``'s rows wait: beside the event log's folder, never inside it (a VACUUM
    of the event log would delete files its log does not name)."""
    return event_log.parent / PENDING_FOLDER / model


def row_file(folder: Location, query_id: str, batch_id: int) -> Location:
    return folder / f"{query_id}.{batch_id}.json"


def write_waiting_row(
    folder: Location, query_id: str, batch_id: int, row: dict[str, Any]
) -> WaitingRow:
    """Write ``row`` to its file, whole or not at all (storage.write_text); a batch Spark
    replays writes the same file again."""
    location = row_file(folder, query_id, batch_id)
    storage.write_text(location, json.dumps(row, allow_nan=True))
    return WaitingRow(location, query_id, batch_id, row)


def waiting_rows(folder: Location) -> list[WaitingRow]:
    """The rows waiting in ``folder``, by query and batch. A file removed since the listing
    (its row was appended meanwhile) is left out; none when the folder cannot be reached from
    this process (object storage without a JVM)."""
    if not storage.reachable(folder):
        return []
    found = []
    for name in storage.names_in(folder):
        match = _ROW_FILE.fullmatch(name)
        if match is None:
            continue
        location = folder / name
        try:
            text = storage.read_text(location)
        except FileNotFoundError:  # appended and removed since the listing
            continue
        try:
            row = json.loads(text)
        except ValueError as exc:
            raise DamagedRowFile(
                f"the event-log row file {location} is not JSON ({exc}): the runner writes "
                "these whole, so something else wrote or changed it",
                hint="move it away: the runner then goes on without that batch's row",
            ) from None
        found.append(WaitingRow(location, match["query"], int(match["batch"]), row))
    return sorted(found, key=lambda w: (w.query_id, w.batch_id))


def is_waiting(folder: Location, query_id: str, batch_id: int) -> bool:
    """Whether the row of ``batch_id`` of query ``query_id`` waits in ``folder``."""
    location = row_file(folder, query_id, batch_id)
    return storage.reachable(location) and storage.exists(location)
