"""Exactly-once off the local JVM: the crash test of tests/spark/test_crash_recovery.py (SIGKILL
`runner stream`, restart, drain, compare with the oracle) on the standalone cluster, where the
batches run on executor JVMs the worker starts, and over Spark Connect, where the Connect server
itself is also SIGKILLed and restarted once.

Smaller than the local test (CI time): 8 files, and one runner kill per target, between two
statements of a batch (with --slow, two: the second at a random moment).
"""

from __future__ import annotations

import os
import random
import re
import signal
import threading
import time
from pathlib import Path

from pyspark.sql import SparkSession

from runner_devtools.local_cluster import LocalCluster
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
KILLS, SLOW_KILLS = 1, 2  # SIGKILLs of `runner stream` per target: by default, and with --slow
ANY_BATCH = re.compile(r"batch \d+: \d+ rows in")
EXECUTOR_CLASS = "CoarseGrainedExecutorBackend"


def test_sigkill_on_standalone_cluster(
    spark: SparkSession,
    example_project: Path,
    local_cluster: LocalCluster,
    report: Report,
    kill_count: int,
) -> None:
    add_targets(example_project, local_cluster, default="cluster")
    fast_triggers(example_project)
    files = generate_files(SEED, FILES)
    producer = land_slowly(example_project / "target" / "landing" / "orders", files)
    kills = kill_repeatedly(
        example_project, "orders_merge+", "orders_merge", kill_count, random.Random(SEED)
    )
    producer.join()
    workers = {pid for name, pid in local_cluster.pids().items() if name.startswith("worker")}
    stop, executors = threading.Event(), {}
    watcher = threading.Thread(target=watch_executors, args=(workers, stop, executors))
    watcher.start()
    try:
        drain = runner(example_project, "run", "--select", "orders_merge+")
    finally:
        stop.set()
        watcher.join()

    assert f"(target cluster, {local_cluster.master_url})" in drain.stdout
    # the batches ran on executors: JVMs the worker started, not the runner's own process
    assert executors, "no executor process was started by the worker"
    assert all("spark://CoarseGrainedScheduler@" in c for c in executors.values())
    assert_tables_match_oracle(spark, example_project / "target" / "cluster" / "warehouse", files)
    report(f"standalone cluster, {len(kills)} SIGKILL(s) of the runner (driver):", kills)


def test_sigkill_over_connect_client_and_server(
    spark: SparkSession,
    example_project: Path,
    local_cluster: LocalCluster,
    report: Report,
    kill_count: int,
) -> None:
    add_targets(example_project, local_cluster, default="connect")
    fast_triggers(example_project)
    files = generate_files(SEED + 1, FILES)
    rng = random.Random(SEED + 1)
    producer = land_slowly(example_project / "target" / "landing" / "orders", files, pause=2.0)
    # Killing the client does not stop its queries on the server: the next start of the same
    # checkpoint takes over from the orphaned run (spark.sql.streaming.stopActiveRunOnRestart).
    kills = kill_repeatedly(example_project, "orders_merge+", "orders_merge", kill_count, rng)

    stream = StreamProcess(example_project, select="orders_merge+")
    hit = stream.wait_for(ANY_BATCH, 0, timeout=300)
    assert hit is not None, "\n".join(stream.lines)
    time.sleep(rng.uniform(0.5, 3.0))
    server = local_cluster.pids()["connect"]
    assert server is not None
    os.killpg(server, signal.SIGKILL)  # the server and its foreachBatch Python workers
    stream.kill()
    kills.append(
        f"kill {kill_count + 1}: the Connect server (pid {server}), after: {stream.lines[hit]}"
    )
    assert local_cluster.connect_url is not None
    port = int(local_cluster.connect_url.rsplit(":", 1)[1])
    started = time.monotonic()
    local_cluster.start_connect(port)
    kills.append(f"  restarted on port {port} in {time.monotonic() - started:.0f} s")
    producer.join()
    runner(example_project, "run", "--select", "orders_merge+")

    assert_tables_match_oracle(spark, example_project / "target" / "connect" / "warehouse", files)
    report(f"Spark Connect, {kill_count} SIGKILL(s) of the client, 1 of the server:", kills)


def processes() -> dict[int, tuple[int, str]]:
    """pid -> (parent pid, command line) of every process on the machine."""
    found = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
                parent = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
            found[int(entry.name)] = (parent, command)
    return found


def watch_executors(workers: set[int], stop: threading.Event, seen: dict[int, str]) -> None:
    """Record the executor JVMs the workers start while ``stop`` is not set."""
    while not stop.wait(0.5):
        for pid, (parent, command) in processes().items():
            if parent in workers and EXECUTOR_CLASS in command:
                seen[pid] = command
