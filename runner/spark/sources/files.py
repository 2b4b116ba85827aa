"""JSON-lines and CSV file sources that lose nothing: bad lines to quarantine, extra fields kept.

Files are read line by line by Spark's ``text`` source (Hadoop's line reader, lines end at
``\n``; a final ``\r`` is dropped, so ``\r\n`` works): a file of any size is split into
partitions and read in bounded memory, gzip included (one partition per ``.gz`` file). A
stream's lines are typed in its own plan, analyzed once (``read_file_stream``; a CSV source
with a header, whose typing needs each file's header, types each batch's lines itself). One
Spark job per batch types every line in the JVM, persists the result and counts it; when some
lines are malformed, a second one counts the cached lines per split of a file, which gives each
of them its number in its file (``_numbered``). Per batch, each line is then:

- good: its declared columns, typed, plus ``_rescued_data``: the raw JSON of the fields the
  schema does not declare (null when there are none), so nothing the producer sent is lost;
- malformed, with the first reason that applies, and written to the model's quarantine table
  (runner/spark/sources/quarantine.py) with its file, line, raw text and reason:

  ``invalid UTF-8`` (the line's bytes; unless the stream declares another ``encoding``),
  ``invalid JSON`` / ``not a JSON object`` / ``duplicate key: id`` (json),
  ``CSV header has no column(s): amount``, ``wrong number of fields: 5 of 6`` or
  ``unreadable CSV: ...`` (csv), ``schema mismatch: amount (DECIMAL(10,2))`` (a value present
  but not readable as its declared type without loss: runner/spark/sources/typed_values.py).

Names are matched exactly (case included): a field ``Order_ID`` is not the column
``order_id``, and is kept in ``_rescued_data``. A UTF-8 byte-order mark at the start of a line
is dropped (a file's first line, or where files were concatenated). Blank lines are skipped
(Spark's JSON reader does the same). A CSV source with ``header: true`` maps columns by the
header's names (the file's first line, not data); without a header, by position; a CSV record
is one line. The rules, with examples: docs/bad-input.md.

The quarantine write and the model's MERGE of the good rows both happen in the batch, under the
batch's idempotent-write identities: a replayed batch neither loses nor duplicates either.
"""

from __future__ import annotations

import csv
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import (
    ArrayType,
    IntegerType,
    LongType,
    StringType,
    StructField,
    StructType,
    _parse_datatype_string,
)

from runner.spark.local_frames import local_frame
from runner.spark.sources.columns import (
    BLOCK_COLUMN,
    BROKEN_COLUMN,
    CORRUPT_COLUMN,
    CSV_COLUMNS_COLUMN,
    CSV_TOKENS_COLUMN,
    EXTRA_INDEX_COLUMN,
    EXTRA_NAMES_COLUMN,
    FIELD_COUNT_COLUMN,
    FIELD_TEXT_PREFIX,
    FIELD_VALUE_PREFIX,
    FILE_COLUMN,
    FIRST_LINE_COLUMN,
    HEADER_ERROR_COLUMN,
    JSON_KEYS_COLUMN,
    JSON_STRINGS_COLUMN,
    LINE_COLUMN,
    LINE_NUMBER_COLUMN,
    LINES_BEFORE_COLUMN,
    MISFITS_COLUMN,
    ONLY_DECLARED_COLUMN,
    RAW_COLUMN,
    REASON_COLUMN,
    ROW_ID_COLUMN,
    SKIP_COLUMN,
    SPLIT_FIRST_COLUMN,
    SPLIT_HEAD_COLUMN,
    SPLIT_LINES_COLUMN,
    TEXT_COLUMN,
    VALID_COLUMN,
)
from runner.spark.sources.quarantine import SourceKind
from runner.spark.sources.source_batch import (
    Rejected,
    SourceBatch,
    SourceCounts,
    persisted_counts,
)
from runner.spark.sources.typed_values import (
    lossless_value,
    schema_mismatch,
    strings_schema,
    unreadable_fields,
)
from runner.specs.stream import RESCUED_COLUMN, StreamSpec

