"""One run per model when the checkpoints are on S3: a lease object renewed by a heartbeat.

Object storage has no lock that dies with a process, so the run holds a *lease*: the object
``<checkpoints>/<model>.lock`` (the key the local lock file has) holding who holds it and until
when. Every change is a conditional write, so two processes can never both believe they won:

- **take**: PUT with ``If-None-Match: *`` (created only if absent);
- **renew**: a heartbeat thread PUTs a later expiry with ``If-Match: <etag it last wrote>``;
- **take over** an expired lease (its holder was killed): PUT with ``If-Match: <the stale
  etag>``, so of two processes taking over at once only one succeeds;
- **release**: DELETE with ``If-Match: <etag>`` (never someone else's lease).

When the heartbeat cannot renew (store unreachable, lease taken over) the run must not write
again: ``Lease.stop_deadline`` (one heartbeat before its expiry) passes, or a renewal is refused,
and ``on_lost`` runs: by default it prints one line and ends the process at once, its Spark JVM
with it (runner/processes.py). A SIGKILLed holder's lease expires ``lease_seconds`` after its
last renewal and the next run takes it over. Guarantees and limits: docs/guarantees.md.

Pure Python with boto3 (the ``s3`` extra): taken before Spark starts.
"""

from __future__ import annotations

import json
import os
import socket
import sys
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from runner.errors import ConfigError, RunnerError
from runner.object_paths import ObjectLocation, S3Settings
from runner.s3_client import http_status as _status

LEASE_SECONDS_ENV = "RUNNER_LOCK_LEASE_SECONDS"
HEARTBEAT_SECONDS_ENV = "RUNNER_LOCK_HEARTBEAT_SECONDS"
DEFAULT_LEASE_SECONDS = 60.0
# A renewal every third of the lease: two may fail (a slow store, a pause) before it is lost.
HEARTBEAT_FRACTION = 1 / 3


@dataclass(frozen=True)
class LeaseTiming:
    """How long a lease lasts without renewal, and how often it is renewed."""

    lease_seconds: float = DEFAULT_LEASE_SECONDS
    heartbeat_seconds: float = DEFAULT_LEASE_SECONDS * HEARTBEAT_FRACTION

    @classmethod
    def from_env(cls, env: dict[str, str] | None = None) -> LeaseTiming:
        """``$RUNNER_LOCK_LEASE_SECONDS`` (default 60) and ``$RUNNER_LOCK_HEARTBEAT_SECONDS``
        (default a third of the lease; it must be less than half of it)."""
        env = dict(os.environ) if env is None else env
        lease = _seconds(env, LEASE_SECONDS_ENV, DEFAULT_LEASE_SECONDS)
        heartbeat = _seconds(env, HEARTBEAT_SECONDS_ENV, lease * HEARTBEAT_FRACTION)
        if heartbeat * 2 > lease:
            raise ConfigError(
                f"{HEARTBEAT_SECONDS_ENV}={heartbeat:g} must be less than half of "
                f"{LEASE_SECONDS_ENV}={lease:g}: a run stops one heartbeat before its lease "
                "expires, so it needs time for at least one more renewal",
                hint=f"unset {HEARTBEAT_SECONDS_ENV} (a third of the lease) or lower it",
            )
        return cls(lease, heartbeat)


def _seconds(env: dict[str, str], name: str, default: float) -> float:
    text = env.get(name, "").strip()
    if not text:
        return default
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if value <= 0:
        raise ConfigError(
            f"{name}={text!r} is not a number of seconds above 0", hint=f"e.g. {name}=60"
        )
    return value


class LeaseBusy(RunnerError):
    """Another process holds an unexpired lease on the model's checkpoint."""


class LeaseError(RunnerError):
    """The object store failed a request about the lease."""


class LeaseLost(LeaseError):
    """A renewal was refused: another process took the lease over, or deleted it."""


