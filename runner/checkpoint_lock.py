"""One run per model checkpoint: an OS file lock held for as long as the process runs.

``fcntl.flock`` on ``<checkpoints>/<model>.lock``: the kernel releases it when the process ends,
however it ends (SIGKILL included), so a lock left by a killed run never blocks the next start.
The file also records who holds it (pid, host, since) for the message a second run prints. It
sits beside the model's checkpoint directory, not in it, so ``--full-refresh`` (which deletes
that directory) keeps it. Pure Python: taken before Spark starts.
"""

from __future__ import annotations

import fcntl
import json
import os
import socket
from datetime import UTC, datetime
from pathlib import Path
from typing import IO

from runner.errors import RunnerError


class CheckpointBusy(RunnerError):
    """Another process is running the same model on the same checkpoint."""


class CheckpointLocks:
    """The locks of several models' checkpoints, held until ``release`` (or process exit)."""

    def __init__(self) -> None:
        self._files: list[IO[str]] = []

    def acquire(self, checkpoint_root: Path, model_name: str, *, file: Path | None = None) -> None:
        """Lock ``model_name``'s checkpoint, or raise CheckpointBusy naming the holder."""
        checkpoint_root.mkdir(parents=True, exist_ok=True)
        path = lock_path(checkpoint_root, model_name)
        handle = open(path, "a+", encoding="utf-8")  # noqa: SIM115 (held until release)
        try:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.seek(0)
            holder = _holder(handle.read())
            handle.close()
            raise CheckpointBusy(
                f"model '{model_name}' is already running on checkpoint "
                f"{checkpoint_root / model_name}: {holder}; stop that run first (a killed run "
                "releases the lock by itself)",
                file=file,
            ) from None
        handle.seek(0)
        handle.truncate()
        since = datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
        handle.write(json.dumps({"pid": os.getpid(), "host": socket.gethostname(), "since": since}))
        handle.flush()
        self._files.append(handle)

    def release(self) -> None:
        for handle in self._files:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)
            handle.close()
        self._files.clear()

    def __enter__(self) -> CheckpointLocks:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.release()


def lock_path(checkpoint_root: Path, model_name: str) -> Path:
    return checkpoint_root / f"{model_name}.lock"


def _holder(text: str) -> str:
    try:
        found = json.loads(text)
        return f"pid {found['pid']} on {found['host']} since {found['since']}"
    except (ValueError, KeyError, TypeError):
        return "another process (it has not written its pid yet)"
