"""``readStream`` from a StreamSpec, and the trigger to run it with."""

from __future__ import annotations

from typing import Any

from pyspark.sql import DataFrame, SparkSession

from runner.errors import ConfigError
from runner.spark.sources import files, kafka
from runner.spark.sources.source_batch import BatchSourceContext, SourceBatch, passed_through
from runner.specs.stream import (
    DELTA_FORMAT,
    FILE_FORMATS,
    KAFKA_FORMAT,
    LINE_FORMATS,
    StreamSpec,
    TriggerSpec,
)
from runner.storage import Location


def read_stream(
    spark: SparkSession, stream: StreamSpec, ref_location: Location | None = None
) -> DataFrame:
    """The streaming DataFrame a model's micro-batches come from.

    ``ref_location`` is where the target of the model a ``ref:`` stream reads lives.
    """
    if stream.format == KAFKA_FORMAT:
        return kafka.read_kafka_stream(spark, stream)
    reader = spark.readStream.format(stream.format).options(**stream.reader_options())
    if stream.format in FILE_FORMATS:
        assert stream.path is not None and stream.schema is not None  # validated at load
        if not stream.path.exists():
            stream.path.mkdir(parents=True, exist_ok=True)  # files arrive later
        if stream.format in LINE_FORMATS:
            return files.read_file_stream(spark, stream)
        return reader.schema(stream.schema).load(str(stream.path))
    if stream.format == DELTA_FORMAT:
        if stream.change_data_feed:
            reader = reader.option("readChangeFeed", "true")
        if stream.table:
            return reader.table(stream.table)
        location = ref_location if stream.ref else stream.path
        return reader.load(str(location))
    return reader.load()


def prepare_batch(
    stream: StreamSpec, batch_df: DataFrame, context: BatchSourceContext
) -> SourceBatch:
    """Source-specific work on a micro-batch before the model sees it; the caller owns the
    result and calls its ``release`` once, when the batch is done or has failed.

    Parquet, rate and Delta sources pass the batch through (persisted as it is). Kafka parses
    values with the stream's schema (runner/spark/sources/kafka.py); JSON and CSV files are
    split into lines and parsed (runner/spark/sources/files.py); both count what they read,
    rejected and (files) rescued, and keep the rejected input for ``quarantine_rejected``.
    """
    if stream.format == KAFKA_FORMAT:
        return kafka.prepare_kafka_batch(stream, batch_df)
    if stream.format in LINE_FORMATS and files.is_file_batch(batch_df):
        return files.prepare_file_batch(stream, batch_df, context.project_root)
    return passed_through(batch_df)


def trigger_kwargs(trigger: TriggerSpec, stream: StreamSpec | None = None) -> dict[str, Any]:
    """Keyword arguments for ``DataStreamWriter.trigger``."""
    if trigger.kind == "available_now":
        return {"availableNow": True}
    if trigger.kind == "processing_time":
        return {"processingTime": trigger.interval}
    raise ConfigError(
        f"unknown trigger kind {trigger.kind!r}",
        file=stream.file if stream else None,
        line=stream.line if stream else None,
    )
