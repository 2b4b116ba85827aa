"""The checkpoint files Spark reads when a query starts again, checked before it does.

Spark resumes a stream from the checkpoint's ``metadata`` (the query id), the newest entries of
its offset log (``offsets/<batch>``: what each batch reads) and its commit log
(``commits/<batch>``: which batches finished). When one of them is damaged (truncated by a full
disk, overwritten by hand), Spark fails with a parse error that names no file. Each is checked
here for the shape Spark writes (``v1`` on the first line, then JSON); a damaged one is named
with what to do. Pure Python over runner/storage.py: runs with the checkpoint lock held, before
Spark starts (on object storage, once the session is there).
"""

from __future__ import annotations

import json
import re

from runner import storage
from runner.errors import RunnerError
from runner.storage import Location

_VERSION = re.compile(r"v[0-9]+")


class CorruptCheckpointFile(RunnerError):
    """A file of a model's checkpoint that Spark needs to start again cannot be read."""


def check_checkpoint_files(model_name: str, checkpoint: Location) -> None:
    """Raise CorruptCheckpointFile naming the first damaged file among those Spark reads to
    resume ``checkpoint`` (nothing to check in a new checkpoint)."""
    metadata = checkpoint / "metadata"
    problem = _metadata_problem(metadata) if storage.is_file(metadata) else None
    if problem:
        raise _corrupt(model_name, metadata, problem, newest_commit=False)
    for log in ("offsets", "commits"):
        for index, entry in enumerate(_newest_entries(checkpoint / log, 2)):
            problem = _log_entry_problem(entry)
            if problem:
                newest_commit = log == "commits" and index == 0
                raise _corrupt(model_name, entry, problem, newest_commit=newest_commit)


def checkpoint_query_id(checkpoint: Location) -> str | None:
    """The id of the streaming query whose checkpoint this is (its ``metadata`` file); None when
    there is none yet."""
    try:
        return str(json.loads(storage.read_text(checkpoint / "metadata"))["id"])
    except (OSError, ValueError, KeyError):
        return None


def _corrupt(model_name: str, path: Location, problem: str, *, newest_commit: bool) -> RunnerError:
    if newest_commit:
        hint = (
            f"delete it and its checksum {path.parent / f'.{path.name}.crc'} if there: Spark "
            f"then runs batch {path.name} again, which its idempotent writes make harmless; or "
            "restore it from a copy of the checkpoint"
        )
    else:
        hint = (
            "restore it from a copy of the checkpoint, or run with --full-refresh (deletes "
            "checkpoint and target, and reads the source again from the start)"
        )
    return CorruptCheckpointFile(
        f"model '{model_name}': checkpoint file {path} is damaged ({problem}); Spark cannot "
        "start the stream from it",
        hint=hint,
    )


def newest_offset(checkpoint: Location) -> int | None:
    """The newest batch of the checkpoint's offset log (``offsets/<batch>``, written before the
    batch runs); None when the log has none."""
    batches = _batches(checkpoint / "offsets")
    return batches[-1] if batches else None


def _newest_entries(log: Location, count: int) -> list[Location]:
    return [log / str(batch) for batch in _batches(log)[-count:][::-1]]


def _batches(log: Location) -> list[int]:
    return sorted(int(name) for name in storage.names_in(log) if name.isdigit())


def _read(path: Location) -> str | None:
    try:
        return storage.read_text(path)
    except UnicodeDecodeError:
        return None


def _metadata_problem(path: Location) -> str | None:
    text = _read(path)
    if text is None:
        return "not UTF-8 text"
    try:
        found = json.loads(text.splitlines()[0] if text.strip() else "")
    except (ValueError, IndexError):
        return "not the JSON Spark writes"
    if not isinstance(found, dict) or "id" not in found:
        return "no query id"
    return None


def _log_entry_problem(path: Location) -> str | None:
    """Why the log entry ``path`` is not one Spark wrote (``v1``, then JSON lines), or None."""
    text = _read(path)
    if text is None:
        return "not UTF-8 text"
    lines = text.splitlines()
    if not lines:
        return "empty"
    if not _VERSION.fullmatch(lines[0].strip()):
        return f"first line is not a log version such as v1: {lines[0][:40]!r}"
    if len(lines) < 2:
        return "truncated after its version line"
    try:
        json.loads(lines[1])
    except ValueError:
        return f"line 2 is not JSON: {lines[1][:40]!r}"
    return None
