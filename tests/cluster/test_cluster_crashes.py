"""Exactly-once off the local JVM: the crash test of tests/spark/test_crash_recovery.py (SIGKILL
`runner stream`, restart, drain, compare with the oracle) on the standalone cluster with
warehouse and checkpoints on s3a:// (the local object store), where the batches run on executor
JVMs the workers start in their own directories: two SIGKILLs while a MERGE is in flight, and
the store unreachable for 10 s mid-batch in the run between them. Over Spark Connect the
Connect server itself is also SIGKILLed mid-stream: the client says so in one line, stops on
SIGTERM, the server is restarted alone (same address, its orphaned Python workers gone), and
the drain matches the oracle.

Smaller than the local test (CI time): 8 files; on the cluster three runs in all (a run there is
a driver and an executor JVM), the second killed after the outage; over Connect one runner
kill, between two statements of a batch (with --slow, two: the second at a random moment).
"""

from __future__ import annotations

import contextlib
import os
import random
import re
import signal
import threading
import time
from pathlib import Path

import pytest
from pyspark.sql import SparkSession

from runner.checkpoint_lease import Holder
from runner.processes import alive
from runner.s3_client import s3_client
from runner.storage import RemotePath
from runner_devtools.local_cluster import LocalCluster
from runner_devtools.object_store import LocalBucket
from tests.cluster.conftest import add_targets, on_lake, read_from, runner
from tests.conftest import Report, land_events
from tests.spark.processes import StreamProcess, kill_repeatedly
from tests.spark.test_crash_recovery import (
    SEED,
    Event,
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
AFTER_FIRST_STATEMENT = re.compile(r"orders_merge batch \d+ batch\[0\] CREATE")
OUTAGE_SECONDS = 10.0
LEASE_SECONDS = 20  # renewed every 3 s: a 10 s outage leaves it time to renew
# the runs that are SIGKILLed: the next start waits for their lease to expire, so it is as short
# as tests/s3/test_lock_race.py's (renewed every 2 s); no outage comes while they run
KILLED_LEASE_SECONDS = 6
AFTER_OUTAGE_SECONDS = 240.0  # S3A's retries, then a batch; or the stream's error line
# a line of a Java stack trace: a frame, a cause, an exception's class name at the start
JAVA_FRAME = re.compile(
    r"^\s+at [\w.$]+\(|^Caused by: |^(org|java|com|software)\.[\w.$]+(Exception|Error)\b"
)


def test_sigkill_and_outage_on_s3_on_standalone_cluster(
    spark: SparkSession,
    example_project: Path,
    local_cluster: LocalCluster,
    lake: LocalBucket,
    report: Report,
    kill_count: int,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Warehouse and checkpoints on s3a://: SIGKILLs of `runner stream` while a MERGE is in
    flight, the object store unreachable for OUTAGE_SECONDS mid-batch in the run after the
    first kill (which is then killed too); the drain after equals the oracle. Three runs on the
    cluster in all (each a driver JVM and an executor JVM): the fewest that restart after two
    kills."""
    # a killed run's lease on S3 holds its model until it expires: the next start waits for it
    # (docs/deploy.md, "One run per model on object storage")
    monkeypatch.setenv("RUNNER_LOCK_LEASE_SECONDS", str(KILLED_LEASE_SECONDS))
    add_targets(example_project, local_cluster, default="cluster")
    on_lake(example_project, lake, "crash")
    read_from(spark, lake)
    # the example's 5 s triggers, not fast_triggers' 1 s: a run waits minutes here (the outage,
    # S3A's retries), and every trigger of its two queries without data reads Delta's log on S3
    orders = example_project / "streams" / "orders.yml"
    orders.write_text(
        orders.read_text().replace("maxFilesPerTrigger: 1", f"maxFilesPerTrigger: {FILES // 2}")
    )
    files = generate_files(SEED, FILES)
    landing = example_project / "target" / "landing" / "orders"
    # batch 0 for the first kill; its restart re-runs batch 0 (the outage), then batch 1 (a kill)
    land(landing, files, range(FILES // 2))
    workers = {pid for name, pid in local_cluster.pids().items() if name.startswith("worker")}
    stop, executors = threading.Event(), {}
    watcher = threading.Thread(target=watch_executors, args=(workers, stop, executors))
    watcher.start()
    try:
        kills = kill_during_merge(example_project, lake, max(2, kill_count) - 1)
        land(landing, files, range(FILES // 2, FILES))
        # the run the outage hits: its lease outlasts the outage plus a renewal
        monkeypatch.setenv("RUNNER_LOCK_LEASE_SECONDS", str(LEASE_SECONDS))
        monkeypatch.setenv("RUNNER_LOCK_HEARTBEAT_SECONDS", "3")
        events, killed = outage_mid_batch(example_project, lake, kill=len(kills) + 1)
        if killed is None:  # the outage stopped the stream: the last kill in a run of its own
            killed = kill_during_merge(example_project, lake, 1, first=len(kills) + 1)[0]
        kills.append(killed)
        wait_for_leases(lake, "crash")
        drain = runner(example_project, "run", "--select", "orders_merge+")
    finally:
        stop.set()
        watcher.join()

    assert f"(target cluster, {local_cluster.master_url})" in drain.stdout
    # the batches ran on executors: JVMs the workers started, in their own working directories
    assert executors, "no executor process was started by the workers"
    assert all("spark://CoarseGrainedScheduler@" in c for c, _ in executors.values())
    for command, cwd in executors.values():
        assert not cwd.startswith(str(example_project)), (cwd, command)
    warehouse = RemotePath(lake.uri("crash", "cluster", "warehouse"))
    assert_tables_match_oracle(spark, warehouse, files)  # type: ignore[arg-type]
    report(f"standalone cluster, S3 warehouse, {len(kills)} SIGKILL(s) of the runner:", kills)
    report(f"standalone cluster, S3 warehouse, one {OUTAGE_SECONDS:.0f} s store outage:", events)


def land(landing: Path, files: list[list[Event]], numbers: range) -> None:
    """Land files ``numbers`` of ``files`` (as tests/spark/test_crash_recovery.py names them)."""
    for number in numbers:
        land_events(landing, f"{number:03d}.json", [e.json() for e in files[number]])


def kill_during_merge(project: Path, lake: LocalBucket, kills: int, first: int = 1) -> list[str]:
    """Start `runner stream` and SIGKILL it (runner and JVM) ``kills`` times, each right after
    orders_merge finished the first statement of a batch: its MERGE is in flight."""
    report = []
    for cycle in range(first, first + kills):
        wait_for_leases(lake, "crash")
        stream = StreamProcess(project, select="orders_merge+")
        report.append(kill_after_first_statement(stream, 0, cycle))
    return report


def kill_after_first_statement(stream: StreamProcess, start: int, number: int) -> str:
    """SIGKILL ``stream`` once a line from ``start`` on says orders_merge finished the first
    statement of a batch; the line for the summary."""
    hit = stream.wait_for(AFTER_FIRST_STATEMENT, start, timeout=300)
    assert hit is not None, "\n".join(stream.lines)
    stream.kill()
    assert stream.process.returncode == -signal.SIGKILL, "\n".join(stream.lines)
    return f"kill {number}: MERGE in flight, right after: {stream.lines[hit]}"


def wait_for_leases(lake: LocalBucket, prefix: str) -> None:
    """Sleep until every run's lease under ``s3a://lake/PREFIX/`` has expired (a SIGKILLed run
    leaves its own: runner/checkpoint_lease.py), read from the lease objects themselves: a
    `runner` started to find out would cost a process each."""
    client = s3_client(lake.settings)
    listed = client.list_objects_v2(Bucket=lake.name, Prefix=f"{prefix}/")
    holders = [
        Holder.parse(client.get_object(Bucket=lake.name, Key=item["Key"])["Body"].read())
        for item in listed.get("Contents", [])
        if item["Key"].endswith(".lock")
    ]
    left = max((h.expires for h in holders if h is not None), default=0.0) - time.time()
    assert left < LEASE_SECONDS + 5, f"a lease renewed until {left:.0f} s from now"
    time.sleep(max(left + 0.5, 0.0))


def outage_mid_batch(project: Path, lake: LocalBucket, kill: int) -> tuple[list[str], str | None]:
    """Start `runner stream`; when a batch has begun, make the store unreachable for
    OUTAGE_SECONDS (connections refused and reset), then reachable again. The stream either
    goes on (S3A retried) or stops with a clear line (no Java stack trace). One that goes on
    is SIGKILLed (kill number ``kill``) in the next batch's MERGE. Returns what happened, for
    the summary, and that kill's line (None: the stream stopped by itself)."""
    wait_for_leases(lake, "crash")
    stream = StreamProcess(project, select="orders_merge+")
    hit = stream.wait_for(AFTER_FIRST_STATEMENT, 0, timeout=300)
    assert hit is not None, "\n".join(stream.lines)
    began = time.monotonic()
    lake.outage(OUTAGE_SECONDS)
    events = [
        f"outage: store unreachable for {time.monotonic() - began:.0f} s from: {stream.lines[hit]}"
    ]
    after = len(stream.lines)
    # orders_merge's batch the outage hit, not another model's: S3A can retry the hit one for
    # a minute (its backoff)
    went_on = stream.wait_for(BATCH_NUMBER, after, timeout=AFTER_OUTAGE_SECONDS)
    killed = None
    if stream.process.poll() is None:
        assert went_on is not None, "\n".join(stream.lines)
        events.append(f"  the stream went on: {stream.lines[went_on]}")
        killed = kill_after_first_statement(stream, went_on, kill)
        events.append(f"  then SIGKILLed in its next batch's MERGE (kill {kill})")
    stream.join()
    output = "\n".join(stream.lines)
    print(output)
    assert not any(JAVA_FRAME.match(line) for line in stream.lines), output
    if killed is None:
        said = [line for line in stream.lines[after:] if line.startswith("error:")]
        assert stream.process.returncode != 0 and len(said) == 1, output
        events.append(f"  the stream stopped (exit {stream.process.returncode}): {said[0]}")
    return events, killed


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


def watch_executors(
    workers: set[int], stop: threading.Event, seen: dict[int, tuple[str, str]]
) -> None:
    """Record the executor JVMs the workers start (command line, working directory) while
    ``stop`` is not set."""
    while not stop.wait(0.5):
        for pid, (parent, command) in processes().items():
            if parent in workers and EXECUTOR_CLASS in command and pid not in seen:
                with contextlib.suppress(OSError):
                    seen[pid] = (command, os.readlink(f"/proc/{pid}/cwd"))
