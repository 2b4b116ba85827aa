"""A boto3 S3 client for the settings of a target (``runner.object_paths.s3_settings``).

boto3 is in the ``s3`` extra, not a base dependency: a project on local disk never imports it.
Pure Python (no Spark): the checkpoint lock talks to the store before Spark starts.
"""

from __future__ import annotations

from typing import Any

from runner.errors import RunnerError
from runner.object_paths import S3Settings

# Each request fails after seconds, not minutes: the lock's heartbeat must learn in time that
# the store is unreachable (botocore's defaults are 60 s per attempt, with retries).
CONNECT_TIMEOUT_SECONDS = 5.0
READ_TIMEOUT_SECONDS = 10.0
MAX_ATTEMPTS = 2


class S3Unavailable(RunnerError):
    """boto3 is missing, or the object store could not be reached."""


def s3_client(settings: S3Settings) -> Any:
    """A boto3 S3 client for ``settings`` (path-style addressing when asked: a local store on
    127.0.0.1 has no per-bucket host names)."""
    try:
        import boto3
        from botocore.config import Config
    except ImportError:
        raise S3Unavailable(
            "boto3 is not installed: the runner needs it for a target on s3a:// (the "
            "one-run-per-model lock talks to the store before Spark starts)",
            hint="install the s3 extra: pip install 'delta-stream-runner[s3]' (in a clone: "
            "bash scripts/bootstrap.sh s3)",
        ) from None
    config = Config(
        connect_timeout=CONNECT_TIMEOUT_SECONDS,
        read_timeout=READ_TIMEOUT_SECONDS,
        retries={"max_attempts": MAX_ATTEMPTS, "mode": "standard"},
        s3={"addressing_style": "path" if settings.path_style else "auto"},
    )
    return boto3.client("s3", config=config, **settings.client_arguments())


def http_status(exc: Exception) -> int | None:
    """The HTTP status of a botocore error (None for any other exception)."""
    response = getattr(exc, "response", None)
    if not isinstance(response, dict):
        return None
    status = response.get("ResponseMetadata", {}).get("HTTPStatusCode")
    return int(status) if status is not None else None
