"""A real Kafka broker for the Kafka tests: started once for this folder's tests (which run one
after another on one pytest-xdist worker: tests/conftest.py's PROCESS_GROUPS) in a temporary
directory, and stopped and removed after the last of them, not left idle until the session
ends. Spark: tests/conftest.py's ``spark``."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from runner_devtools.kafka.broker import local_broker


@pytest.fixture(scope="package")
def broker() -> Iterator[str]:
    """Bootstrap servers of a single-node KRaft broker on a free port."""
    with local_broker() as bootstrap_servers:
        yield bootstrap_servers
