"""DataFrames from checked text rows, and rows back as text, so Spark does every conversion.

Values arrive as text checked by runner/specs/values.py and are CAST by Spark (in the
session's time zone, UTC by default); results are CAST to STRING for comparison. Python never
converts a timestamp through its own local time zone.
"""

from __future__ import annotations

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import StringType, StructField, StructType

from runner.specs.values import Column


def typed_frame(
    spark: SparkSession, rows: list[tuple[str | None, ...]], columns: list[Column]
) -> DataFrame:
    """``rows`` (text, in ``columns`` order) as a DataFrame of the declared types."""
    text_schema = StructType([StructField(c.name, StringType()) for c in columns])
    frame = spark.createDataFrame(rows, text_schema)
    return frame.select(*[F.col(_quoted(c.name)).cast(c.type).alias(c.name) for c in columns])


def text_rows(frame: DataFrame, columns: list[str]) -> list[tuple[str | None, ...]]:
    """The values of ``columns`` in ``frame`` as text (Spark's CAST to STRING)."""
    selected = frame.select(*[F.col(_quoted(c)).cast("string").alias(c) for c in columns])
    return [tuple(row) for row in selected.collect()]


def _quoted(name: str) -> str:
    return f"`{name}`"
