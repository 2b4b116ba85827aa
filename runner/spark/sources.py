"""``readStream`` from a StreamSpec, and the trigger to run it with."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pyspark.sql import DataFrame, SparkSession

from runner.config import FILE_FORMATS, StreamSpec, TriggerSpec
from runner.errors import ConfigError


@dataclass(frozen=True)
class BatchSourceContext:
    """What source-side batch work may need to know about the run."""

    model_name: str
    warehouse: Path


def read_stream(spark: SparkSession, stream: StreamSpec) -> DataFrame:
    """The streaming DataFrame a model's micro-batches come from."""
    reader = spark.readStream.format(stream.format).options(**stream.options)
    if stream.format in FILE_FORMATS:
        assert stream.path is not None and stream.schema is not None  # validated at load
        if not stream.path.exists():
            stream.path.mkdir(parents=True, exist_ok=True)  # files arrive later
        return reader.schema(stream.schema).load(str(stream.path))
    return reader.load()


def prepare_batch(
    stream: StreamSpec, batch_df: DataFrame, batch_id: int, context: BatchSourceContext
) -> DataFrame:
    """Source-specific work on a micro-batch before the model sees it.

    File, rate and Delta sources pass the batch through. (Kafka parses values here and sends
    malformed records to the quarantine table.)
    """
    return batch_df


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
