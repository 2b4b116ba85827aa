"""One local cluster for this folder's tests: a standalone master, two workers and a Spark Connect
server, started by the project's own `runner_devtools.local_cluster` from the installed pyspark
on free loopback ports, and stopped by PID after the folder's last test (they run one after
another on one pytest-xdist worker), so its JVMs do not sit idle beside the rest of the suite.

One local object store beside it (`runner_devtools.object_store`, reached through its outage
forwarder), whose S3A settings and jars the Connect server gets at start: the example runs with
warehouse and checkpoints on s3a:// on the standalone cluster and over Connect. Every process
of the cluster runs in the cluster's own directory, which does not contain the project."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from pyspark.sql import SparkSession

from runner.spark.session.jars import s3a_coordinates
from runner_devtools.local_cluster import LocalCluster
from runner_devtools.object_store import LocalBucket, local_object_store

RUNNER = str(Path(sys.executable).parent / "runner")
BUCKET = "lake"
HADOOP_PREFIX = "spark.hadoop."


@pytest.fixture(scope="package")
def lake() -> Iterator[LocalBucket]:
    """The bucket ``lake`` on a local store that ``lake.outage(seconds)`` can take away."""
    with local_object_store(BUCKET, outages=True) as bucket:
        yield bucket


@pytest.fixture(scope="package")
def local_cluster(
    tmp_path_factory: pytest.TempPathFactory, lake: LocalBucket
) -> Iterator[LocalCluster]:
    os.environ["RUNNER_CLUSTER_TIED"] = "1"  # its processes die with the test run
    cluster = LocalCluster(tmp_path_factory.mktemp("cluster"))
    started = time.monotonic()
    # two workers of one core each: the cores of one of two before, across two JVMs
    cluster.start(
        workers=2,
        worker_cores=1,
        worker_memory="2g",
        master_port=0,
        connect_port=0,
        connect_jars=tuple(s3a_coordinates()),
        connect_conf=lake.spark_conf(),
    )
    print(f"\nlocal cluster up in {time.monotonic() - started:.0f} s: {cluster.status()}")
    yield cluster
    print(f"\nstopped: {cluster.stop()}")


def read_from(spark: SparkSession, lake: LocalBucket) -> None:
    """Point the suite's session's Hadoop settings at ``lake``: the tests read the tables the
    runs wrote there (the session has the S3A jars: tests/conftest.py)."""
    hadoop = spark.sparkContext._jsc.hadoopConfiguration()  # type: ignore[union-attr]
    for key, value in lake.spark_conf().items():
        hadoop.set(key.removeprefix(HADOOP_PREFIX), value)


def on_lake(project: Path, lake: LocalBucket, prefix: str) -> None:
    """Put the example's `cluster` and `connect` targets' warehouse and checkpoints under
    ``s3a://lake/PREFIX/`` and give them the store's settings (`add_targets` first)."""
    text = (project / "project.yml").read_text()
    conf = "".join(f'      {key}: "{value}"\n' for key, value in lake.spark_conf().items())
    for target in ("cluster", "connect"):
        block = re.search(rf"\n  {target}:.*?\n    spark_conf:\n", text, re.S)
        assert block is not None, text
        moved = re.sub(
            r"\n    (warehouse|checkpoints): .*",
            lambda m, target=target: f"\n    {m[1]}: {lake.uri(prefix, target, m[1])}",
            block[0],
        )
        text = text.replace(block[0], moved + conf)
    (project / "project.yml").write_text(text)


def add_targets(project: Path, cluster: LocalCluster, default: str) -> None:
    """Point the project's `cluster` (standalone) and `connect` targets at ``cluster``'s free
    ports: the example's own targets get only their addresses replaced; a project without
    them gets both. ``default`` becomes the default target."""
    assert cluster.master_url is not None and cluster.connect_url is not None
    text = (project / "project.yml").read_text()
    text = text.replace("default_target: local\n", "")
    if "\n  cluster:" in text:
        text = text.replace("spark://127.0.0.1:7077", cluster.master_url)
        text = text.replace("sc://127.0.0.1:15002", cluster.connect_url)
    else:
        text += (
            f"  cluster:\n    master: {cluster.master_url}\n"
            "    warehouse: target/cluster/warehouse\n"
            "    checkpoints: target/cluster/checkpoints\n"
            f"  connect:\n    remote: {cluster.connect_url}\n"
            "    warehouse: target/connect/warehouse\n"
            "    checkpoints: target/connect/checkpoints\n"
        )
    (project / "project.yml").write_text(f"default_target: {default}\n{text}")


def runner(project: Path, *args: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    """`runner ARGS -p PROJECT` as a separate process; fails the test on a non-zero exit."""
    result = subprocess.run(
        [RUNNER, *args, "-p", str(project)],
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, "COLUMNS": "200"},
    )
    assert result.returncode == 0, result.stdout + result.stderr
    return result
