"""A real Kafka broker (one per test session) and a Delta-enabled SparkSession for the Kafka
tests. The broker runs in a temporary directory and is stopped and removed afterwards."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from runner.kafka.broker import local_broker


@pytest.fixture(scope="session")
def broker() -> Iterator[str]:
    """Bootstrap servers of a single-node KRaft broker on a free port."""
    with local_broker() as bootstrap_servers:
        yield bootstrap_servers


@pytest.fixture(scope="session")
def spark(tmp_path_factory: pytest.TempPathFactory):
    """Real Spark and Delta (no Kafka connector needed: these tests build Kafka-shaped batches
    themselves or read the tables a `runner run` subprocess wrote). Joins a running session."""
    from runner.config import TargetSpec
    from runner.spark.session import build_session

    root: Path = tmp_path_factory.mktemp("kafka-spark")
    target = TargetSpec(
        name="test",
        master="local[2]",
        warehouse=root / "warehouse",
        checkpoint_root=root / "checkpoints",
        spark_conf={"spark.sql.shuffle.partitions": "2", "spark.default.parallelism": "2"},
    )
    session = build_session(target, app_name="runner-kafka-tests")
    yield session
    session.stop()
