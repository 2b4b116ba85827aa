"""Exactly-once off the local JVM: the crash test of tests/spark/test_crash_recovery.py (SIGKILL
`runner stream`, restart, drain, compare with the oracle) on the standalone cluster and over
Spark Connect, where the Connect server itself is also SIGKILLed and restarted once.

Fewer, smaller than the local test (CI time): 8 files, 2 runner kills per target.
"""

from __future__ import annotations

import os
import random
import re
import signal
import time
from pathlib import Path

from pyspark.sql import SparkSession

from runner.local_cluster import LocalCluster
from tests.cluster.conftest import add_targets, runner
from tests.conftest import Report
from tests.spark.processes import StreamProcess, kill_repeatedly
from tests.spark.test_crash_recovery import (
    SEED,
    assert_tables_match_oracle,
    fast_triggers,
    generate_files,
    land_slowly,
)

FILES = 8
KILLS = 2
ANY_BATCH = re.compile(r"batch \d+: \d+ rows in")


def test_sigkill_on_standalone_cluster(
    spark: SparkSession,
    example_project: Path,
    local_cluster: LocalCluster,
    report: Report,
) -> None:
    add_targets(example_project, local_cluster, default="cluster")
    fast_triggers(example_project)
    files = generate_files(SEED, FILES)
    producer = land_slowly(example_project / "target" / "landing" / "orders", files)
    kills = kill_repeatedly(
        example_project, "orders_merge+", "orders_merge", KILLS, random.Random(SEED)
    )
    producer.join()
    runner(example_project, "run", "--select", "orders_merge+")

    assert_tables_match_oracle(spark, example_project / "target" / "cluster" / "warehouse", files)
    report(f"standalone cluster, {len(kills)} SIGKILLs of the runner (driver):", kills)


def test_sigkill_over_connect_client_and_server(
    spark: SparkSession,
    example_project: Path,
    local_cluster: LocalCluster,
    report: Report,
) -> None:
    add_targets(example_project, local_cluster, default="connect")
    fast_triggers(example_project)
    files = generate_files(SEED + 1, FILES)
    rng = random.Random(SEED + 1)
    producer = land_slowly(example_project / "target" / "landing" / "orders", files, pause=2.0)
    # Killing the client does not stop its queries on the server: the next start of the same
    # checkpoint takes over from the orphaned run (spark.sql.streaming.stopActiveRunOnRestart).
    kills = kill_repeatedly(example_project, "orders_merge+", "orders_merge", KILLS, rng)

    stream = StreamProcess(example_project, select="orders_merge+")
    hit = stream.wait_for(ANY_BATCH, 0, timeout=300)
    assert hit is not None, "\n".join(stream.lines)
    time.sleep(rng.uniform(0.5, 3.0))
    server = local_cluster.pids()["connect"]
    assert server is not None
    os.killpg(server, signal.SIGKILL)  # the server and its foreachBatch Python workers
    stream.kill()
    kills.append(f"kill {KILLS + 1}: the Connect server (pid {server}), after: {stream.lines[hit]}")
    assert local_cluster.connect_url is not None
    port = int(local_cluster.connect_url.rsplit(":", 1)[1])
    started = time.monotonic()
    local_cluster.start_connect(port)
    kills.append(f"  restarted on port {port} in {time.monotonic() - started:.0f} s")
    producer.join()
    runner(example_project, "run", "--select", "orders_merge+")

    assert_tables_match_oracle(spark, example_project / "target" / "connect" / "warehouse", files)
    report(f"Spark Connect, {KILLS} SIGKILLs of the client, 1 of the server:", kills)
