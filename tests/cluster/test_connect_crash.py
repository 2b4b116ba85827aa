"""Exactly-once over Spark Connect on the standalone cluster: `runner stream` (the client)
SIGKILLed, then the Connect server itself SIGKILLed mid-stream: the client says so in one line,
stops on SIGTERM, the server is restarted alone (same address, its orphaned Python workers gone),
and the drain matches the oracle (tests/spark/test_crash_recovery.py's). The standalone half,
with warehouse and checkpoints on s3a:// and a store outage, is
tests/cluster/test_cluster_crashes.py; this one is a pytest-xdist group of its own
(tests/conftest.py's PROCESS_GROUPS) with a cluster of its own, so the two run side by side.

Smaller than the local test (CI time): 8 files, one runner kill, between two statements of a
batch (with --slow, two: the second at a random moment).
"""

from __future__ import annotations

import os
import random
import re
import signal
import time
from pathlib import Path

from pyspark.sql import SparkSession

from runner.processes import alive
from runner_devtools.local_cluster import LocalCluster
from tests.cluster.conftest import add_targets, runner
from tests.cluster.test_cluster_crashes import ANY_BATCH, FILES, STOP_LIMIT
from tests.conftest import Report
from tests.spark.processes import StreamProcess, kill_repeatedly
from tests.spark.test_crash_recovery import (
    SEED,
    assert_tables_match_oracle,
    fast_triggers,
    generate_files,
    land_slowly,
)

KILLS, SLOW_KILLS = 1, 2  # SIGKILLs of `runner stream`: by default, and with --slow
BATCH_NUMBER = re.compile(r"orders_merge batch (\d+): \d+ rows in")
SERVER_GONE = re.compile(r"the Spark Connect server at \S+ does not answer \(")
# Generous bound for a loaded CI machine (the figures measured are in the summary and in
# docs/deploy.md): the line comes after the client's next call, within a second or two.
GONE_LINE_LIMIT = 60.0


def test_sigkill_over_connect_client_and_server(
    spark: SparkSession,
    example_project: Path,
    local_cluster: LocalCluster,
    report: Report,
    kill_count: int,
) -> None:
    add_targets(example_project, local_cluster, default="connect")
    fast_triggers(example_project, files_per_batch=4)  # half the drain's batches
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
