"""What a killed run can leave in a checkpoint that stops the next start, and its removal.

Spark writes each offset-log and commit-log entry atomically: to a hidden temp file
(``.0.<uuid>.tmp``, plus Hadoop's ``..0.<uuid>.tmp.crc`` on a local disk) that is then renamed.
A SIGKILL between the two leaves the temp file behind. Spark ignores it once the log holds a
batch, but while the offset log is still empty it treats the query as new and refuses a
checkpoint whose ``offsets``/``commits`` folder is not empty
(``STATE_STORE_CHECKPOINT_LOCATION_NOT_EMPTY``): a model killed while starting its first batch
would never start again. Such a temp file holds no batch Spark ever recorded, so removing it
loses nothing. Pure Python: called with the checkpoint lock held, before Spark starts the query.
"""

from __future__ import annotations

from pathlib import Path

LOG_FOLDERS = ("offsets", "commits")


def remove_interrupted_first_batch(checkpoint: Path) -> list[Path]:
    """Delete the temp files of an interrupted first log write; returns what was removed.

    Does nothing once the offset log holds a batch (Spark then skips the check and the temp
    files are harmless) and never touches anything but hidden ``*.tmp`` / ``*.tmp.crc`` files.
    """
    offsets = checkpoint / "offsets"
    if not offsets.is_dir() or any(_is_batch_file(p) for p in offsets.iterdir()):
        return []
    removed = []
    for folder in LOG_FOLDERS:
        if not (checkpoint / folder).is_dir():
            continue
        for path in sorted((checkpoint / folder).iterdir()):
            if _is_temp_file(path):
                path.unlink()
                removed.append(path)
    return removed


def _is_batch_file(path: Path) -> bool:
    return path.name.isdigit()


def _is_temp_file(path: Path) -> bool:
    name = path.name
    return path.is_file() and name.startswith(".") and name.endswith((".tmp", ".tmp.crc"))
