"""The lease that keeps one run per model when checkpoints are on S3 (runner/checkpoint_lease.py),
against the local object store's real S3 HTTP API: every step is a conditional write the store
checks. No JVM. Time is the lease's injected clock where a test needs a lease to have expired."""

from __future__ import annotations

import json
import threading
import time
import uuid
from collections.abc import Callable
from pathlib import Path

import pytest

from runner.checkpoint_lease import (
    Lease,
    LeaseBusy,
    LeaseError,
    LeaseLost,
    LeaseTiming,
)
from runner.checkpoint_lock import CheckpointBusy, CheckpointLocks
from runner.object_paths import parse_object_uri
from runner.s3_client import s3_client
from runner_devtools.object_store import LocalBucket, local_object_store

SHORT = LeaseTiming(lease_seconds=4.0, heartbeat_seconds=1.0)
# a renewal every second, and 29 s before a late heartbeat counts as lost: on a machine whose
# two cores run four test workers, 3 s went by without one (the pytest worker then ended)
RENEWING = LeaseTiming(lease_seconds=30.0, heartbeat_seconds=1.0)
WAIT = 60.0  # generous: the machine is shared


class Remote:
    """A checkpoint root on the store, as runner.storage.RemotePath gives it."""

    def __init__(self, uri: str) -> None:
        self.uri = uri


@pytest.fixture
def root(s3: LocalBucket) -> str:
    return s3.uri("checkpoints", uuid.uuid4().hex[:8])


def lease_of(s3: LocalBucket, root: str, **kwargs: object) -> Lease:
    """A lease on ``orders.lock`` under ``root``. A lost lease is left for the test to see in
    ``lease.lost``: the product's ``on_lost`` ends the process, here the pytest worker."""
    location = parse_object_uri(root).child("orders.lock")
    defaults = {"timing": SHORT, "on_lost": lambda message: None}
    return Lease(location, s3.settings, **{**defaults, **kwargs})  # type: ignore[arg-type]


def stored(s3: LocalBucket, lease: Lease) -> dict[str, object] | None:
    client = s3_client(s3.settings)
    try:
        body = client.get_object(Bucket=lease.location.bucket, Key=lease.location.key)["Body"]
    except client.exceptions.NoSuchKey:
        return None
    found: dict[str, object] = json.loads(body.read())
    return found


def recorder() -> tuple[list[str], threading.Event, Callable[[str], None]]:
    lines: list[str] = []
    happened = threading.Event()

    def on_lost(message: str) -> None:
        lines.append(message)
        happened.set()

    return lines, happened, on_lost


def test_second_taker_is_refused_naming_the_holder(s3: LocalBucket, root: str) -> None:
    with CheckpointLocks(s3.spark_conf) as first:
        assert first.acquire(Remote(root), "orders") is None
        with pytest.raises(CheckpointBusy) as busy:
            CheckpointLocks(s3.spark_conf).acquire(Remote(root), "orders")
        holder = stored(s3, first._leases[0])
        assert holder is not None
        assert f"model 'orders' is already running on checkpoint {root}/orders: " in str(busy.value)
        assert f"pid {holder['pid']} on {holder['host']}" in str(busy.value)
        assert "stop that run first" in str(busy.value)
        # another model's lease on the same root is independent
        with CheckpointLocks(s3.spark_conf) as other:
            other.acquire(Remote(root), "customers")
    # released: deleted, so the next run takes it at once
    assert stored(s3, lease_of(s3, root)) is None
    with CheckpointLocks(s3.spark_conf) as again:
        assert again.acquire(Remote(root), "orders") is None


def test_heartbeat_renews_with_the_etag_it_wrote(s3: LocalBucket, root: str) -> None:
    lease = lease_of(s3, root, timing=RENEWING)
    lease.take()
    try:
        first = stored(s3, lease)
        assert first is not None
        deadline = time.monotonic() + WAIT
        while (now := stored(s3, lease)) == first and time.monotonic() < deadline:
            time.sleep(0.2)
        assert now is not None and float(now["expires"]) > float(first["expires"])  # type: ignore[arg-type]
        assert now["since"] == first["since"] and now["pid"] == first["pid"]
        assert lease.lost is None
    finally:
        lease.release()
    assert stored(s3, lease) is None


