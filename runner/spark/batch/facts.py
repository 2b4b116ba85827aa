"""Measure a micro-batch before its model is rendered: columns, target columns, prune ranges.

The templating layer renders these as literals (``runner.templating.batch_facts``); this module
only asks Spark. One aggregation over the (persisted) batch covers every ``prune_by`` column.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pyspark.errors import AnalysisException
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import (
    BinaryType,
    BooleanType,
    DataType,
    MapType,
    StructType,
    TimestampNTZType,
    TimestampType,
)

from runner.errors import ConfigError
from runner.specs.model import ModelSpec
from runner.templating.batch_facts import MAX_IN_VALUES, BatchFacts, ColumnStats, TypedLiteral

_TEXT_TYPES: dict[type[DataType], str] = {
    TimestampType: "TIMESTAMP",
    TimestampNTZType: "TIMESTAMP_NTZ",
}
_UNPRUNABLE = (BinaryType, BooleanType, MapType, StructType)


def prepare_batch_facts(session: SparkSession, model: ModelSpec, batch_df: DataFrame) -> BatchFacts:
    """Measure the batch for rendering: its columns, the target's columns as they are now
    (after any ALTER of the schema-drift policy), the ``prune_by`` ranges. Reads only."""
    return BatchFacts(
        columns=tuple(batch_df.columns),
        target_columns=existing_columns(session, model.target_table),
        stats=column_stats(batch_df, model),
    )


# What Spark says when a table (or its schema) is not there.
_MISSING = frozenset({"TABLE_OR_VIEW_NOT_FOUND", "SCHEMA_NOT_FOUND"})


def existing_columns(session: SparkSession, table: str) -> tuple[str, ...] | None:
    """``table``'s columns, or None while it does not exist (a target before its first
    batch's CREATE). The table is looked up once: asking the catalog first whether it exists
    would load a Delta table's newest version twice a batch."""
    try:
        return tuple(session.table(table).columns)
    except AnalysisException as exc:
        if exc.getCondition() in _MISSING:
            return None
        raise


def column_stats(batch_df: DataFrame, model: ModelSpec) -> dict[str, ColumnStats]:
    """min / max / NULL count of each ``prune_by`` column (and distinct values of partition
    columns, up to MAX_IN_VALUES + 1 of them)."""
    columns = model.config.prune_by
    if not columns:
        return {}
    types = {f.name.lower(): f.dataType for f in batch_df.schema.fields}
    partitions = {c.lower() for c in model.config.partitioned_by}
    aggregates = []
    for index, column in enumerate(columns):
        kind = types.get(column.lower())
        if kind is None or isinstance(kind, _UNPRUNABLE):
            raise ConfigError(
                f"prune_by column '{column}' "
                + ("is not in the batch" if kind is None else f"has type {kind.simpleString()}")
                + ": it cannot bound a MERGE",
                file=model.file,
                line=model.config_line_of("prune_by"),
            )
        value = F.col(column)
        if type(kind) in _TEXT_TYPES:
            value = value.cast("string")  # the session time zone's text, not Python's
        aggregates += [
            F.min(value).alias(f"min{index}"),
            F.max(value).alias(f"max{index}"),
            F.count_if(F.col(column).isNull()).alias(f"nulls{index}"),
        ]
        if column.lower() in partitions:
            distinct = F.array_sort(F.collect_set(value))
            aggregates.append(F.slice(distinct, 1, MAX_IN_VALUES + 1).alias(f"values{index}"))
    row = batch_df.agg(*aggregates).collect()[0].asDict()
    stats = {}
    for index, column in enumerate(columns):
        wrap = _wrapper(types[column.lower()])
        values = row.get(f"values{index}")
        stats[column] = ColumnStats(
            min=wrap(row[f"min{index}"]),
            max=wrap(row[f"max{index}"]),
            null_count=int(row[f"nulls{index}"]),
            values=None if values is None else tuple(wrap(v) for v in values),
        )
    return stats


def _wrapper(kind: DataType) -> Callable[[Any], Any]:
    """Wraps a measured value of a column of type ``kind``: timestamps (measured as text) as
    TypedLiteral, other values as they are."""
    type_name = _TEXT_TYPES.get(type(kind))
    if type_name is None:
        return lambda value: value
    return lambda value: None if value is None else TypedLiteral(type_name, value)
