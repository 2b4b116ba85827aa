"""One run per model checkpoint: an OS file lock held for as long as the process runs (on S3: a
lease object, runner/checkpoint_lease.py).

``fcntl.flock`` on ``<checkpoints>/<model>.lock``: the kernel releases it when the process ends,
however it ends (SIGKILL included), so a lock left by a killed run never blocks the next start.
The file also records who holds it (pid, host, since) for the message a second run prints. It
sits beside the model's checkpoint directory, not in it, so ``--full-refresh`` (which deletes
that directory) keeps it. Pure Python: taken before Spark starts.

Checkpoints on ``s3a://`` (or ``s3://``) get a lease object at the same key instead, renewed by
a heartbeat: a process cannot hold a lock on object storage that ends with it.
"""

from __future__ import annotations

import fcntl
import json
import os
import socket
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, TYPE_CHECKING, Protocol

from runner.errors import RunnerError
from runner.object_paths import ObjectLocation, is_object_uri, parse_object_uri

if TYPE_CHECKING:
    from runner.checkpoint_lease import Lease


class ObjectRoot(Protocol):
    """A checkpoint root on object storage (``runner.storage.RemotePath``): its URI."""

    @property
    def uri(self) -> str: ...


class CheckpointBusy(RunnerError):
    """Another process is running the same model on the same checkpoint."""


class CheckpointLocks:
    """The locks of several models' checkpoints, held until ``release`` (or process exit).

    ``spark_conf`` (a target's ``revealed_conf``) is read only for a root on S3: its
    ``spark.hadoop.fs.s3a.*`` settings reach the store (runner/object_paths.py)."""

    def __init__(
        self,
        spark_conf: Callable[[], Mapping[str, str]] | None = None,
        *,
        on_lost: Callable[[str], None] | None = None,
    ) -> None:
        self._files: list[IO[str]] = []
        self._leases: list[Lease] = []
        self._spark_conf = spark_conf
        self._on_lost = on_lost

    def acquire(
        self, checkpoint_root: Path | ObjectRoot, model_name: str, *, file: Path | None = None
    ) -> str | None:
        """Lock ``model_name``'s checkpoint, or raise CheckpointBusy naming the holder. Returns
        a line to print, if any (a dead run's lease taken over; a store with no lock)."""
        root = _object_root(checkpoint_root)
        if root is not None:
            return self._acquire_lease(root, model_name, file)
        assert isinstance(checkpoint_root, Path)
        self._lock_file(checkpoint_root, model_name, file)
        return None

    def _acquire_lease(
        self, root: ObjectLocation, model_name: str, file: Path | None
    ) -> str | None:
        from runner.checkpoint_lease import Lease, LeaseBusy, LeaseTiming
        from runner.object_paths import s3_settings

        if not root.is_s3:
            return (
                f"warning: the checkpoints are on {root.scheme}:// ({root.uri}): one run per "
                f"model is not enforced there (the runner's lease needs S3's conditional "
                f"writes); do not start a second run of '{model_name}'"
            )
        timing = LeaseTiming.from_env()
        settings = s3_settings(self._spark_conf() if self._spark_conf else {})
        lease = Lease(root.child(f"{model_name}.lock"), settings, timing)
        if self._on_lost is not None:
            lease.on_lost = self._on_lost
        try:
            note = lease.take()
        except LeaseBusy as busy:
            raise CheckpointBusy(
                f"model '{model_name}' is already running on checkpoint "
                f"{root.child(model_name).uri}: {busy.message}; stop that run first (a killed "
                f"run's lease expires {timing.lease_seconds:g} s after its last renewal)",
                file=file,
                hint=busy.hint,
            ) from None
        self._leases.append(lease)
        return note

    def _lock_file(self, checkpoint_root: Path, model_name: str, file: Path | None) -> None:
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
        for lease in self._leases:
            lease.release()
        self._leases.clear()
        for handle in self._files:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)
            handle.close()
        self._files.clear()

    def __enter__(self) -> CheckpointLocks:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.release()


def _object_root(root: Path | ObjectRoot) -> ObjectLocation | None:
    """The root as an object-store location, or None for a local path."""
    text = getattr(root, "uri", None)
    return parse_object_uri(text) if text is not None and is_object_uri(text) else None


def lock_path(checkpoint_root: Path, model_name: str) -> Path:
    return checkpoint_root / f"{model_name}.lock"


def _holder(text: str) -> str:
    try:
        found = json.loads(text)
        return f"pid {found['pid']} on {found['host']} since {found['since']}"
    except (ValueError, KeyError, TypeError):
        return "another process (it has not written its pid yet)"
