"""One SparkSession (real Spark, real Delta) for every test in this folder.

Commands run in-process through typer's CliRunner reuse it: build_session's getOrCreate joins
the running session instead of starting a second JVM.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from pyspark.sql import SparkSession

from runner.config import TargetSpec
from runner.spark.session import build_session


@pytest.fixture(scope="session")
def spark(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SparkSession]:
    root = tmp_path_factory.mktemp("spark")
    target = TargetSpec(
        name="test",
        master="local[2]",
        warehouse=root / "warehouse",
        checkpoint_root=root / "checkpoints",
        spark_conf={"spark.sql.shuffle.partitions": "2", "spark.default.parallelism": "2"},
    )
    session = build_session(target, app_name="runner-tests")
    yield session
    session.stop()


def rows_of(spark: SparkSession, table: str, order_by: str) -> list[tuple]:
    return [tuple(row) for row in spark.table(table).orderBy(order_by).collect()]


@pytest.fixture
def cli(spark: SparkSession):
    """Invoke the runner CLI in-process (on the shared session); returns the typer Result."""
    from typer.testing import CliRunner

    from runner.cli.app import app

    runner = CliRunner()

    def invoke(*args: str | Path):
        return runner.invoke(app, [str(a) for a in args], catch_exceptions=False)

    return invoke
