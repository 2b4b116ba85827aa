"""How long the S3 lease of a run lasts and how often it is renewed: read from the environment
(runner/checkpoint_lease.py), with a clear error for a value that cannot work."""

from __future__ import annotations

import pytest

from runner.checkpoint_lease import LeaseTiming
from runner.errors import ConfigError


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        ({}, LeaseTiming(60.0, 20.0)),
        ({"RUNNER_LOCK_LEASE_SECONDS": "9"}, LeaseTiming(9.0, 3.0)),
        (
            {"RUNNER_LOCK_LEASE_SECONDS": "9", "RUNNER_LOCK_HEARTBEAT_SECONDS": "2"},
            LeaseTiming(9, 2),
        ),
    ],
)
def test_timing_from_the_environment(env: dict[str, str], expected: LeaseTiming) -> None:
    assert LeaseTiming.from_env(env) == expected


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"RUNNER_LOCK_LEASE_SECONDS": "soon"}, "RUNNER_LOCK_LEASE_SECONDS='soon' is not a number"),
        ({"RUNNER_LOCK_LEASE_SECONDS": "0"}, "is not a number of seconds above 0"),
        (
            {"RUNNER_LOCK_LEASE_SECONDS": "10", "RUNNER_LOCK_HEARTBEAT_SECONDS": "6"},
            "RUNNER_LOCK_HEARTBEAT_SECONDS=6 must be less than half of "
            "RUNNER_LOCK_LEASE_SECONDS=10",
        ),
    ],
)
def test_timing_that_cannot_work_is_refused(env: dict[str, str], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        LeaseTiming.from_env(env)