BOM = "\ufeff"
WHITESPACE = " \t\n\u000b\f\r"  # what a blank line may hold: Java's \s
ENCODING_OPTIONS = ("encoding", "charset")
_END = "\u0001end-of-line"  # appended to a CSV line as one more field: tells how many it had
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


def read_file_stream(spark: SparkSession, stream: StreamSpec) -> DataFrame:
    """The new files' lines, typed in the stream's own plan (``typed_lines``), or, for a CSV
    source with ``header: true``, whose typing needs each file's header, one row per line:
    ``_file`` (its path), ``_block`` (where the split it was read from starts in the file) and
    ``_line_text``. Lines end at ``\n`` only.

    Typing in the stream's plan has Spark analyze its few hundred expressions once, when the
    query starts, instead of once per batch (bench/README.md, the stream's plan typing)."""
    assert stream.path is not None
    options = {k: v for k, v in stream.reader_options().items() if k in FILE_STREAM_OPTIONS}
    frame = (
        spark.readStream.format("text")
        .option("lineSep", "\n")
        .options(**options)
        .load(str(stream.path))
    )
    lines = file_lines(frame)
    return lines if _has_header(stream) else typed_lines(stream, lines)


def file_lines(text: DataFrame) -> DataFrame:
    """The rows of Spark's ``text`` source (streaming or not) in the shape a batch of this
    source has: ``_file``, ``_block`` and ``_line_text``."""
    return text.select(
        F.col("_metadata.file_path").alias(FILE_COLUMN),
        F.col("_metadata.file_block_start").alias(BLOCK_COLUMN),
        F.col("value").alias(LINE_COLUMN),
    )


def is_file_batch(frame: DataFrame) -> bool:
    """Whether ``frame`` is a batch of this source: lines (``file_lines``) or lines typed in
    the stream's plan (``typed_lines``), not rows a model unit test gives as they are."""
    columns = set(frame.columns)
    return LINE_COLUMN in columns or {FILE_COLUMN, SKIP_COLUMN, REASON_COLUMN} <= columns


def declared_schema(stream: StreamSpec) -> StructType:
    assert stream.schema is not None
    schema = _parse_datatype_string(stream.schema)
    assert isinstance(schema, StructType)
    return schema


def prepare_file_batch(
    stream: StreamSpec, batch_df: DataFrame, project_root: Path | None = None
) -> SourceBatch:
    """Type the batch's lines (unless the stream's plan typed them: ``read_file_stream``):
    the good rows (declared columns, then ``_rescued_data``), the malformed ones for the
    quarantine, with their file and line number, and the counts.

    One Spark job reads the files, types every line, persists the result and counts it
    (``persisted_counts``). A batch with malformed lines runs one more job, on the cache, for
    the numbers that give each of them its number in its file (``_numbered``). A CSV source
    with ``header: true`` runs one more small job first, for each file's header."""
    schema = declared_schema(stream)
    api = type(batch_df).__module__
    width = _declared_width(stream, schema)
    if _has_header(stream):
        row_id = F.monotonically_increasing_id().alias(ROW_ID_COLUMN)
        lines, width = _with_headers(stream, schema, batch_df, row_id)
        carried = [c for c in lines.columns if c != LINE_COLUMN]
        typed = _apply_typing(
            lines, carried, _line_typing(stream, schema, width, project_root, api)
        )
    else:
        # lines typed in the stream's plan (read_file_stream), or lines to type here; either
        # way their row ids are numbered here (typed_lines)
        lines = typed_lines(stream, batch_df) if LINE_COLUMN in batch_df.columns else batch_df
        typed = lines.withColumn(ROW_ID_COLUMN, F.monotonically_increasing_id())
    typing = _line_typing(stream, schema, width, project_root, api)
    totals = persisted_counts(typed, typing.measures)
    counts = SourceCounts(*(int(totals[k]) for k in ("read", "bad", "rescued")))
    rows = typed.where(typing.good_lines).select(*typing.good)
    source: SourceKind = "json" if stream.format == "json" else "csv"
    rejected = None
    if counts.rows_quarantined:  # no line to number otherwise: no job, no join
        rejected = _numbered(typed, typed.where(typing.bad_lines)).select(*typing.rejected)
    return SourceBatch(
        rows, counts, typed.unpersist, counted=True, rejected=Rejected(rejected, source)
    )