@dataclass
class Holder:
    """What a lease object says: who holds it, since when, until when (UTC epoch seconds)."""

    pid: int
    host: str
    since: str
    expires: float
    token: str

    @classmethod
    def parse(cls, body: bytes) -> Holder | None:
        try:
            found = json.loads(body)
            return cls(
                int(found["pid"]),
                str(found["host"]),
                str(found["since"]),
                float(found["expires"]),
                str(found["token"]),
            )
        except (ValueError, KeyError, TypeError):
            return None

    def described(self) -> str:
        return f"pid {self.pid} on {self.host} since {self.since}"

    def body(self) -> bytes:
        expires = datetime.fromtimestamp(self.expires, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
        return json.dumps(
            {
                "pid": self.pid,
                "host": self.host,
                "since": self.since,
                "expires": self.expires,
                "expires_at": expires,  # for a person reading the object
                "token": self.token,  # a fresh value each write: each write a new etag
            }
        ).encode()


def stop_process(message: str) -> None:
    """``on_lost``'s default: print ``message`` and end this process and its Spark JVM now. A
    graceful stop would finish the batch in flight (tens of seconds) without the lease; a kill
    is what the runner recovers from exactly (the checkpoint replays the batch)."""
    from runner.processes import kill_children

    print(f"error: {message}", file=sys.stderr, flush=True)
    kill_children(os.getpid())
    os._exit(1)


@dataclass
class Lease:
    """The lease on ``location`` (an ``s3a://`` key) for this process."""

    location: ObjectLocation
    settings: S3Settings
    timing: LeaseTiming = field(default_factory=LeaseTiming.from_env)
    on_lost: Callable[[str], None] = stop_process
    clock: Callable[[], float] = time.time
    _client: Any = field(default=None, repr=False)
    _etag: str | None = field(default=None, repr=False)
    _holder: Holder | None = field(default=None, repr=False)
    _stop: threading.Event = field(default_factory=threading.Event, repr=False)
    _threads: list[threading.Thread] = field(default_factory=list, repr=False)
    _lost: str | None = field(default=None, repr=False)
    _last_error: str = field(default="no renewal succeeded", repr=False)
    _losing: threading.Lock = field(default_factory=threading.Lock, repr=False)
    _attempted: Holder | None = field(default=None, repr=False)

    @property
    def client(self) -> Any:
        if self._client is None:
            from runner.s3_client import s3_client

            self._client = s3_client(self.settings)
        return self._client

    @property
    def uri(self) -> str:
        return self.location.uri

    @property
    def lost(self) -> str | None:
        """Why the lease was lost, once it was (then ``on_lost`` has run)."""
        return self._lost

    # -- take ------------------------------------------------------------------------------

    def take(self) -> str | None:
        """Take the lease, then renew it in the background until ``release``. Returns a line
        to print when it took over a dead holder's expired lease; raises LeaseBusy naming a
        live holder."""
        note = None
        for _attempt in range(3):  # a lease deleted or changed between two requests: again
            if self._create():
                break
            found = self._read()
            if found is None:
                continue  # released between our create and our read
            etag, holder = found
            now = self.clock()
            if self._wrote(etag, holder):
                break  # our create landed, but its answer was lost and the retry refused
            if holder is None:
                raise LeaseBusy(
                    f"the lease object {self.uri} cannot be read (not the runner's JSON)",
                    hint="if no run of this model is active, delete that object",
                )
            if holder.expires > now:
                raise LeaseBusy(
                    f"{holder.described()}, lease renewed until "
                    f"{_utc(holder.expires)} (in {holder.expires - now:.0f} s)"
                )
            if self._replace(etag):
                note = (
                    f"took over the expired lease {self.uri} of {holder.described()} "
                    f"(expired {now - holder.expires:.0f} s ago: that run ended without "
                    "releasing it)"
                )
                break
            # someone else took it over (or its holder renewed) between our read and our write
        else:
            raise LeaseBusy(f"the lease {self.uri} changed hands while this run tried to take it")
        self._start_heartbeat()
        return note

    def _new_holder(self, since: str | None = None) -> Holder:
        return Holder(
            os.getpid(),
            socket.gethostname(),
            since or datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%S UTC"),
            self.clock() + self.timing.lease_seconds,
            uuid.uuid4().hex,
        )

    def _create(self) -> bool:
        holder = self._new_holder()
        return self._put(holder, IfNoneMatch="*")

    def _replace(self, etag: str) -> bool:
        return self._put(self._new_holder(), IfMatch=etag)

    def _put(self, holder: Holder, **condition: str) -> bool:
        """One conditional PUT; False when its condition does not hold (412, or 409: a
        concurrent conditional write won, or 404: the object is gone)."""
        self._attempted = holder
        try:
            response = self.client.put_object(
                Bucket=self.location.bucket,
                Key=self.location.key,
                Body=holder.body(),
                ContentType="application/json",
                **condition,
            )
        except Exception as exc:
            if _condition_failed(exc):
                return False
            raise self._failed("write", exc) from exc
        self._etag = response["ETag"]
        self._holder = holder
        return True

    def _wrote(self, etag: str, holder: Holder | None) -> bool:
        """Whether the object is the one this process last tried to write (botocore retries a
        request whose answer was lost; the retry then fails the condition its first attempt
        changed). If so, it is ours: keep its etag."""
        if holder is None or self._attempted is None or holder.token != self._attempted.token:
            return False
        self._etag, self._holder = etag, holder
        return True

    def _read(self) -> tuple[str, Holder | None] | None:
        try:
            response = self.client.get_object(Bucket=self.location.bucket, Key=self.location.key)
            body = response["Body"].read()
        except Exception as exc:
            if _status(exc) == 404 and not _no_bucket(exc):
                return None
            raise self._failed("read", exc) from exc
        return response["ETag"], Holder.parse(body)

    def _failed(self, what: str, exc: Exception) -> LeaseError:
        return LeaseError(
            f"cannot {what} the lease object {self.uri} on {self.settings.endpoint or 'S3'}: {exc}",
            hint="check that the object store is reachable and the target's "
            "spark.hadoop.fs.s3a.* settings (endpoint, credentials) are right",
        )

    # -- renew -----------------------------------------------------------------------------

    @property
    def stop_deadline(self) -> float:
        """When the run must have stopped unless renewed: one heartbeat before expiry."""
        assert self._holder is not None
        return self._holder.expires - self.timing.heartbeat_seconds

    def renew(self) -> None:
        """Push the expiry ``lease_seconds`` ahead, on the condition that the object is still
        the one this process wrote. Raises LeaseLost when refused, LeaseError when failed."""
        assert self._holder is not None and self._etag is not None
        renewed = self._new_holder(since=self._holder.since)
        if self._put(renewed, IfMatch=self._etag):
            return
        found = self._read()
        if found is None or not self._wrote(*found):
            raise LeaseLost(f"the lease {self.uri} was taken over or deleted by another process")

    def _start_heartbeat(self) -> None:
        for target, name in ((self._heartbeat, "renew"), (self._watchdog, "watchdog")):
            thread = threading.Thread(target=target, name=f"lease-{name}", daemon=True)
            thread.start()
            self._threads.append(thread)

    def _heartbeat(self) -> None:
        while not self._stop.wait(self.timing.heartbeat_seconds):
            try:
                self.renew()
            except LeaseLost as exc:
                self._lose(exc.message)
                return
            except LeaseError as exc:
                # unreachable: tried again at the next beat; the watchdog ends the run if none
                # succeeds before the deadline
                self._last_error = exc.message

    def _watchdog(self) -> None:
        while not self._stop.wait(max(0.0, min(1.0, self.stop_deadline - self.clock()))):
            if self.clock() >= self.stop_deadline:
                self._lose(
                    f"could not renew the lease {self.uri} for "
                    f"{self.timing.lease_seconds - self.timing.heartbeat_seconds:.0f} s "
                    f"({self._last_error})"
                )
                return

    def _lose(self, reason: str) -> None:
        with self._losing:  # the heartbeat and the watchdog may both find it lost: once
            if self._lost is not None or self._stop.is_set():
                return
            self._lost = reason
            self._stop.set()
        self.on_lost(
            f"{reason}; stopping now so that this run writes nothing more without it. Start "
            "the run again when the store is reachable: it resumes from its checkpoint"
        )

    # -- release ---------------------------------------------------------------------------

    def release(self) -> None:
        """Stop renewing and delete the lease if it is still this process's."""
        self._stop.set()
        for thread in self._threads:
            if thread is not threading.current_thread():
                thread.join(timeout=30)
        self._threads.clear()
        if self._lost is not None or self._etag is None:
            return
        try:
            self.client.delete_object(
                Bucket=self.location.bucket, Key=self.location.key, IfMatch=self._etag
            )
        except Exception as exc:
            if not _condition_failed(exc):
                print(
                    f"warning: could not delete the lease {self.uri} ({exc}); it expires "
                    f"by itself at {_utc(self._holder.expires if self._holder else 0)}",
                    file=sys.stderr,
                )
        self._etag = None


def _condition_failed(exc: Exception) -> bool:
    """412 (the condition does not hold), 409 (a concurrent conditional write), 404 (If-Match
    on an object that is gone; a missing bucket is an error)."""
    return _status(exc) in (412, 409, 404) and not _no_bucket(exc)


def _no_bucket(exc: Exception) -> bool:
    response = getattr(exc, "response", None)
    return isinstance(response, dict) and response.get("Error", {}).get("Code") == "NoSuchBucket"


def _utc(epoch: float) -> str:
    return datetime.fromtimestamp(epoch, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
