"""Who a model's checkpoint belongs to, and which Delta table it writes: the state a start must
find as it was left.

A checkpoint says how far a stream has read its source; the target holds what that reading
wrote. The two only make sense together: a checkpoint whose target was deleted (or replaced by
another table) would go on with only new rows, a checkpoint copied from another model would
skip everything that model read, and a target whose checkpoint is gone would be fed its source
again from the start. So at a model's first start the runner records, in the checkpoint
directory itself (``<checkpoints>/<model>/runner_owner.json``, written atomically), the model,
its stream, its target and the target's Delta table id; a copy of the checkpoint carries the
record with it, and ``--full-refresh`` deletes both. Every later start compares
(``state_mismatch``) before anything is written.

Pure Python: the facts about the target (its table id, whether it holds data) are gathered by
runner/spark/streaming/state_guard.py.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from typing import Literal

from runner import storage
from runner.checkpoint_files import CorruptCheckpointFile, newest_offset
from runner.errors import RunnerError
from runner.storage import Location

OWNER_FILE = "runner_owner.json"
ADOPT_FLAG = "--adopt-state"

MismatchKind = Literal["target_deleted", "target_replaced", "foreign_checkpoint", "no_checkpoint"]


class StateMismatch(RunnerError):
    """A model's checkpoint and target do not belong together any more: the model is not
    started, and nothing is written."""

    def __init__(self, message: str, kind: MismatchKind) -> None:
        super().__init__(message)
        self.kind = kind


class CorruptOwnerRecord(CorruptCheckpointFile):
    """The owner record in a checkpoint cannot be read."""


@dataclass(frozen=True)
class OwnerRecord:
    """What a checkpoint was made for: the model, its stream, its target table (name and
    location) and the Delta table id of that target."""

    model: str
    stream: str
    target: str
    location: str
    table_id: str
    recorded_at: str = ""

    def owner(self) -> tuple[str, str, str]:
        """The fields that must match the model starting on the checkpoint."""
        return (self.model, self.stream, self.target.lower())

    def describe(self) -> str:
        return f"model '{self.model}' (stream '{self.stream}', target {self.target})"


def owner_path(checkpoint: Location) -> Location:
    return checkpoint / OWNER_FILE


def read_owner(checkpoint: Location) -> OwnerRecord | None:
    """The record in ``checkpoint``; None when there is none (a new checkpoint, or one made
    before records existed). A record that does not parse is a CorruptOwnerRecord naming it."""
    path = owner_path(checkpoint)
    try:
        text = storage.read_text(path)
    except FileNotFoundError:
        return None
    try:
        found = json.loads(text)
        return OwnerRecord(
            model=str(found["model"]),
            stream=str(found["stream"]),
            target=str(found["target"]),
            location=str(found["location"]),
            table_id=str(found["table_id"]),
            recorded_at=str(found.get("recorded_at", "")),
        )
    except (ValueError, KeyError, TypeError) as exc:
        raise CorruptOwnerRecord(
            f"the checkpoint's owner record {path} cannot be read ({exc.__class__.__name__}: "
            f"{exc})",
            hint="if the checkpoint is this model's own, delete that one file: the next start "
            "records its owner anew; else --full-refresh rebuilds target and checkpoint",
        ) from None


def write_owner(checkpoint: Location, record: OwnerRecord) -> None:
    """Write ``record`` into ``checkpoint`` whole, so a kill leaves the old record or the new
    one, never half of one."""
    stamped = OwnerRecord(**{**asdict(record), "recorded_at": _now()})
    storage.write_text(owner_path(checkpoint), json.dumps(asdict(stamped), indent=2))


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def has_progress(checkpoint: Location) -> bool:
    """Whether Spark has started a query on ``checkpoint``: its ``metadata`` file (the query id)
    is there, so a start resumes from it rather than from the start of the source."""
    return storage.is_file(checkpoint / "metadata")


def batches_read(checkpoint: Location) -> int:
    """How many batches the checkpoint's offset log holds (the newest batch id + 1)."""
    newest = newest_offset(checkpoint)
    return 0 if newest is None else newest + 1


@dataclass(frozen=True)
class TargetFacts:
    """What is at a model's target location now: the Delta table's id (None: no table) and
    whether it holds any data file."""

    table_id: str | None
    holds_data: bool


def state_mismatch(
    *,
    expected: OwnerRecord,
    checkpoint: Location,
    recorded: OwnerRecord | None,
    target: TargetFacts,
) -> StateMismatch | None:
    """Compare what a model finds at its start with what its checkpoint recorded. ``expected``
    is the record this model would write now (its ``table_id`` the current one, or "" when the
    target is absent). Returns the mismatch to stop on, or None when the state is consistent
    (or new: nothing recorded and nothing to lose)."""
    model = expected.model
    table = f"{expected.target} at {expected.location}"
    if recorded is not None and recorded.owner() != expected.owner():
        why = (
            "its stream or target changed since the checkpoint was made"
            if recorded.model == expected.model
            else "it was copied or moved here"
        )
        return StateMismatch(
            f"model '{model}': its checkpoint {checkpoint} belongs to {recorded.describe()}, "
            f"not to {expected.describe()} ({why}): running would go on "
            f"from where that one stopped and skip all it read before; choose: restore this "
            f"model's own checkpoint, --full-refresh (delete checkpoint and target, read the "
            f"source from the start), or {ADOPT_FLAG} (keep it: this model goes on from there)",
            "foreign_checkpoint",
        )
    progress = has_progress(checkpoint)
    if progress and target.table_id is None:
        return StateMismatch(
            f"model '{model}': its target {table} is gone, but its checkpoint {checkpoint} has "
            f"read {batches_read(checkpoint)} batch(es) of stream '{expected.stream}': running "
            f"would create the table again with only new rows; choose: restore the table's "
            f"directory, --full-refresh (delete the checkpoint, rebuild the table from the start "
            f"of the source), or {ADOPT_FLAG} (a new, empty table; rows read before stay lost)",
            "target_deleted",
        )
    if progress and recorded is not None and target.table_id != recorded.table_id:
        return StateMismatch(
            f"model '{model}': the Delta table at {expected.location} (target "
            f"{expected.target}) is not the one its checkpoint {checkpoint} wrote to: table id "
            f"{target.table_id}, recorded {recorded.table_id}; it was replaced; choose: restore "
            f"the original table, --full-refresh (delete both, rebuild from the start of the "
            f"source), or {ADOPT_FLAG} (keep this table; the stream goes on from its checkpoint)",
            "target_replaced",
        )
    if not progress and target.holds_data:
        return StateMismatch(
            f"model '{model}': its target {table} holds data but its checkpoint {checkpoint} is "
            f"gone: running would read stream '{expected.stream}' again from the start into it; "
            f"choose: restore the checkpoint, --full-refresh (delete the table too, rebuild "
            f"from the start), or {ADOPT_FLAG} (keep the table; the source is read again from "
            f"the start into it)",
            "no_checkpoint",
        )
    return None
