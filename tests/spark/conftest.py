"""Helpers for the tests on real Spark and Delta. The one SparkSession of the suite is the
``spark`` fixture in tests/conftest.py, and ``cli`` there runs commands in-process on it."""

from __future__ import annotations

from pyspark.sql import SparkSession


def rows_of(spark: SparkSession, table: str, order_by: str) -> list[tuple]:
    return [tuple(row) for row in spark.table(table).orderBy(order_by).collect()]
