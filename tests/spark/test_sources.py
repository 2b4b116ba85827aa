"""Every source format and trigger, streamed through the runner into Delta."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from pyspark.sql import SparkSession

from runner.project import load
from runner.spark.batch.report import BatchReport
from runner.spark.streaming.pipeline import stream_models
from runner.spark.streaming.query import Callbacks
from tests.conftest import write_project

COPY_MODEL = """{{{{ config(stream='events', target='{target}', columns='{columns}') }}}}
INSERT INTO {{{{ this }}}} SELECT {select} FROM {{{{ batch }}}};
"""


def project_with(root: Path, stream_yaml: str, target: str, columns: str, select: str) -> Path:
    model = COPY_MODEL.format(target=target, columns=columns, select=select)
    return write_project(root, {"copy_events": model}, streams=stream_yaml)


def events_yaml(fmt: str, extra: str = "", trigger: str = "") -> str:
    return f"streams:\n  events:\n    format: {fmt}\n{extra}" + (
        f"    trigger: {trigger}\n" if trigger else ""
    )


EVENT_SCHEMA = "id BIGINT, name STRING"


@pytest.mark.parametrize("fmt", ["json", "csv", "parquet"])
def test_file_sources_stream_into_delta(spark: SparkSession, cli, tmp_path: Path, fmt: str):
    landing = tmp_path / f"{fmt}_landing"
    rows = [(1, "one"), (2, "two"), (3, "three")]
    frame = spark.createDataFrame(rows, EVENT_SCHEMA).coalesce(1)
    writer = frame.write.mode("overwrite")
    if fmt == "csv":
        writer.option("header", "true").csv(str(landing))
    else:
        getattr(writer, fmt)(str(landing))
    options = "    options:\n      header: true\n" if fmt == "csv" else ""
    stream = events_yaml(fmt, f"    path: {landing}\n    schema: '{EVENT_SCHEMA}'\n{options}")
    # json and csv batches also carry _rescued_data: name the columns
    project = project_with(tmp_path / fmt, stream, f"raw.{fmt}_events", EVENT_SCHEMA, "id, name")

    result = cli("run", "-m", "copy_events", "-p", project)

    assert result.exit_code == 0, result.output + result.stderr
    copied = spark.table(f"raw.{fmt}_events").orderBy("id").collect()
    assert [tuple(r) for r in copied] == rows


def test_delta_table_source_by_path_and_by_name(spark: SparkSession, cli, tmp_path: Path):
    source = tmp_path / "bronze_events"
    spark.createDataFrame([(1, "a"), (2, "b")], EVENT_SCHEMA).write.format("delta").save(
        str(source)
    )
    spark.sql("CREATE SCHEMA IF NOT EXISTS bronze")
    spark.sql(f"CREATE TABLE IF NOT EXISTS bronze.events USING DELTA LOCATION '{source}'")
    by_path = project_with(
        tmp_path / "by_path", events_yaml("delta", f"    path: {source}\n"),
        "raw.delta_by_path", EVENT_SCHEMA, "id, name",
    )  # fmt: skip
    by_name = project_with(
        tmp_path / "by_name", events_yaml("delta", "    table: bronze.events\n"),
        "raw.delta_by_name", EVENT_SCHEMA, "id, name",
    )  # fmt: skip

    for project, table in ((by_path, "raw.delta_by_path"), (by_name, "raw.delta_by_name")):
        result = cli("run", "-m", "copy_events", "-p", project)
        assert result.exit_code == 0, result.output + result.stderr
        assert sorted(tuple(r) for r in spark.table(table).collect()) == [(1, "a"), (2, "b")]

    # new commits to the source arrive as the next batch
    spark.createDataFrame([(3, "c")], EVENT_SCHEMA).write.format("delta").mode("append").save(
        str(source)
    )
    assert cli("run", "-m", "copy_events", "-p", by_path).exit_code == 0
    assert spark.table("raw.delta_by_path").count() == 3


def test_rate_micro_batch_with_available_now(spark: SparkSession, cli, tmp_path: Path):
    stream = events_yaml("rate-micro-batch", "    options:\n      rowsPerBatch: 7\n")
    project = project_with(
        tmp_path / "rmb", stream, "raw.rate_micro", "ts TIMESTAMP, value BIGINT",
        "timestamp, value",
    )  # fmt: skip

    result = cli("run", "-m", "copy_events", "-p", project)

    assert result.exit_code == 0, result.output + result.stderr
    count = spark.table("raw.rate_micro").count()
    assert count > 0 and count % 7 == 0  # whole micro-batches of rowsPerBatch rows


def test_rate_source_with_processing_time_trigger(spark: SparkSession, tmp_path: Path):
    """A processing-time stream runs until stopped: stop it after three batches."""
    stream = events_yaml(
        "rate", "    options:\n      rowsPerSecond: 20\n", trigger="{processing_time: 1 second}"
    )
    root = project_with(
        tmp_path / "rate", stream, "raw.rate_events", "ts TIMESTAMP, value BIGINT",
        "timestamp, value",
    )  # fmt: skip
    project = load(root)
    stop = threading.Event()
    batches: list[BatchReport] = []

    def on_batch(report: BatchReport) -> None:
        batches.append(report)
        if len(batches) >= 3:
            stop.set()

    stopped = stream_models(
        project,
        [project.model("copy_events")],
        callbacks=Callbacks(on_batch=on_batch),
        stop=stop,
        spark=spark,
    )

    assert stopped is True
    assert len(batches) >= 3
    total = spark.table("raw.rate_events").count()
    assert total == sum(b.input_rows for b in batches) > 0  # every batch's rows, once


def test_once_trigger_runs_as_available_now_and_the_stream_ends(
    spark: SparkSession, cli, tmp_path: Path
):
    landing = tmp_path / "once_landing"
    spark.createDataFrame([(1, "x")], EVENT_SCHEMA).write.json(str(landing))
    stream = events_yaml(
        "json", f"    path: {landing}\n    schema: '{EVENT_SCHEMA}'\n", trigger="once"
    )
    project = project_with(tmp_path / "once", stream, "raw.once_events", EVENT_SCHEMA, "id, name")

    result = cli("stream", "-m", "copy_events", "-p", project)  # ends by itself

    assert result.exit_code == 0, result.output + result.stderr
    assert "trigger 'once' is deprecated" in result.output
    assert "done: no more input." in result.output
    assert [tuple(r) for r in spark.table("raw.once_events").collect()] == [(1, "x")]