def typed_lines(stream: StreamSpec, lines: DataFrame) -> DataFrame:
    """``lines`` (``file_lines``' shape, streaming or not) typed, for a source whose layout
    does not depend on the files (JSON, CSV without a header): the frame
    ``prepare_file_batch`` persists once it has numbered the rows."""
    schema = declared_schema(stream)
    width = _declared_width(stream, schema)
    # the columns that type a line do not depend on the project (only the quarantine's do)
    typing = _line_typing(stream, schema, width, None, type(lines).__module__)
    # Spark refuses monotonically_increasing_id in a streaming plan: the lines carry a null row
    # id, which prepare_file_batch fills in on the batch (whose partitions are the stream's
    # splits, so the ids are consecutive within a split, as _numbered needs)
    row_id = F.lit(None).cast(LongType()).alias(ROW_ID_COLUMN)
    return _apply_typing(lines, [FILE_COLUMN, BLOCK_COLUMN, row_id, *typing.layout], typing)


def _apply_typing(
    lines: DataFrame, carried: Sequence[str | Column], typing: _LineTyping
) -> DataFrame:
    """The lines' own columns (and their file's layout) and their text decoded, in one
    projection; then each step of the typing (``_typed``) in a projection of its own; then the
    typed frame's columns."""
    frame = lines.select(*carried, *typing.decoded)
    for step in typing.steps:
        frame = frame.select("*", *step)
    return frame.select(*typing.typed)


def _declared_width(stream: StreamSpec, schema: StructType) -> int:
    """The widest row of a source whose layout is the declared one: a CSV file without a
    header holds the declared columns by position; JSON has no width."""
    return len(_layout(stream, schema, None).columns or [])


@dataclass(frozen=True)
class _LineTyping:
    """The columns that turn a batch's lines into typed rows, counts and quarantine rows, in
    the order ``prepare_file_batch`` applies them. They depend on the stream, the widest CSV
    row and the project, never on the batch's data, so they are built once and reused for
    every batch: building them is some hundreds of calls into Spark, a good part of a small
    batch's time."""

    layout: list[Column]  # a CSV file's columns when they are the declared ones (``_layout``)
    decoded: list[Column]  # _valid, _text (``_decoded``)
    steps: list[list[Column]]  # parsed, the fields' text, values, misfits, reason (``_typed``)
    typed: list[Column]  # the persisted frame's columns
    measures: list[Column]  # the batch's counts, taken in the job that persists
    good_lines: Column
    good: list[Column]  # what the model reads
    bad_lines: Column
    rejected: list[Column]  # the quarantine's shape, from the numbered bad lines


# Built _LineTyping by what they depend on; a handful per process (one per stream and width).
_TYPINGS: dict[tuple[object, ...], _LineTyping] = {}
_MAX_TYPINGS = 64


def _line_typing(
    stream: StreamSpec, schema: StructType, width: int, project_root: Path | None, api: str
) -> _LineTyping:
    """The stream's _LineTyping, built on first use. ``api`` is the module of the batch's
    DataFrame class: Spark Connect's columns and classic Spark's are not interchangeable."""
    options = stream.reader_options()
    key = (api, stream.format, stream.schema, tuple(sorted(options.items())), width, project_root)
    typing = _TYPINGS.get(key)
    if typing is None:
        if len(_TYPINGS) >= _MAX_TYPINGS:
            _TYPINGS.clear()
        typing = _TYPINGS[key] = _build_line_typing(stream, schema, width, project_root)
    return typing


