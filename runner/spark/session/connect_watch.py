"""A Spark Connect client that knows when its server is gone, and stops when asked.

pyspark's own retry policy (``DefaultPolicy`` in ``pyspark/sql/connect/client/retries.py``)
retries a call the server does not answer 15 times, its wait growing 4-fold from 50 ms to a
60 s cap: over ten minutes of silence after the server dies, while Ctrl-C / SIGTERM only set
the runner's stop flag and the retry sleeps on. ``ServerWatch`` replaces it on every client
the runner opens (the root session and each model's cloned session, see ``watch_client``):

- the first failed call of an outage prints one line naming the server's address;
- a failed call is retried every ``RETRY_INTERVAL_SECONDS`` until ``connect_retry_seconds``
  (the target's setting) after the outage began: one clock for every call of the process, so
  a later call does not start a budget of its own; then the call raises and the runner exits;
- once a stop is requested (Ctrl-C, SIGTERM), nothing is retried: the call fails at once, so
  the stop takes at most one retry interval more than the call itself.

Which errors are retried is pyspark's choice (server unavailable, a preempted cursor, a server
asking for a delay): ``can_retry`` asks the default policy first.

This module imports pyspark's Connect client (pandas, gRPC: ~0.4 s): the runner imports it
inside the functions that hold a Connect session, never at a module's top (``kind.py``).
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable

import grpc  # type: ignore[import-untyped]  # grpcio ships no type hints
from pyspark.sql import SparkSession
from pyspark.sql.connect.client.retries import DefaultPolicy, RetryPolicyState
from pyspark.sql.connect.session import SparkSession as ConnectSession

from runner.error_text import first_line
from runner.errors import RunnerError

RETRY_INTERVAL_SECONDS = 1.0
# Failures further apart than this belong to two outages: within one, a call fails every
# retry interval, and the runner's watch loop calls the server every half second.
OUTAGE_GAP_SECONDS = 10.0


class ServerWatch(DefaultPolicy):
    """pyspark's retry policy with a time budget per outage, a line when one begins, and no
    retry once ``stop`` is set. One instance serves every client of one target."""

    def __init__(
        self,
        address: str,
        budget_seconds: float,
        stop: threading.Event | None = None,
        say: Callable[[str], None] | None = None,
    ) -> None:
        super().__init__(
            max_retries=None,  # the budget, in can_retry, bounds the retries
            initial_backoff=int(RETRY_INTERVAL_SECONDS * 1000),
            max_backoff=int(RETRY_INTERVAL_SECONDS * 1000),
            backoff_multiplier=1.0,
            jitter=0,
        )
        self.address = address
        self.budget_seconds = budget_seconds
        self.stop = stop or threading.Event()
        self.say = say or _to_stderr
        self.down_since: float | None = None  # monotonic time the current outage began
        self.last_failure: float | None = None
        self.gave_up = False  # an outage outlasted the budget
        self._lock = threading.Lock()  # the watch loop and progress threads call at once

    def can_retry(self, e: BaseException) -> bool:
        if not super().can_retry(e):
            return False
        with self._lock:
            now = time.monotonic()
            new_outage = self.last_failure is None or now - self.last_failure > OUTAGE_GAP_SECONDS
            self.last_failure = now
            if new_outage or self.down_since is None:
                self.down_since = now
                if _unavailable(e):
                    self.say(
                        f"the Spark Connect server at {self.address} does not answer "
                        f"({_reason(e)}); retrying for up to {self.budget_seconds:g} s "
                        "(connect_retry_seconds); Ctrl-C or SIGTERM stops now"
                    )
            if self.stop.is_set():
                return False
            if now - self.down_since >= self.budget_seconds:
                self.gave_up = True
                return False
            return True

    def to_state(self) -> RetryPolicyState:
        return RetryPolicyState(self)

    @property
    def outage(self) -> bool:
        """The server failed to answer recently (within ``OUTAGE_GAP_SECONDS``)."""
        last = self.last_failure
        return last is not None and time.monotonic() - last <= OUTAGE_GAP_SECONDS


def _unavailable(e: BaseException) -> bool:
    return isinstance(e, grpc.RpcError) and e.code() == grpc.StatusCode.UNAVAILABLE


def _reason(e: BaseException) -> str:
    details = e.details() if isinstance(e, grpc.Call) else None
    return first_line(details or e)[:120]


def _to_stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def watch_client(spark: SparkSession, watch: ServerWatch) -> None:
    """Make ``watch`` the retry policy of ``spark``'s Connect client (a cloned session's
    client starts with pyspark's default again)."""
    spark.client.set_retry_policies([watch])


def watch_of(spark: SparkSession) -> ServerWatch | None:
    """The ServerWatch of a Connect session, None for any other session (a classic session's
    ``client`` raises rather than answering None)."""
    if not isinstance(spark, ConnectSession):
        return None
    policies = spark.client.get_retry_policies()
    return next((p for p in policies if isinstance(p, ServerWatch)), None)


class ServerGone(RunnerError):
    """The Spark Connect server stopped answering, or came back without the runner's queries."""

    while_running = True  # exit code 1, as for a failed run


# What a restarted server answers a client of the server it replaced.
_SESSION_LOST = ("SESSION_CHANGED", "SESSION_NOT_FOUND", "SESSION_CLOSED")


def server_gone(watch: ServerWatch | None, target: str, error: BaseException) -> ServerGone | None:
    """The error to report when ``error`` ended a command because the server behind ``watch``
    went away; None when it is something else (a model's own error, say)."""
    if watch is None or isinstance(error, RunnerError):
        return None
    text = str(error)
    lost = any(mark in text for mark in _SESSION_LOST)
    if not (watch.outage or watch.gave_up or lost):
        return None
    hint = (
        "start the server again (on this machine: `python -m runner_devtools.cluster restart "
        "connect`), then run the command again: each model resumes from its checkpoint, and a "
        "batch that was in flight is replayed once"
    )
    server = f"the Spark Connect server at {watch.address}"
    if watch.stop.is_set() and not lost:
        message = f"stopped: {server} does not answer"
    elif watch.gave_up:
        message = (
            f"{server} did not answer for {watch.budget_seconds:g} s (connect_retry_seconds of "
            f"target '{target}')"
        )
    else:
        message = f"{server} restarted: the streaming queries it ran ended with it"
    return ServerGone(message, hint=hint)
