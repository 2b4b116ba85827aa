"""DataFrames from checked text rows, and rows back as text, so Spark does every conversion.

Values arrive as text checked by runner/specs/values.py and are CAST by Spark (in the
session's time zone, UTC by default); results are CAST to STRING for comparison. Python never
converts a timestamp through its own local time zone.
"""

from __future__ import annotations

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import StringType, StructField, StructType

from runner.spark.local_frames import local_frame
from runner.specs.values import Column


def typed_frame(
    spark: SparkSession, rows: list[tuple[str | None, ...]], columns: list[Column]
) -> DataFrame:
    """``rows`` (text, in ``columns`` order) as a DataFrame of the declared types."""
    text_schema = StructType([StructField(c.name, StringType()) for c in columns])
    frame = local_frame(spark, rows, text_schema)
    return frame.select(*[F.col(_quoted(c.name)).cast(c.type).alias(c.name) for c in columns])


def text_rows_of_both(
    first: DataFrame, second: DataFrame, columns: list[str]
) -> tuple[list[tuple[str | None, ...]], list[tuple[str | None, ...]]]:
    """The values of ``columns`` in each frame as text (Spark's CAST to STRING), read in one
    Spark job instead of two (on a server each job is a round trip and a scheduling delay)."""
    side = "__runner_side"
    both = (
        _as_text(first, columns)
        .withColumn(side, F.lit(0))
        .unionByName(_as_text(second, columns).withColumn(side, F.lit(1)))
    )
    rows = both.collect()
    return (
        [tuple(row[:-1]) for row in rows if row[-1] == 0],
        [tuple(row[:-1]) for row in rows if row[-1] == 1],
    )


def _as_text(frame: DataFrame, columns: list[str]) -> DataFrame:
    return frame.select(*[F.col(_quoted(c)).cast("string").alias(c) for c in columns])


def _quoted(name: str) -> str:
    return f"`{name}`"
