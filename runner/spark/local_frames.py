"""Small DataFrames of rows made in Python (an event-log row, a table of file offsets, a unit
test's given rows), built in the JVM.

On a classic session ``createDataFrame(rows)`` ships the rows through a Python RDD: the first
job that reads them starts a Python worker to unpickle them (an event-log append's write job
took 0.15 to 0.19 s that way, 0.08 s from a literal; the whole append 219 ms against 172 on
average: bench/results/event-log-append.md). Here the rows become one JSON literal that
``from_json`` parses in the JVM, with the declared schema: no Python worker. Past
``LITERAL_LIMIT`` characters (a large seed) the rows go the ``createDataFrame`` way, which
splits them into partitions instead of carrying them in the plan.

A timestamp is written as the UTC instant ``createDataFrame`` stores (pyspark's own conversion:
a naive ``datetime`` is read in the Python process's local time zone).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from datetime import UTC, date, datetime, timedelta
from typing import Any, cast

from pyspark.sql import DataFrame, Row, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import (
    ArrayType,
    BooleanType,
    DataType,
    DateType,
    DoubleType,
    FloatType,
    IntegerType,
    LongType,
    ShortType,
    StringType,
    StructType,
    TimestampNTZType,
    TimestampType,
    _parse_datatype_string,
)

# Characters of JSON beyond which the rows are not sent as one literal in the plan.
LITERAL_LIMIT = 1_000_000

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_PLAIN = (BooleanType, DoubleType, FloatType, IntegerType, LongType, ShortType, StringType)


def local_frame(
    session: SparkSession,
    rows: Sequence[Sequence[Any] | Mapping[str, Any]],
    schema: StructType | str,
) -> DataFrame:
    """``rows`` (tuples or Rows in ``schema``'s order, or mappings by field name) as a
    DataFrame of ``schema`` (a StructType, or its columns in DDL: ``"id BIGINT, name STRING"``)."""
    schema = _struct(schema)
    text = json.dumps([json_row(row, schema) for row in rows], allow_nan=True)
    if len(text) > LITERAL_LIMIT:
        return session.createDataFrame(list(rows), schema)
    return _parsed(session, text, schema)


def json_rows_frame(
    session: SparkSession, rows: Sequence[Mapping[str, Any]], schema: StructType | str
) -> DataFrame:
    """Rows already in the JSON form ``json_row`` gives (read back from files) as a DataFrame
    of ``schema``: one literal, or past LITERAL_LIMIT one JSON text per row, parsed in the
    JVM all the same."""
    struct = _struct(schema)
    text = json.dumps(list(rows), allow_nan=True)
    if len(text) <= LITERAL_LIMIT:
        return _parsed(session, text, struct)
    texts = session.createDataFrame(
        [(json.dumps(row, allow_nan=True),) for row in rows], "value STRING"
    )
    return texts.select(F.from_json("value", struct).alias("row")).select("row.*")


def json_row(row: Sequence[Any] | Mapping[str, Any], schema: StructType | str) -> dict[str, Any]:
    """``row`` (as ``local_frame`` takes it) as the JSON object ``from_json`` reads back as
    ``schema``: what can be kept in a file and given to ``json_rows_frame`` later."""
    value = _json_value(row, _struct(schema))
    assert isinstance(value, dict)
    return value


def _struct(schema: StructType | str) -> StructType:
    if isinstance(schema, str):
        return cast(StructType, _parse_datatype_string(schema))  # as the sources parse theirs
    return schema


def _parsed(session: SparkSession, text: str, schema: StructType) -> DataFrame:
    parsed = F.from_json(F.lit(text), ArrayType(schema, containsNull=False))
    return session.range(1).select(F.inline(parsed))


def _json_value(value: Any, data_type: DataType) -> Any:
    """``value`` as the JSON ``from_json`` reads back as ``data_type``."""
    if value is None:
        return None
    if isinstance(data_type, StructType):
        if isinstance(value, Row) and hasattr(value, "__fields__"):
            fields = value.asDict()
        elif isinstance(value, Mapping):
            fields = dict(value)
        else:
            fields = dict(zip(data_type.names, value, strict=True))
        return {f.name: _json_value(fields.get(f.name), f.dataType) for f in data_type.fields}
    if isinstance(data_type, ArrayType):
        return [_json_value(item, data_type.elementType) for item in value]
    if isinstance(data_type, TimestampType) and isinstance(value, datetime):
        # the instant pyspark stores (a naive datetime read in local time), written in UTC
        micros = TimestampType().toInternal(value)
        return (_EPOCH + timedelta(microseconds=micros)).isoformat()
    if isinstance(data_type, TimestampNTZType | DateType) and isinstance(value, date):
        return value.isoformat()
    if isinstance(data_type, _PLAIN):
        return value
    raise TypeError(f"local_frame: no JSON form for {data_type.simpleString()}: {value!r}")