def _build_line_typing(
    stream: StreamSpec, schema: StructType, width: int, project_root: Path | None
) -> _LineTyping:
    steps, typed = _typed(stream, schema, width)
    skipped, reason = F.col(SKIP_COLUMN), F.col(REASON_COLUMN)
    layout = []
    if stream.format == "csv" and not _has_header(stream):
        layout = [
            F.lit(_layout(stream, schema, None).columns).alias(CSV_COLUMNS_COLUMN),
            F.lit(None).cast(StringType()).alias(HEADER_ERROR_COLUMN),
            F.lit([]).cast(ArrayType(StringType())).alias(EXTRA_NAMES_COLUMN),
            F.lit([]).cast(ArrayType(IntegerType())).alias(EXTRA_INDEX_COLUMN),
        ]
    return _LineTyping(
        layout=layout,
        decoded=_decoded(stream),
        steps=steps,
        typed=typed,
        measures=[
            F.count_if(~skipped).alias("read"),
            F.count_if(~skipped & reason.isNotNull()).alias("bad"),
            F.count_if(~skipped & reason.isNull() & F.col(RESCUED_COLUMN).isNotNull()).alias(
                "rescued"
            ),
        ],
        good_lines=~skipped & reason.isNull(),
        good=[*[F.col(f"`{f.name}`") for f in schema.fields], F.col(RESCUED_COLUMN)],
        bad_lines=~skipped & reason.isNotNull(),
        rejected=[
            F.concat(
                _position(F.col(FILE_COLUMN), project_root), F.lit(":"), F.col(LINE_NUMBER_COLUMN)
            ).alias("position"),
            F.col(RAW_COLUMN).alias("raw"),
            F.col(REASON_COLUMN).alias("reason"),
            _local_path(F.col(FILE_COLUMN)).alias("file"),
            F.col(LINE_NUMBER_COLUMN).alias("line"),
        ],
    )


# -- numbering lines (JVM: split-aware, bounded memory) ------------------------------------


@dataclass(frozen=True)
class _FileLayout:
    """What the batch's lines need to know about their file: for CSV, the header's columns
    (or the declared ones), what is wrong with the header, and the undeclared columns."""

    columns: list[str] | None = None
    header_error: str | None = None
    extra_names: list[str] | None = None
    extra_index: list[int] | None = None


_OFFSETS_SCHEMA = StructType(
    [
        StructField(FILE_COLUMN, StringType()),
        StructField(BLOCK_COLUMN, LongType()),
        StructField(SPLIT_FIRST_COLUMN, LongType()),
        StructField(LINES_BEFORE_COLUMN, LongType()),
    ]
)
_HEADERS_SCHEMA = StructType(
    [
        StructField(FILE_COLUMN, StringType()),
        StructField(SPLIT_FIRST_COLUMN, LongType()),
        StructField(CSV_COLUMNS_COLUMN, ArrayType(StringType())),
        StructField(HEADER_ERROR_COLUMN, StringType()),
        StructField(EXTRA_NAMES_COLUMN, ArrayType(StringType())),
        StructField(EXTRA_INDEX_COLUMN, ArrayType(IntegerType())),
    ]
)


def _numbered(typed: DataFrame, lines: DataFrame) -> DataFrame:
    """``lines`` (rows of the persisted batch ``typed``) with their 1-based number in their file.

    Spark splits a large file into several partitions (``spark.sql.files.maxPartitionBytes``);
    a partition's rows keep their order, and so do the rows of one split. So the number of a
    line is the number of lines in the earlier splits of its file plus its place in its own
    split, found from ``monotonically_increasing_id`` (consecutive within a partition). The
    per-split counts are taken from the cache, so the ids are the cached ones; the table of
    offsets is small and broadcast."""
    splits = (
        typed.groupBy(FILE_COLUMN, BLOCK_COLUMN)
        .agg(
            F.min(ROW_ID_COLUMN).alias(SPLIT_FIRST_COLUMN),
            F.count(F.lit(1)).alias(SPLIT_LINES_COLUMN),
        )
        .collect()
    )
    before: dict[str, int] = {}
    table = []
    for row in sorted(splits, key=lambda r: (r[FILE_COLUMN], r[BLOCK_COLUMN])):
        count = before.get(row[FILE_COLUMN], 0)
        before[row[FILE_COLUMN]] = count + int(row[SPLIT_LINES_COLUMN])
        table.append((row[FILE_COLUMN], row[BLOCK_COLUMN], row[SPLIT_FIRST_COLUMN], count))
    offsets = local_frame(lines.sparkSession, table, _OFFSETS_SCHEMA)
    line = F.col(LINES_BEFORE_COLUMN) + F.col(ROW_ID_COLUMN) - F.col(SPLIT_FIRST_COLUMN) + 1
    return lines.join(F.broadcast(offsets), [FILE_COLUMN, BLOCK_COLUMN]).select(
        "*", line.alias(LINE_NUMBER_COLUMN)
    )


