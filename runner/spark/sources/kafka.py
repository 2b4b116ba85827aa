"""The Kafka source: ``readStream`` from a topic, and per batch, JSON values parsed with the
stream's schema and malformed records sent to a quarantine Delta table.

What a model sees
    The value's columns (``value.schema`` of the stream) plus ``kafka_key`` (STRING),
    ``kafka_topic``, ``kafka_partition``, ``kafka_offset`` and ``kafka_timestamp``.

What is malformed (checked in this order; the first that applies is the ``reason``)
    ``null value``           the record's value is null (a tombstone)
    ``invalid JSON``         the value is not JSON at all (or is empty)
    ``not a JSON object``    valid JSON, but an array, a string, a number or ``null``
    ``schema mismatch: ...`` a field is there but cannot be read as its declared type, for
                             example ``"amount": "twelve"`` for a DECIMAL, ``"updated_at":
                             "yesterday"`` for a TIMESTAMP, a number too large for its DECIMAL.
                             Detected with ``from_json`` in PERMISSIVE mode and a
                             ``_corrupt_record`` column; the reason names the fields whose raw
                             text is present but whose parsed value is null.
    ``missing required field(s): ...``  a column in ``value.required`` is absent or null.
    Spark's JSON reader coerces what it can, and such values are *not* malformed: a number
    for a STRING column ('5'), a numeric string for a DECIMAL ("12.5"), epoch seconds for a
    TIMESTAMP. Fields the schema does not declare are ignored.

Where malformed records go
    The model's quarantine table (runner/spark/sources/quarantine.py), source ``kafka``, position
    ``topic/partition@offset``, the raw value as ``raw``, and the record's topic, partition,
    offset, timestamp and key. The write is idempotent per batch, so a batch Spark replays
    after a crash does not quarantine its records twice. The good rows of the same batch go on
    to the model.
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import StringType, StructType, _parse_datatype_string

from runner.errors import ConfigError
from runner.spark.sources.columns import (
    CORRUPT_COLUMN,
    JSON_COLUMN,
    KAFKA_RECORD_COLUMNS,
    PARSED_COLUMN,
    RAW_FIELDS_COLUMN,
    REASON_COLUMN,
)
from runner.spark.sources.source_batch import SourceBatch, parsed_batch
from runner.spark.sources.typed_values import schema_mismatch, unreadable_fields
from runner.specs.kafka import KAFKA_COLUMNS, KafkaSpec
from runner.specs.stream import StreamSpec

# Every dependency but the broker: the Spark side of Kafka, as Maven coordinates.
# The token provider is pinned to 4.0.0, the newest on Maven Central as reachable here; its few
# classes (KafkaConfigUpdater, KafkaTokenUtil) are unchanged and work with Spark 4.2's source.
TOKEN_PROVIDER_VERSION = "4.0.0"


def connector_coordinates(spark_version: str) -> list[str]:
    """Maven coordinates of Spark's Kafka source for ``spark_version`` (pyspark's)."""
    return [
        f"org.apache.spark:spark-sql-kafka-0-10_2.13:{spark_version}",
        f"org.apache.spark:spark-token-provider-kafka-0-10_2.13:{TOKEN_PROVIDER_VERSION}",
    ]


def read_kafka_stream(spark: SparkSession, stream: StreamSpec) -> DataFrame:
    """``spark.readStream.format('kafka')`` with the stream's servers, topics and offsets; the
    stream's ``options`` are passed through as they are (they may add ``kafka.*`` settings)."""
    kafka = _kafka(stream)
    options = {**kafka.source_options(), **stream.reader_options()}
    return spark.readStream.format("kafka").options(**options).load()


def prepare_kafka_batch(stream: StreamSpec, batch_df: DataFrame) -> SourceBatch:
    """Parse the batch's values: the good rows, the malformed ones for the quarantine, and the
    counts (``parsed_batch``: Kafka is read once, not once per action)."""
    kafka = _kafka(stream)
    parsed = _parse(batch_df, kafka)
    names = [field.name for field in _value_schema(kafka).fields]
    good = [
        *[F.col(f"{PARSED_COLUMN}.`{name}`").alias(name) for name in names],
        *[_record(column.removeprefix("kafka_")).alias(column) for column in KAFKA_COLUMNS],
    ]
    return parsed_batch(parsed, good, _rejected(), "kafka")


# -- parsing -------------------------------------------------------------------------------


def _parse(batch_df: DataFrame, kafka: KafkaSpec) -> DataFrame:
    schema = _value_schema(kafka)
    with_corrupt = StructType([*schema.fields]).add(CORRUPT_COLUMN, StringType())
    options = {"mode": "PERMISSIVE", "columnNameOfCorruptRecord": CORRUPT_COLUMN}
    value = _record("value")
    frame = batch_df.select(
        *[
            (F.col(name).cast("string") if name in ("key", "value") else F.col(name)).alias(ours)
            for name, ours in KAFKA_RECORD_COLUMNS.items()
        ]
    ).select(
        "*",
        F.from_json(value, with_corrupt, options).alias(PARSED_COLUMN),
        # Every top-level field's raw text: tells "absent" from "present but not readable".
        F.from_json(value, "MAP<STRING, STRING>").alias(RAW_FIELDS_COLUMN),
        F.get_json_object(value, "$").alias(JSON_COLUMN),
    )
    return frame.withColumn(REASON_COLUMN, _reason(schema, kafka.required)).drop(
        RAW_FIELDS_COLUMN, JSON_COLUMN
    )


def _reason(schema: StructType, required: tuple[str, ...]) -> Column:
    """Why a record is malformed, or null when it is good."""
    value, parsed, raw = _record("value"), F.col(PARSED_COLUMN), F.col(RAW_FIELDS_COLUMN)
    fields = {f.name: parsed[f.name] for f in schema.fields}
    raw_fields = {f.name: raw[f.name] for f in schema.fields}
    unreadable = unreadable_fields(schema.fields, raw_fields, fields)
    mismatch = F.when(parsed[CORRUPT_COLUMN].isNotNull(), schema_mismatch(unreadable))
    missing = F.concat_ws(", ", *[F.when(parsed[name].isNull(), F.lit(name)) for name in required])
    return (
        F.when(value.isNull(), F.lit("null value"))
        .when(F.col(JSON_COLUMN).isNull(), F.lit("invalid JSON"))
        .when(raw.isNull() | parsed.isNull(), F.lit("not a JSON object"))
        .when(mismatch.isNotNull(), mismatch)
        .when(missing != "", F.concat(F.lit("missing required field(s): "), missing))
    )


def _rejected() -> list[Column]:
    """A malformed record in the quarantine's shape; position ``topic/partition@offset``."""
    return [
        F.format_string(
            "%s/%d@%d", _record("topic"), _record("partition"), _record("offset")
        ).alias("position"),
        _record("value").alias("raw"),
        F.col(REASON_COLUMN).alias("reason"),
        *[
            _record(name).alias(name)
            for name in ("topic", "partition", "offset", "timestamp", "key")
        ],
    ]


def _record(name: str) -> Column:
    """The Kafka record's column ``name`` (``key``, ``value``, ...) in the parsed frame."""
    return F.col(KAFKA_RECORD_COLUMNS[name])


def _value_schema(kafka: KafkaSpec) -> StructType:
    schema = _parse_datatype_string(kafka.value_schema)
    assert isinstance(schema, StructType)
    return schema


def _kafka(stream: StreamSpec) -> KafkaSpec:
    if stream.kafka is None:
        raise ConfigError(
            f"stream '{stream.name}' is not a kafka stream", file=stream.file, line=stream.line
        )
    return stream.kafka
