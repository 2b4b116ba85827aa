"""One local S3-compatible server (runner_devtools.object_store: moto's standalone server, a
separate process on a free loopback port) for this folder's tests, with one bucket. They run one
after another on one pytest-xdist worker (tests/conftest.py's PROCESS_GROUPS); the server is
stopped by PID after the last of them."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from runner_devtools.object_store import LocalBucket, local_object_store

BUCKET = "lake"


@pytest.fixture(scope="package")
def s3() -> Iterator[LocalBucket]:
    """The bucket ``lake`` on a running local store: ``s3.uri('checkpoints')``,
    ``s3.spark_conf()`` (a target's settings), ``s3.env()``, ``s3.settings`` (boto3)."""
    with local_object_store(BUCKET) as bucket:
        yield bucket