def _has_header(stream: StreamSpec) -> bool:
    """Whether the stream's files start with a CSV header line."""
    header = _csv_options(stream).get("header", "false").lower() == "true"
    return stream.format == "csv" and header


def _with_headers(
    stream: StreamSpec, schema: StructType, batch_df: DataFrame, row_id: Column
) -> tuple[DataFrame, int]:
    """For a CSV source with ``header: true``: the batch's lines with their file's layout
    (``_FileLayout``) and ``_first_line`` (true on a file's header line), and the widest row
    the files' headers allow. One small job keeps, for each file, its first split's smallest
    row id and that row's text."""
    raw = batch_df.select(FILE_COLUMN, BLOCK_COLUMN, row_id, LINE_COLUMN)
    heads = (
        raw.where(F.col(BLOCK_COLUMN) == 0)
        .groupBy(FILE_COLUMN)
        .agg(
            F.min(ROW_ID_COLUMN).alias(SPLIT_FIRST_COLUMN),
            F.min_by(LINE_COLUMN, ROW_ID_COLUMN).alias(SPLIT_HEAD_COLUMN),
        )
        .collect()
    )
    layouts = {row[FILE_COLUMN]: _layout(stream, schema, row[SPLIT_HEAD_COLUMN]) for row in heads}
    table = [
        (
            row[FILE_COLUMN],
            row[SPLIT_FIRST_COLUMN],
            layouts[row[FILE_COLUMN]].columns,
            layouts[row[FILE_COLUMN]].header_error,
            layouts[row[FILE_COLUMN]].extra_names,
            layouts[row[FILE_COLUMN]].extra_index,
        )
        for row in heads
    ]
    files = local_frame(raw.sparkSession, table, _HEADERS_SCHEMA)
    first = (F.col(BLOCK_COLUMN) == 0) & (F.col(ROW_ID_COLUMN) == F.col(SPLIT_FIRST_COLUMN))
    frame = raw.join(F.broadcast(files), [FILE_COLUMN], "left").select(
        *raw.columns,
        first.alias(FIRST_LINE_COLUMN),
        CSV_COLUMNS_COLUMN,
        HEADER_ERROR_COLUMN,
        EXTRA_NAMES_COLUMN,
        EXTRA_INDEX_COLUMN,
    )
    width = max((len(layout.columns or []) for layout in layouts.values()), default=0)
    return frame, width


def _local_path(file: Column) -> Column:
    """A local file's path without Spark's ``file:`` scheme."""
    return F.regexp_replace(file, "^file:(//)?", "")


def _position(file: Column, project_root: Path | None) -> Column:
    """The file's path relative to the project, as quarantine positions show it."""
    path = _local_path(file)
    if project_root is None:
        return path
    root = f"{project_root}/"
    return F.when(path.startswith(root), F.substring(path, len(root) + 1, 1 << 30)).otherwise(path)


def _layout(stream: StreamSpec, schema: StructType, head: str | None) -> _FileLayout:
    """A file's layout from its first line: for a CSV source with ``header: true``, the
    header's columns, checked against the declared ones (every declared column must be there,
    once); otherwise the declared columns by position. JSON files need none."""
    if stream.format != "csv":
        return _FileLayout()
    names = [f.name for f in schema.fields]
    options = _csv_options(stream)
    if options.get("header", "false").lower() != "true":
        return _FileLayout(columns=names)
    text = (head or "").removeprefix(BOM).removesuffix("\r")
    reader = csv.reader(
        [text],
        delimiter=_separator(options),
        quotechar=options.get("quote", '"') or None,
        escapechar=options.get("escape", "\\") or None,
    )
    columns = next(reader, [])
    repeated = sorted({c for c in columns if columns.count(c) > 1})
    missing = [n for n in names if n not in columns]
    error = None
    if repeated:
        error = f"CSV header repeats column(s): {', '.join(repeated)}"
    elif missing:
        error = f"CSV header has no column(s): {', '.join(missing)}"
    extras = [(c, i) for i, c in enumerate(columns, start=1) if c not in names]
    return _FileLayout(
        columns=columns,
        header_error=error,
        extra_names=[c for c, _ in extras],
        extra_index=[i for _, i in extras],
    )


