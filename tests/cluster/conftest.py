"""One local cluster for this folder's tests: a standalone master, one worker and a Spark Connect
server, started by the project's own `runner_devtools.local_cluster` from the installed pyspark
on free loopback ports, and stopped by PID after the folder's last test (they run one after
another on one pytest-xdist worker), so its JVMs do not sit idle beside the rest of the suite."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from runner_devtools.local_cluster import LocalCluster

RUNNER = str(Path(sys.executable).parent / "runner")


@pytest.fixture(scope="package")
def local_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalCluster]:
    os.environ["RUNNER_CLUSTER_TIED"] = "1"  # its processes die with the test run
    cluster = LocalCluster(tmp_path_factory.mktemp("cluster"))
    started = time.monotonic()
    cluster.start(workers=1, worker_cores=2, worker_memory="2g", master_port=0, connect_port=0)
    print(f"\nlocal cluster up in {time.monotonic() - started:.0f} s: {cluster.status()}")
    yield cluster
    print(f"\nstopped: {cluster.stop()}")


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
