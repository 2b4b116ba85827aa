"""A real Kafka broker (one per test session) for the Kafka tests. The broker runs in a
temporary directory and is stopped and removed afterwards. Spark: tests/conftest.py's ``spark``."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from runner.kafka.broker import local_broker


@pytest.fixture(scope="session")
def broker() -> Iterator[str]:
    """Bootstrap servers of a single-node KRaft broker on a free port."""
    with local_broker() as bootstrap_servers:
        yield bootstrap_servers
