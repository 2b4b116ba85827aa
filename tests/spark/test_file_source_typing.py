"""The file source builds the columns that type a stream's lines once and reuses them for every
batch (runner/spark/sources/files.py, ``_line_typing``). These tests hold it to typing each
stream by its own declaration: two streams in one process that differ only in a reader option
or in a column's type, and one CSV stream whose files' headers differ in width from batch to
batch, each get what their own declaration says. Real Spark; the batches are built in the file
source's shape from files on disk, so no stream is started, but for the last test: a stream
types its lines in its own plan (``read_file_stream``), and its batches must get exactly what
lines typed in the batch get."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime
from pathlib import Path

import pytest
from pyspark.sql import DataFrame, SparkSession

from runner.spark.sources.columns import LINE_COLUMN
from runner.spark.sources.files import file_lines, prepare_file_batch, read_file_stream
from runner.specs.stream import StreamSpec

pytestmark = pytest.mark.spark

LINE = '{"order_id":"o1","amount":"2.50","updated_at":"25/12/2024 10:00","op":"U"}'


@pytest.fixture
def orders(example_project: Path) -> StreamSpec:
    from runner.project import load

    return load(example_project).streams["orders"]


def file_batch(spark: SparkSession, path: Path, text: str) -> DataFrame:
    """A micro-batch of the one file ``path``, as the file source's stream hands it over."""
    path.write_text(text)
    return file_lines(spark.read.format("text").option("lineSep", "\n").load(str(path)))


def typed(stream: StreamSpec, batch: DataFrame) -> tuple[list[dict], list[str]]:
    """The batch's good rows, and the reasons of the lines it rejected."""
    good, rejected, _ = typed_with_lines(stream, batch)
    return good, [reason for _, reason in rejected]


def typed_with_lines(
    stream: StreamSpec, batch: DataFrame
) -> tuple[list[dict], list[tuple[int, str]], tuple[int, int, int]]:
    """The batch's good rows, the line number and reason of each line it rejected, and its
    counts (read, quarantined, rescued)."""
    source = prepare_file_batch(stream, batch)
    try:
        good = [row.asDict() for row in source.rows.collect()]
        assert source.rejected is not None
        rejected = source.rejected.rows  # None when the batch counted no malformed line
        lines = [] if rejected is None else [(r["line"], r["reason"]) for r in rejected.collect()]
        counts = source.counts
    finally:
        source.release()
    return good, sorted(lines), (counts.rows_read, counts.rows_quarantined, counts.rows_rescued)


def test_streams_that_differ_in_an_option_or_a_type_are_typed_by_their_own(
    spark: SparkSession, orders: StreamSpec, tmp_path: Path
) -> None:
    day_first = replace(orders, name="day_first", options={"timestampFormat": "dd/MM/yyyy HH:mm"})
    as_text = replace(
        orders,
        name="as_text",
        schema="order_id STRING, amount DECIMAL(10,2), updated_at STRING, op STRING",
    )
    batch = file_batch(spark, tmp_path / "0.json", LINE + "\n")

    good, reasons = typed(orders, batch)  # ISO 8601 only: the day-first time is a mismatch
    assert (good, reasons) == ([], ["schema mismatch: updated_at (TIMESTAMP)"])

    good, reasons = typed(day_first, batch)
    assert reasons == []
    assert [(r["order_id"], r["updated_at"]) for r in good] == [("o1", datetime(2024, 12, 25, 10))]

    good, reasons = typed(as_text, batch)
    assert reasons == []
    assert [(r["updated_at"], "customer_id" in r) for r in good] == [("25/12/2024 10:00", False)]

    good, reasons = typed(orders, batch)  # the first stream again: still its own typing
    assert (good, reasons) == ([], ["schema mismatch: updated_at (TIMESTAMP)"])


def test_a_csv_streams_batches_are_typed_by_each_files_header(
    spark: SparkSession, orders: StreamSpec, tmp_path: Path
) -> None:
    csv = replace(
        orders,
        name="orders_csv",
        format="csv",
        schema="order_id STRING, amount DECIMAL(10,2)",
        options={"header": "true"},
    )
    narrow = "order_id,amount\no1,1.50\n"
    wide = "order_id,note,amount,channel\no2,gift,2.50,web\n"

    for name, text, expected in [
        ("0.csv", narrow, [("o1", "1.50", None)]),
        ("1.csv", wide, [("o2", "2.50", {"note": "gift", "channel": "web"})]),
        ("2.csv", narrow, [("o1", "1.50", None)]),
    ]:
        good, reasons = typed(csv, file_batch(spark, tmp_path / name, text))
        assert reasons == [], name
        rows = [(r["order_id"], str(r["amount"]), _rescued(r["_rescued_data"])) for r in good]
        assert rows == expected, name


def _rescued(text: str | None) -> dict | None:
    import json

    return None if text is None else json.loads(text)


def test_a_stream_typed_in_its_plan_gives_its_batch_what_the_batch_typed_itself_gets(
    spark: SparkSession, orders: StreamSpec, tmp_path: Path
) -> None:
    landing = tmp_path / "landing"
    landing.mkdir()
    text = "\n".join(
        [
            '{"order_id":"o1","customer_id":"c1","status":"paid","amount":1.5,'
            '"updated_at":"2024-01-01T10:00:00","op":"U"}',
            "",  # blank: skipped, but counted in the numbering of the lines after it
            '{"order_id": "cut short',
            '{"order_id":"o2","customer_id":"c2","status":"paid","amount":2.5,'
            '"updated_at":"2024-01-01T11:00:00","op":"U","coupon":"X1"}',
            '{"order_id":"o3","amount":"lots","updated_at":"2024-01-01T12:00:00","op":"U"}',
        ]
    )
    expected = typed_with_lines(orders, file_batch(spark, tmp_path / "0.json", text + "\n"))
    (landing / "0.json").write_text(text + "\n")
    stream = replace(orders, path=landing)

    frame = read_file_stream(spark, stream)
    assert frame.isStreaming and LINE_COLUMN not in frame.columns  # typed in the plan
    got: list[object] = []
    query = (
        frame.writeStream.foreachBatch(lambda batch, _: got.append(typed_with_lines(stream, batch)))
        .option("checkpointLocation", str(tmp_path / "checkpoint"))
        .trigger(availableNow=True)
        .start()
    )
    query.awaitTermination(120)

    assert got == [expected]
    good, rejected, counts = expected
    assert [r["order_id"] for r in good] == ["o1", "o2"]
    assert [line for line, _ in rejected] == [3, 5]
    assert counts == (4, 2, 1)


def test_a_csv_stream_with_a_header_hands_its_batches_lines(
    spark: SparkSession, orders: StreamSpec, tmp_path: Path
) -> None:
    csv = replace(orders, format="csv", path=tmp_path, options={"header": "true"})
    assert LINE_COLUMN in read_file_stream(spark, csv).columns  # typed per batch, by its header
