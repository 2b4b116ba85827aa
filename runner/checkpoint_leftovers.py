"""What a killed run can leave in a checkpoint that stops the next start, and its removal.

Spark writes each offset-log and commit-log entry atomically: to a hidden temp file
(``.0.<uuid>.tmp``, plus Hadoop's ``..0.<uuid>.tmp.crc`` on a local disk) that is then renamed.
A SIGKILL between the two leaves the temp file behind. Spark ignores it once the log holds a
batch, but while the offset log is still empty it treats the query as new and refuses a
checkpoint whose ``offsets``/``commits`` folder is not empty
(``STATE_STORE_CHECKPOINT_LOCATION_NOT_EMPTY``): a model killed while starting its first batch
would never start again. Such a temp file holds no batch Spark ever recorded, so removing it
loses nothing. Pure Python over runner/storage.py: called with the checkpoint lock held, before
Spark starts the query.
"""

from __future__ import annotations

from runner import storage
from runner.storage import Location

LOG_FOLDERS = ("offsets", "commits")


def remove_interrupted_first_batch(checkpoint: Location) -> list[Location]:
    """Delete the temp files of an interrupted first log write; returns what was removed.

    Does nothing once the offset log holds a batch (Spark then skips the check and the temp
    files are harmless) and never touches anything but hidden ``*.tmp`` / ``*.tmp.crc`` files.
    """
    offsets = checkpoint / "offsets"
    if not storage.is_dir(offsets) or any(n.isdigit() for n in storage.names_in(offsets)):
        return []
    removed: list[Location] = []
    for folder in LOG_FOLDERS:
        for name in storage.names_in(checkpoint / folder):
            path = checkpoint / folder / name
            if _is_temp_name(name) and storage.is_file(path):
                storage.remove(path)
                removed.append(path)
    return removed


def _is_temp_name(name: str) -> bool:
    return name.startswith(".") and name.endswith((".tmp", ".tmp.crc"))