def _csv_options(stream: StreamSpec) -> dict[str, str]:
    return {k: str(v) for k, v in stream.reader_options().items() if k in CSV_READER_OPTIONS}


def _separator(options: dict[str, str]) -> str:
    return options.get("sep", options.get("delimiter", ","))


def _decoded(stream: StreamSpec) -> list[Column]:
    """The columns that give each line as text: ``_valid`` (false when its bytes are not
    UTF-8; a declared ``encoding`` decodes them instead) and ``_text`` without a final
    ``\\r`` nor a leading byte-order mark."""
    value = F.col(LINE_COLUMN)
    options = stream.reader_options()
    encoding = next((str(options[k]) for k in ENCODING_OPTIONS if k in options), None)
    if encoding is not None and encoding.replace("-", "").upper() != "UTF8":
        text, valid = F.decode(value.cast("binary"), encoding), F.lit(True)
    else:
        text, valid = value, F.is_valid_utf8(value)
    # The mark is dropped at the start of any line, not only a file's first: which line is
    # first is known only after the batch's one job, and a mark inside a file comes from
    # concatenated files. A valid line is trimmed with string functions; regular expressions
    # would decode every line into a Java string and back. They trim an invalid one, whose
    # bytes the decoding turns into U+FFFD first (string functions would miscount them).
    text = F.when(valid, _trimmed(text)).otherwise(
        F.regexp_replace(F.regexp_replace(text, "\r$", ""), f"^{BOM}", "")
    )
    return [valid.alias(VALID_COLUMN), text.alias(TEXT_COLUMN)]


def _skipped(stream: StreamSpec) -> Column:
    """True for a line that is not input: blank (whitespace only, as Java's ``\\s`` has it),
    or a CSV header. It is still counted for the numbering of the lines after it.

    Only a line that is empty or starts with whitespace is trimmed whole: Spark's trim with
    a set of characters indexes every character of the line first, about 6 % of the typing
    job's CPU when every line was trimmed (bench/README.md, the typing's CPU)."""
    text, whitespace = F.col(TEXT_COLUMN), F.lit(WHITESPACE)
    blank = F.when(
        F.btrim(text.substr(1, 1), whitespace) == "", F.btrim(text, whitespace) == ""
    ).otherwise(F.lit(False))
    if _has_header(stream):
        return blank | F.coalesce(F.col(FIRST_LINE_COLUMN), F.lit(False))
    return blank


def _trimmed(text: Column) -> Column:
    """Valid UTF-8 ``text`` without a final ``\\r`` nor a leading byte-order mark."""
    text = F.when(text.endswith("\r"), text.substr(F.lit(1), F.length(text) - 1)).otherwise(text)
    return F.when(text.startswith(BOM), text.substr(F.lit(2), F.length(text))).otherwise(text)


# -- typing ----------------------------------------------------------------------------------


