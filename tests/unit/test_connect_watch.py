"""The Spark Connect client's retry policy (runner/spark/session/connect_watch.py): one line
when the server stops answering, retries bounded by the target's connect_retry_seconds, none
once a stop is requested, and the error the runner then exits with. No server is needed: the
policy sees only the gRPC errors a call raised."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import grpc  # type: ignore[import-untyped]  # grpcio ships no type hints
import pytest

from runner.errors import ConfigError
from runner.project import load
from runner.spark.session.connect_watch import ServerWatch, server_gone
from runner.specs.target import DEFAULT_CONNECT_RETRY_SECONDS
from tests.unit.test_targets import with_targets

ADDRESS = "sc://127.0.0.1:15002"


class CallError(grpc.RpcError):
    """What a gRPC call raises: an RpcError that is also a Call (code and details)."""

    def __init__(self, code: grpc.StatusCode, details: str) -> None:
        self._code, self._details = code, details

    def code(self) -> grpc.StatusCode:
        return self._code

    def details(self) -> str:
        return self._details

    def trailing_metadata(self) -> tuple[tuple[str, str], ...]:
        return ()  # no status details: nothing asks for a retry delay


REFUSED = CallError(grpc.StatusCode.UNAVAILABLE, "failed to connect to all addresses")


def watch(budget: float = 60.0) -> tuple[ServerWatch, list[str]]:
    said: list[str] = []
    return ServerWatch(ADDRESS, budget, threading.Event(), said.append), said


def test_an_outage_is_told_once_with_the_address_and_retried_within_the_budget() -> None:
    policy, said = watch()
    assert all(policy.can_retry(REFUSED) for _ in range(5))
    assert len(said) == 1
    assert ADDRESS in said[0] and "retrying for up to 60 s" in said[0]
    assert "failed to connect to all addresses" in said[0]
    assert policy.to_state().next_attempt() == 1000  # one retry a second, not 4-fold growth


def test_the_budget_is_one_clock_for_every_call_of_the_outage() -> None:
    policy, _ = watch(budget=30)
    assert policy.can_retry(REFUSED)
    assert policy.down_since is not None
    policy.down_since -= 30  # the outage began 30 s ago
    assert not policy.can_retry(REFUSED)
    assert policy.gave_up
    gone = server_gone(policy, "connect", RuntimeError("UNAVAILABLE"))
    assert gone is not None
    assert str(gone).startswith(f"the Spark Connect server at {ADDRESS} did not answer for 30 s")
    assert "connect_retry_seconds of target 'connect'" in str(gone)
    assert "resumes from its checkpoint" in str(gone)


def test_nothing_is_retried_once_a_stop_is_requested() -> None:
    policy, said = watch()
    assert policy.can_retry(REFUSED)
    policy.stop.set()
    assert not policy.can_retry(REFUSED)
    assert len(said) == 1
    gone = server_gone(policy, "connect", RuntimeError("UNAVAILABLE"))
    assert gone is not None and gone.message.startswith("stopped: the Spark Connect server")


def test_errors_pyspark_does_not_retry_are_not_retried_nor_told() -> None:
    policy, said = watch()
    assert not policy.can_retry(CallError(grpc.StatusCode.INVALID_ARGUMENT, "bad plan"))
    assert not policy.can_retry(ValueError("not a gRPC error"))
    assert said == []
    assert server_gone(policy, "connect", ValueError("not a gRPC error")) is None


def test_a_restarted_server_is_told_as_such() -> None:
    policy, _ = watch()
    gone = server_gone(policy, "connect", RuntimeError("[INVALID_HANDLE.SESSION_CHANGED] ..."))
    assert gone is not None and "restarted: the streaming queries it ran ended" in gone.message


def test_outages_further_apart_than_the_gap_are_two_outages() -> None:
    policy, said = watch()
    policy.can_retry(REFUSED)
    assert policy.last_failure is not None
    policy.last_failure = time.monotonic() - 60  # the server answered for a minute since
    policy.can_retry(REFUSED)
    assert len(said) == 2


def test_connect_retry_seconds_is_read_from_the_target(tmp_path: Path) -> None:
    root = with_targets(
        tmp_path,
        "  connect:\n    remote: sc://127.0.0.1:15002\n    connect_retry_seconds: 120\n"
        "  plain:\n    remote: sc://127.0.0.1:15002\n",
    )
    assert load(root, "connect").target.connect_retry_seconds == 120
    assert load(root, "plain").target.connect_retry_seconds == DEFAULT_CONNECT_RETRY_SECONDS


@pytest.mark.parametrize(
    ("target", "message"),
    [
        (
            "  bad:\n    master: local[2]\n    connect_retry_seconds: 5\n",
            "sets connect_retry_seconds without remote",
        ),
        (
            "  bad:\n    remote: sc://h:1\n    connect_retry_seconds: 0\n",
            "connect_retry_seconds must be a number of seconds above 0, got 0",
        ),
        (
            "  bad:\n    remote: sc://h:1\n    connect_retry_seconds: soon\n",
            "connect_retry_seconds must be a number of seconds above 0, got 'soon'",
        ),
    ],
)
def test_a_bad_connect_retry_seconds_names_file_and_line(
    tmp_path: Path, target: str, message: str
) -> None:
    root = with_targets(tmp_path, target)
    with pytest.raises(ConfigError, match=message) as caught:
        load(root, "bad")
    lines = (root / "project.yml").read_text().splitlines()
    assert caught.value.line is not None
    assert lines[caught.value.line - 1].strip().startswith("connect_retry_seconds:")
