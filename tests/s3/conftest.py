"""One local S3-compatible server (runner_devtools.object_store: moto's standalone server, a
separate process on a free loopback port) for this folder's tests, with one bucket. They run one
after another on one pytest-xdist worker (tests/conftest.py's PROCESS_GROUPS); the server is
stopped by PID after the last of them."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from runner_devtools.object_store import LocalBucket, local_object_store

BUCKET = "lake"


@pytest.fixture(scope="package")
def s3() -> Iterator[LocalBucket]:
    """The bucket ``lake`` on a running local store: ``s3.uri('checkpoints')``,
    ``s3.spark_conf()`` (a target's settings), ``s3.env()``, ``s3.settings`` (boto3)."""
    with local_object_store(BUCKET) as bucket:
        yield bucket


def on_s3(project: Path, bucket: LocalBucket, prefix: str) -> Path:
    """Move the `local` target of a project written by ``tests.conftest.write_project`` onto
    ``bucket``: warehouse and checkpoints under ``s3a://BUCKET/PREFIX/``, and the spark_conf
    that reaches the store."""
    text = (project / "project.yml").read_text()
    local = "    warehouse: target/warehouse\n    checkpoints: target/checkpoints\n"
    assert local in text, "not a project written by tests.conftest.write_project"
    text = text.replace(
        local,
        f"    warehouse: {bucket.uri(prefix, 'warehouse')}\n"
        f"    checkpoints: {bucket.uri(prefix, 'checkpoints')}\n",
    )
    conf = "".join(f'      {key}: "{value}"\n' for key, value in bucket.spark_conf().items())
    text = text.replace("    spark_conf:\n", "    spark_conf:\n" + conf, 1)
    (project / "project.yml").write_text(text)
    return project