def _typed(
    stream: StreamSpec, schema: StructType, width: int
) -> tuple[list[list[Column]], list[Column]]:
    """The steps that type a decoded line, each a projection's new columns over the last
    one's, then the typed frame's columns: the declared ones typed, ``_rescued_data``, ``_raw``
    and ``_reason`` (null when the line is good; ``_raw`` is kept for the bad lines only).

    The steps: the line parsed (JSON: its fields as text and its keys; CSV: its tokens), and
    whether it is input at all (``_skipped``); each declared field's text, and what later
    steps ask of the parsed line more than once (JSON: whether its keys are the declared
    names, none repeated; CSV: how many fields it has); each field's value, and what makes the
    line unreadable; the fields whose value does not fit; the reason. An expression that
    later ones use is a column of its own step, referred to by name: used where it is built,
    each use would copy it (the reason is in three of the typed columns, the misfits thrice in
    the reason, every value twice), and Spark would optimize and plan every copy again on
    every trigger, and compute it again on every line (bench/README.md, the typing's
    expressions built once). Spark keeps the steps apart: it merges two projections only when
    that copies no expression but cheap ones."""
    line = (
        _json_fields(stream, schema)
        if stream.format == "json"
        else _csv_fields(stream, schema, width)
    )
    formats = {k: str(v) for k, v in stream.reader_options().items()}
    texts = {f.name: F.col(f"{FIELD_TEXT_PREFIX}{i}") for i, f in enumerate(schema.fields)}
    values = {f.name: F.col(f"{FIELD_VALUE_PREFIX}{i}") for i, f in enumerate(schema.fields)}
    steps = [
        [*line.parsed, _skipped(stream).alias(SKIP_COLUMN)],
        [
            *[
                line.raw_of[f.name].alias(f"{FIELD_TEXT_PREFIX}{i}")
                for i, f in enumerate(schema.fields)
            ],
            *line.facts,
        ],
        [
            *[
                lossless_value(texts[f.name], f.dataType, formats).alias(f"{FIELD_VALUE_PREFIX}{i}")
                for i, f in enumerate(schema.fields)
            ],
            line.broken.alias(BROKEN_COLUMN),
        ],
        [unreadable_fields(schema.fields, texts, values).alias(MISFITS_COLUMN)],
    ]
    broken_column, misfits = F.col(BROKEN_COLUMN), F.col(MISFITS_COLUMN)
    reason = (
        F.when(~F.col(VALID_COLUMN), F.lit("invalid UTF-8"))
        .when(broken_column.isNotNull(), broken_column)
        .when(misfits != "", schema_mismatch(misfits))
    )
    steps.append([reason.alias(REASON_COLUMN)])
    good = F.col(REASON_COLUMN).isNull()
    typed = [
        F.col(FILE_COLUMN),
        F.col(BLOCK_COLUMN),
        F.col(ROW_ID_COLUMN),
        F.col(SKIP_COLUMN),
        F.when(~good, F.make_valid_utf8(TEXT_COLUMN)).alias(RAW_COLUMN),
        *[values[f.name].cast(f.dataType).alias(f.name) for f in schema.fields],
        F.when(good, line.rescued).alias(RESCUED_COLUMN),
        F.col(REASON_COLUMN),
    ]
    return steps, typed


@dataclass(frozen=True)
class _ParsedLine:
    """What a format gives ``_typed`` to type a decoded line with (``_json_fields``,
    ``_csv_fields``)."""

    parsed: list[Column]  # the columns the line is parsed into
    facts: list[Column]  # what later steps ask of the parsed line more than once
    raw_of: dict[str, Column]  # each declared field's raw text, null when absent
    rescued: Column  # the raw JSON of the undeclared fields (kept for good lines only)
    broken: Column  # what makes the line unreadable before its fields are typed


