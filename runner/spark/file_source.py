"""JSON-lines and CSV file sources that lose nothing: bad lines to quarantine, extra fields kept.

Each new file is read whole (Spark's ``text`` source with ``wholetext``), so every line keeps
its file and line number. Per batch, each line is then:

- good: its declared columns, typed, plus ``_rescued_data``: the raw JSON of the fields the
  schema does not declare (null when there are none), so nothing the producer sent is lost;
- malformed, with the first reason that applies, and written to the model's quarantine table
  (runner/spark/quarantine.py) with its file, line, raw text and reason:

  ``invalid JSON`` / ``not a JSON object`` (json), ``wrong number of fields: 5 of 6`` or
  ``unreadable CSV: ...`` (csv), ``schema mismatch: amount (DECIMAL(10,2))`` (a value present
  but not readable as its declared type; json as Spark's ``from_json`` reads it, csv as
  ``try_cast``).

Blank lines are skipped (Spark's JSON reader does the same). A CSV source with ``header:
true`` maps columns by the header's names (the header's line is not data); without a header,
by position. The quarantine write and the model's MERGE of the good rows both happen in the
batch, under the batch's idempotent-write identities: a replayed batch neither loses nor
duplicates either.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pyspark import StorageLevel
from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import (
    ArrayType,
    IntegerType,
    MapType,
    StringType,
    StructField,
    StructType,
    _parse_datatype_string,
)

from runner.config import RESCUED_COLUMN, StreamSpec
from runner.spark.quarantine import ensure_quarantine_table, write_quarantine
from runner.spark.source_batch import SourceBatch, SourceCounts

CORRUPT_COLUMN = "_corrupt_record"
# Options of Spark's file stream source itself; every other option is the parser's.
FILE_STREAM_OPTIONS = frozenset(
    {
        "maxFilesPerTrigger",
        "maxBytesPerTrigger",
        "latestFirst",
        "fileNameOnly",
        "maxFileAge",
        "maxCachedFiles",
        "discardCachedInputRatio",
        "cleanSource",
        "sourceArchiveDir",
        "pathGlobFilter",
        "recursiveFileLookup",
        "modifiedBefore",
        "modifiedAfter",
        "ignoreCorruptFiles",
        "ignoreMissingFiles",
    }
)
CSV_READER_OPTIONS = frozenset({"header", "sep", "delimiter", "quote", "escape", "nullValue"})
_LINE_TYPE = StructType(
    [
        StructField("line", IntegerType()),
        StructField("raw", StringType()),
        StructField("fields", MapType(StringType(), StringType())),
        StructField("extras", StringType()),
        StructField("error", StringType()),
    ]
)


def read_file_stream(spark: SparkSession, stream: StreamSpec) -> DataFrame:
    """One row per new file: ``_file`` (its path) and ``_text`` (its content)."""
    assert stream.path is not None
    options = {k: v for k, v in stream.reader_options().items() if k in FILE_STREAM_OPTIONS}
    frame = (
        spark.readStream.format("text")
        .option("wholetext", "true")
        .options(**options)
        .load(str(stream.path))
    )
    return frame.select(F.col("_metadata.file_path").alias("_file"), F.col("value").alias("_text"))


def declared_schema(stream: StreamSpec) -> StructType:
    assert stream.schema is not None
    schema = _parse_datatype_string(stream.schema)
    assert isinstance(schema, StructType)
    return schema


def prepare_file_batch(
    stream: StreamSpec,
    batch_df: DataFrame,
    batch_id: int,
    model_name: str,
    warehouse: Path,
    query_id: str | None,
    project_root: Path | None = None,
    check_rows: Callable[[DataFrame], DataFrame] | None = None,
) -> SourceBatch:
    """Split the batch's files into lines, quarantine the malformed ones, return the good rows
    (declared columns, then ``_rescued_data``) with the counts. ``check_rows`` sees (and may
    extend) the good rows before the quarantine write, so an error it raises leaves the
    quarantine untouched. The typed lines are persisted until the caller releases the returned
    SourceBatch; if this fails, they are released here."""
    schema = declared_schema(stream)
    lines = _lines(stream, schema, batch_df, project_root)
    typed = _typed(stream, schema, lines).persist(StorageLevel.MEMORY_AND_DISK)
    try:
        counts = typed.agg(
            F.count(F.lit(1)).alias("read"),
            F.count("_reason").alias("bad"),
            F.count_if(F.col("_reason").isNull() & F.col(RESCUED_COLUMN).isNotNull()).alias(
                "rescued"
            ),
        ).collect()[0]
        good = typed.where(F.col("_reason").isNull()).select(
            *[F.col(f"`{f.name}`") for f in schema.fields], F.col(RESCUED_COLUMN)
        )
        if check_rows is not None:
            good = check_rows(good)
        ensure_quarantine_table(batch_df.sparkSession, model_name, warehouse)
        if counts["bad"]:
            write_quarantine(
                typed.where(F.col("_reason").isNotNull()).select(
                    F.concat(F.col("_position"), F.lit(":"), F.col("_line")).alias("position"),
                    F.col("_raw").alias("raw"),
                    F.col("_reason").alias("reason"),
                    F.col("_file").alias("file"),
                    F.col("_line").alias("line"),
                ),
                model_name=model_name,
                batch_id=batch_id,
                source="json" if stream.format == "json" else "csv",
                warehouse=warehouse,
                query_id=query_id,
            )
    except BaseException:
        typed.unpersist()
        raise
    read = SourceCounts(int(counts["read"]), int(counts["bad"]), int(counts["rescued"]))
    return SourceBatch(good, read, typed.unpersist, counted=True)


# -- splitting files into lines (Python: exact line numbers, CSV quoting, raw JSON) ---------


def _lines(
    stream: StreamSpec, schema: StructType, batch_df: DataFrame, project_root: Path | None
) -> DataFrame:
    names = [f.name for f in schema.fields]
    if stream.format == "json":
        split = F.udf(lambda text: _json_lines(text, names), ArrayType(_LINE_TYPE), useArrow=False)
    else:
        options = {k: v for k, v in stream.reader_options().items() if k in CSV_READER_OPTIONS}
        split = F.udf(
            lambda text: _csv_lines(text, names, options), ArrayType(_LINE_TYPE), useArrow=False
        )
    root = f"file:{project_root}/" if project_root is not None else None
    file = F.regexp_replace(F.col("_file"), "^file://", "file:")
    position = F.regexp_replace(file, "^file:", "")
    if root is not None:
        position = F.when(file.startswith(root), F.substring(file, len(root) + 1, 1 << 30))
        position = position.otherwise(F.regexp_replace(file, "^file:", ""))
    return batch_df.select(
        F.regexp_replace(file, "^file:", "").alias("_file"),
        position.alias("_position"),
        F.explode(split(F.col("_text"))).alias("_l"),
    ).select(
        "_file",
        "_position",
        F.col("_l.line").alias("_line"),
        F.col("_l.raw").alias("_raw"),
        F.col("_l.fields").alias("_fields"),
        F.col("_l.extras").alias(RESCUED_COLUMN),
        F.col("_l.error").alias("_error"),
    )


def _json_lines(text: str | None, names: list[str]) -> list[dict[str, Any]]:
    declared = {n.lower() for n in names}
    out: list[dict[str, Any]] = []
    for number, line in enumerate((text or "").splitlines(), start=1):
        if not line.strip():
            continue
        row: dict[str, Any] = {"line": number, "raw": line, "fields": None}
        try:
            value = json.loads(line)
        except ValueError:
            out.append({**row, "error": "invalid JSON"})
            continue
        if not isinstance(value, dict):
            out.append({**row, "error": "not a JSON object"})
            continue
        extras = {k: v for k, v in value.items() if k.lower() not in declared}
        out.append({**row, "extras": json.dumps(extras) if extras else None})
    return out


def _csv_lines(text: str | None, names: list[str], options: dict[str, str]) -> list[dict[str, Any]]:
    sep = options.get("sep", options.get("delimiter", ","))
    quote = options.get("quote", '"')
    escape = options.get("escape", "\\")
    null_value = options.get("nullValue", "")
    header = options.get("header", "false").lower() == "true"
    reader = csv.reader(
        io.StringIO(text or "", newline=""),
        delimiter=sep,
        quotechar=quote or None,
        escapechar=escape or None,
        doublequote=True,
        strict=True,
    )
    out: list[dict[str, Any]] = []
    columns = names
    last_line = 0
    while True:
        try:
            values = next(reader)
        except StopIteration:
            break
        except csv.Error as exc:
            raw = _raw_lines(text, last_line + 1, reader.line_num)
            out.append({"line": last_line + 1, "raw": raw, "error": f"unreadable CSV: {exc}"})
            last_line = reader.line_num
            continue
        first, last_line = last_line + 1, reader.line_num
        if not values or values == [""]:
            continue
        if header and columns is names:
            columns = values
            continue
        raw = _raw_lines(text, first, last_line)
        row: dict[str, Any] = {"line": first, "raw": raw}
        if len(values) != len(columns):
            out.append({**row, "error": f"wrong number of fields: {len(values)} of {len(columns)}"})
            continue
        declared = {n.lower() for n in names}
        fields = {
            c.lower(): (None if v == null_value else v)
            for c, v in zip(columns, values, strict=True)
        }
        extras = {c: v for c, v in zip(columns, values, strict=True) if c.lower() not in declared}
        out.append(
            {
                **row,
                "fields": {n: fields.get(n.lower()) for n in names},
                "extras": json.dumps(extras) if extras else None,
            }
        )
    return out


def _raw_lines(text: str | None, first: int, last: int) -> str:
    lines = (text or "").splitlines()
    return "\n".join(lines[first - 1 : max(last, first)]) if lines else ""


# -- typing ----------------------------------------------------------------------------------


def _typed(stream: StreamSpec, schema: StructType, lines: DataFrame) -> DataFrame:
    """Declared columns typed, and ``_reason`` (null when the line is good)."""
    if stream.format == "json":
        parse_options = {
            k: v
            for k, v in stream.reader_options().items()
            if k not in FILE_STREAM_OPTIONS and k not in CSV_READER_OPTIONS
        }
        with_corrupt = StructType([*schema.fields]).add(CORRUPT_COLUMN, StringType())
        options = {
            **parse_options,
            "mode": "PERMISSIVE",
            "columnNameOfCorruptRecord": CORRUPT_COLUMN,
        }
        good_json = F.col("_error").isNull()
        frame = lines.select(
            "*",
            F.when(good_json, F.from_json(F.col("_raw"), with_corrupt, options)).alias("_parsed"),
            F.when(good_json, F.from_json(F.col("_raw"), "MAP<STRING, STRING>")).alias("_rawf"),
        )
        raw_of = {f.name: F.col("_rawf")[f.name] for f in schema.fields}
        value_of = {f.name: F.col("_parsed")[f.name] for f in schema.fields}
        corrupt: Column = F.col("_parsed")[CORRUPT_COLUMN].isNotNull()
    else:
        frame = lines
        raw_of = {f.name: F.col("_fields")[f.name] for f in schema.fields}
        value_of = {f.name: raw_of[f.name].try_cast(f.dataType) for f in schema.fields}
        corrupt = F.lit(False)
        for f in schema.fields:
            corrupt = corrupt | (raw_of[f.name].isNotNull() & value_of[f.name].isNull())
    unreadable = F.concat_ws(
        ", ",
        *[
            F.when(
                raw_of[f.name].isNotNull() & value_of[f.name].isNull(),
                F.lit(f"{f.name} ({f.dataType.simpleString().upper()})"),
            )
            for f in schema.fields
        ],
    )
    mismatch = F.concat(
        F.lit("schema mismatch: "),
        F.when(unreadable != "", unreadable).otherwise(F.lit("not readable as the schema")),
    )
    reason = F.when(F.col("_error").isNotNull(), F.col("_error")).when(corrupt, mismatch)
    return frame.select(
        "_file",
        "_position",
        "_line",
        "_raw",
        *[value_of[f.name].cast(f.dataType).alias(f.name) for f in schema.fields],
        RESCUED_COLUMN,
        reason.alias("_reason"),
    )