def test_an_expired_lease_is_taken_over_and_its_old_holder_stops(
    s3: LocalBucket, root: str
) -> None:
    lines, lost, on_lost = recorder()
    dead = lease_of(s3, root, on_lost=on_lost)
    dead.take()
    later = time.time() + SHORT.lease_seconds + 1  # the clock of a process started after expiry
    taker = lease_of(s3, root, clock=lambda: later)
    with pytest.raises(LeaseBusy):  # not expired by the holder's own reckoning
        lease_of(s3, root).take()
    note = taker.take()
    try:
        assert note is not None and "took over the expired lease" in note
        assert f"pid {dead._holder.pid}" in note  # type: ignore[union-attr]
        # the old holder's next renewal is refused (If-Match on an etag that is gone): it stops
        assert lost.wait(WAIT), "the old holder never learned that it lost its lease"
        assert "was taken over or deleted by another process" in lines[0]
        assert "stopping now" in lines[0]
        with pytest.raises(LeaseLost):
            dead.renew()
        dead.release()  # must not delete the new holder's lease
        assert stored(s3, taker) is not None
    finally:
        taker.release()


def test_of_two_takers_of_one_stale_lease_only_one_wins(s3: LocalBucket, root: str) -> None:
    stale = lease_of(s3, root)
    stale.take()
    stale._stop.set()  # its holder is gone: no more renewals, no release
    found = stale._read()
    assert found is not None
    etag = found[0]
    one, two = lease_of(s3, root), lease_of(s3, root)
    assert [one._replace(etag), two._replace(etag)] == [True, False]


def test_an_unreachable_store_stops_the_run_before_the_lease_expires(tmp_path: Path) -> None:
    lines, lost, on_lost = recorder()
    with local_object_store("outage", tmp_path / "store") as bucket:
        lease = lease_of(bucket, bucket.uri("checkpoints"), on_lost=on_lost)
        lease.take()
        bucket.store.stop()
        assert lost.wait(WAIT), "the run was not stopped when its lease could not be renewed"
        stopped_at = time.time()
    assert lines[0].startswith(f"could not renew the lease {lease.uri} for 3 s")
    assert "stopping now so that this run writes nothing more without it" in lines[0]
    # stopped while the lease still held: one heartbeat before it would expire
    assert lease._holder is not None and stopped_at < lease._holder.expires


def test_a_write_whose_answer_was_lost_is_recognised_as_ours(s3: LocalBucket, root: str) -> None:
    """botocore retries a request whose answer it lost; if the first attempt landed, the retry
    fails its condition. The lease reads the object back: its own write (its token) is not a
    lost lease; anyone else's is."""
    lease = lease_of(s3, root, timing=LeaseTiming())  # no heartbeat during the test
    lease.take()
    try:
        client = s3_client(s3.settings)
        for writer, ours in ((lease, True), (lease_of(s3, root), False)):
            landed = writer._new_holder()
            client.put_object(
                Bucket=lease.location.bucket, Key=lease.location.key, Body=landed.body()
            )
            writer._attempted = landed  # what the attempt whose answer was lost wrote
            found = lease._read()
            assert found is not None
            assert lease._wrote(*found) is ours
            if ours:
                assert lease._etag == found[0]
        with pytest.raises(LeaseLost):  # the object is someone else's now
            lease.renew()
    finally:
        lease.release()


def test_a_missing_bucket_is_an_error_not_a_busy_lease(s3: LocalBucket) -> None:
    lease = lease_of(s3, "s3a://no-such-bucket/checkpoints")
    with pytest.raises(LeaseError, match="cannot write the lease object s3a://no-such-bucket/"):
        lease.take()