def _json_fields(stream: StreamSpec, schema: StructType) -> _ParsedLine:
    """A JSON line: its fields as text and its keys; whether its keys are the declared names,
    none repeated; its declared fields as raw text (a string's value, or a number's,
    object's or array's JSON text); the raw JSON of its undeclared fields (for a line that
    is not broken); and what makes it unreadable."""
    names = [f.name for f in schema.fields]
    options = {
        k: str(v)
        for k, v in stream.reader_options().items()
        if k not in FILE_STREAM_OPTIONS
        and k not in CSV_READER_OPTIONS
        and k not in ENCODING_OPTIONS
    }
    options.update(mode="PERMISSIVE", columnNameOfCorruptRecord=CORRUPT_COLUMN)
    text = F.col(TEXT_COLUMN)
    parsed = [
        F.from_json(text, strings_schema(names), options).alias(JSON_STRINGS_COLUMN),
        F.json_object_keys(text).alias(JSON_KEYS_COLUMN),
    ]
    keys = F.col(JSON_KEYS_COLUMN)
    # The keys are all declared and none repeats exactly when there are as many keys as declared
    # names among them. This test is compiled code; the set and filter functions on the keys
    # below are not (Spark evaluates them element by element, and they took a third of the
    # parse job's CPU), so they run only on the lines this test does not clear.
    declared_keys = sum((F.array_contains(keys, n).cast("int") for n in names), F.lit(0))
    facts = [(F.size(keys) == declared_keys).alias(ONLY_DECLARED_COLUMN)]
    only_declared = F.col(ONLY_DECLARED_COLUMN)
    repeated = F.array_distinct(
        F.filter(keys, lambda k: F.size(F.filter(keys, lambda o: o == k)) > 1)
    )
    broken = (
        F.when(
            keys.isNull(),
            F.when(F.get_json_object(text, "$").isNull(), F.lit("invalid JSON")).otherwise(
                F.lit("not a JSON object")
            ),
        )
        .when(F.col(JSON_STRINGS_COLUMN)[CORRUPT_COLUMN].isNotNull(), F.lit("invalid JSON"))
        .when(
            ~only_declared & (F.size(keys) != F.size(F.array_distinct(keys))),
            F.concat(F.lit("duplicate key: "), F.array_join(repeated, ", ")),
        )
    )
    # The rescued fields are kept for good lines only (``_typed``). No key repeats on a line
    # that is not broken, so a key is undeclared when some key is not among the declared names.
    extras = F.map_filter(F.from_json(text, "MAP<STRING, VARIANT>"), lambda k, _: ~k.isin(names))
    rescued = F.when(~only_declared, F.to_json(extras))
    raw_of = {n: F.col(JSON_STRINGS_COLUMN)[n] for n in names}
    return _ParsedLine(parsed, facts, raw_of, rescued, broken)


def _csv_fields(stream: StreamSpec, schema: StructType, width: int) -> _ParsedLine:
    """A CSV line: its tokens; how many fields it has; its declared fields (by the file's
    header, or by position); the raw JSON of the undeclared columns; and what makes it
    unreadable.
    Spark's ``from_csv`` splits the line (quoting, escapes, ``nullValue``); a sentinel field
    appended to the line tells how many fields it had, since ``from_csv`` pads a short row
    with nulls."""
    options = _csv_options(stream)
    options.pop("header", None)
    sep = _separator(options)
    slots = max(width, len(schema.fields)) + 2
    wide = StructType([StructField(f"c{i}", StringType()) for i in range(slots)])
    parsed = F.from_csv(
        F.concat(F.col(TEXT_COLUMN), F.lit(sep + _END)), wide.simpleString(), options
    )
    tokens_column = F.array(*[parsed[f"c{i}"] for i in range(slots)]).alias(CSV_TOKENS_COLUMN)
    tokens, columns = F.col(CSV_TOKENS_COLUMN), F.col(CSV_COLUMNS_COLUMN)
    facts = [(F.array_position(tokens, _END) - 1).alias(FIELD_COUNT_COLUMN)]
    count = F.col(FIELD_COUNT_COLUMN)
    broken = (
        F.when(F.col(HEADER_ERROR_COLUMN).isNotNull(), F.col(HEADER_ERROR_COLUMN))
        .when(
            count < 0,
            F.when(
                tokens[slots - 1].isNotNull(),
                F.format_string(
                    "wrong number of fields: more than %d of %d", F.lit(slots - 1), F.size(columns)
                ),
            ).otherwise(F.lit("unreadable CSV: a quoted field is not closed")),
        )
        .when(
            count != F.size(columns),
            F.format_string("wrong number of fields: %d of %d", count, F.size(columns)),
        )
    )
    raw_of = {}
    for f in schema.fields:
        index = F.array_position(columns, f.name).cast("int")
        raw_of[f.name] = F.when(index > 0, F.element_at(tokens, index))
    values = F.transform(F.col(EXTRA_INDEX_COLUMN), lambda i: F.element_at(tokens, i))
    rescued = F.when(
        F.size(F.col(EXTRA_NAMES_COLUMN)) > 0,
        F.to_json(F.map_from_arrays(F.col(EXTRA_NAMES_COLUMN), values)),
    )
    return _ParsedLine([tokens_column], facts, raw_of, rescued, broken)
