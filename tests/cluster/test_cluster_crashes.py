"""Exactly-once off the local JVM: the crash test of tests/spark/test_crash_recovery.py (SIGKILL
`runner stream`, restart, drain, compare with the oracle) on the standalone cluster, where the
batches run on executor JVMs the worker starts, and over Spark Connect, where the Connect server
itself is also SIGKILLed mid-stream: the client says so in one line, stops on SIGTERM, the
server is restarted alone (same address, its orphaned Python workers gone), and the drain
matches the oracle.

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

from runner.processes import alive
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
BATCH_NUMBER = re.compile(r"orders_merge batch (\d+): \d+ rows in")
SERVER_GONE = re.compile(r"the Spark Connect server at \S+ does not answer \(")
# Generous bounds for a loaded CI machine (the figures measured are in the summary and in
# docs/deploy.md): the line comes after the client's next call, within a second or two.
GONE_LINE_LIMIT = 60.0
STOP_LIMIT = 60.0
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
    assert server is not None and local_cluster.connect_url is not None
    workers = group_members(server) - {server}  # its foreachBatch Python workers
    os.kill(server, signal.SIGKILL)  # the JVM alone, as the OOM killer would
    killed = time.monotonic()
    told = stream.wait_for(SERVER_GONE, hit, timeout=GONE_LINE_LIMIT)
    told_after = time.monotonic() - killed
    assert told is not None, "\n".join(stream.lines)
    assert local_cluster.connect_url in stream.lines[told]
    kills.append(
        f"kill {kill_count + 1}: the Connect server (pid {server}), after: {stream.lines[hit]}"
    )
    kills.append(f"  the client said so {told_after:.1f} s later: {stream.lines[told]}")
    assert told_after < GONE_LINE_LIMIT

    stream.process.send_signal(signal.SIGTERM)
    asked = time.monotonic()
    stream.process.wait(timeout=STOP_LIMIT)
    stopped_after = time.monotonic() - asked
    stream.join()
    output = "\n".join(stream.lines)
    assert stream.process.returncode == 1, output
    assert sum(bool(SERVER_GONE.search(line)) for line in stream.lines) == 1, output
    assert f"stopped: the Spark Connect server at {local_cluster.connect_url}" in output, output
    kills.append(f"  SIGTERM stopped the client in {stopped_after:.1f} s (exit code 1)")

    started = time.monotonic()
    kills.append("  " + local_cluster.restart("connect"))  # the server alone, same address
    kills.append(f"  (restart took {time.monotonic() - started:.0f} s)")
    left = {pid for pid in workers if alive(pid)}
    assert not left, f"Python workers of the killed server still run: {left}"
    producer.join()
    drain = runner(example_project, "run", "--select", "orders_merge+")
    # this run prints its own batches only, none an earlier run already reported
    numbers = [int(m.group(1)) for m in BATCH_NUMBER.finditer(drain.stdout)]
    assert len(numbers) == len(set(numbers)), drain.stdout

    assert_tables_match_oracle(spark, example_project / "target" / "connect" / "warehouse", files)
    report(f"Spark Connect, {kill_count} SIGKILL(s) of the client, 1 of the server:", kills)


def group_members(pgid: int) -> set[int]:
    """The processes of process group ``pgid``."""
    found = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except (OSError, IndexError):
                continue
            if int(stat[2]) == pgid:
                found.add(int(entry.name))
    return found


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
