"""Helpers for the tests on real Spark and Delta. The one SparkSession of the suite is the
``spark`` fixture in tests/conftest.py.

Commands run in-process through typer's CliRunner reuse it: build_session's getOrCreate joins
the running session instead of starting a second JVM.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from pyspark.sql import SparkSession


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
