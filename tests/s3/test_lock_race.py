"""Two `runner run` racing for one model whose checkpoints are on S3 (the local object store):
one takes the lease, the other exits 1 with the line docs/guarantees.md shows; the winner,
SIGKILLed with its JVM, leaves its lease behind until it expires, and the next run takes it
over (and holds it: the lease names it). The lease is taken before Spark starts, so the losers
start no JVM."""

from __future__ import annotations

import os
import re
import time
from pathlib import Path

from runner.object_paths import parse_object_uri
from runner.s3_client import s3_client
from runner_devtools.object_store import LocalBucket, local_object_store
from tests.conftest import land_events, write_project
from tests.s3.conftest import on_s3
from tests.spark.processes import StreamProcess

LEASE_SECONDS = 6  # short: the test waits for a SIGKILLed holder's lease to expire
MODEL = (
    "{{ config(stream='orders', target='silver.orders', unique_key='order_id', "
    "sequence_by='updated_at', columns='order_id STRING, amount DECIMAL(10,2), "
    "updated_at TIMESTAMP') }}\n"
    "{{ merge() }};\n"
)
EVENT = (
    '{"order_id": "o1", "customer_id": "c1", "status": "new", "amount": 1.50, '
    '"updated_at": "2026-11-01T00:00:00", "op": "U"}'
)
BUSY = re.compile(
    r"model 'orders' is already running on checkpoint (s3a://\S+/checkpoints/orders): "
    r"pid (\d+) on \S+ since [^,]+, lease renewed until .+; stop that run first \(a killed "
    rf"run's lease expires {LEASE_SECONDS} s after its last renewal\)"
)


def start_run(project: Path) -> StreamProcess:
    return StreamProcess(project, command=["run", "--model", "orders"])


def finished(run: StreamProcess, timeout: float = 120) -> str:
    run.process.wait(timeout=timeout)
    run.join()
    return "\n".join(run.lines)


def test_two_runs_race_one_wins_and_a_killed_winners_lease_is_taken_over(
    s3: LocalBucket, tmp_path: Path
) -> None:
    os.environ["RUNNER_LOCK_LEASE_SECONDS"] = str(LEASE_SECONDS)  # inherited by the runs
    try:
        project = on_s3(write_project(tmp_path / "race", {"orders": MODEL}), s3, "race")
        land_events(project / "landing" / "orders", "a.json", [EVENT])
        runs = [start_run(project), start_run(project)]
        # the loser gives up before Spark starts: seconds, while the winner starts its JVM
        deadline = time.monotonic() + 120
        while all(run.process.poll() is None for run in runs) and time.monotonic() < deadline:
            time.sleep(0.1)
        losers = [run for run in runs if run.process.poll() is not None]
        assert len(losers) == 1, "neither run ended: no lease refused the second one"
        loser = losers[0]
        winner = runs[1 - runs.index(loser)]
        output = finished(loser)
        assert loser.process.returncode == 1, output
        busy = BUSY.search(output)
        assert busy is not None, output
        assert busy.group(1) == s3.uri("race", "checkpoints", "orders")
        assert int(busy.group(2)) == winner.process.pid

        winner.kill()  # the runner and its JVM, mid-start: no release, the lease stays
        lease = parse_object_uri(s3.uri("race", "checkpoints", "orders.lock"))
        client = s3_client(s3.settings)
        held = client.get_object(Bucket=lease.bucket, Key=lease.key)["Body"].read()
        assert f'"pid": {winner.process.pid}'.encode() in held
        found = re.search(rb'"expires": ([0-9.]+)', held)
        assert found is not None
        expires = float(found.group(1))
        assert expires > time.time()  # renewed by its heartbeat until the kill: still valid
        time.sleep(expires - time.time() + 0.5)  # the lease's own deadline, not a race
        taker = start_run(project)
        took_over = re.compile(
            rf"took over the expired lease {re.escape(lease.uri)} of pid {winner.process.pid} "
        )
        assert taker.wait_for(took_over, 0, timeout=120) is not None, taker.lines
        # it holds the lease now; it is stopped here rather than left to run the model on S3
        # (minutes on two busy cores: tests/s3's command tests do that)
        current = client.get_object(Bucket=lease.bucket, Key=lease.key)["Body"].read()
        assert f'"pid": {taker.process.pid}'.encode() in current
        taker.kill()
    finally:
        os.environ.pop("RUNNER_LOCK_LEASE_SECONDS", None)


def test_a_run_that_cannot_renew_its_lease_stops_with_its_jvm(tmp_path: Path) -> None:
    """The store goes away under a running `runner stream`: one line, exit 1, and its Spark
    JVM ends with it, before the lease it can no longer renew expires."""
    from runner.processes import alive, children

    with local_object_store("outage", tmp_path / "store") as bucket:
        project = on_s3(write_project(tmp_path / "outage", {"orders": MODEL}), bucket, "o")
        land_events(project / "landing" / "orders", "a.json", [EVENT])
        os.environ["RUNNER_LOCK_LEASE_SECONDS"] = "9"
        try:
            stream = StreamProcess(project, command=["stream", "--model", "orders"])
        finally:
            os.environ.pop("RUNNER_LOCK_LEASE_SECONDS", None)
        client = s3_client(bucket.settings)
        lease = parse_object_uri(bucket.uri("o", "checkpoints", "orders.lock"))
        deadline = time.monotonic() + 120
        while client.list_objects_v2(Bucket=lease.bucket, Prefix=lease.key)["KeyCount"] == 0:
            assert stream.process.poll() is None and time.monotonic() < deadline, stream.lines
            time.sleep(0.2)
        bucket.store.stop()
        seen: set[int] = set()
        while stream.process.poll() is None and time.monotonic() < deadline:
            seen.update(children(stream.process.pid))  # its JVM, once started
            time.sleep(0.1)
        output = finished(stream)
    assert stream.process.returncode == 1, output
    assert re.search(
        rf"error: could not renew the lease {re.escape(lease.uri)} for 6 s \(cannot write the "
        r"lease object .*\); stopping now so that this run writes nothing more without it",
        output,
    ), output
    assert not [pid for pid in seen if alive(pid)], "the run's JVM outlived it"
