"""Rows made in Python become the DataFrame ``createDataFrame`` would make of them, built in the
JVM from one JSON literal: the same values (nested rows, nulls, NaN, quotes and newlines in
text), the same instants for timestamps in any local time zone, and no Python RDD in the plan."""

from __future__ import annotations

import json
import math
import os
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta, timezone

import pytest
from pyspark.sql import Row, SparkSession

from runner.spark import local_frames
from runner.spark.batch.eventlog import EVENT_LOG_SCHEMA
from runner.spark.local_frames import json_row, json_rows_frame, local_frame

NAIVE = datetime(2026, 3, 29, 2, 30, 15, 123456)  # in the hour Paris skips that night


def event_log_rows() -> list[tuple]:
    statement = Row(
        label="batch[1]", keyword="MERGE", seconds=0.25, skipped=False, inserted=3, updated=None,
        deleted=0,
    )  # fmt: skip
    return [
        ("orders_merge", 7, 'q "1"\nnext', NAIVE, 1.5, 10, 1, 2, 3, 0, [statement], False, [],
         [Row(phase="source", seconds=0.125)], 0, NAIVE + timedelta(seconds=1.5)),
        ("é ✓ \\ /", 8, "q2", datetime(2026, 1, 1, tzinfo=timezone(timedelta(hours=-5))),
         math.nan, None, None, None, None, None, [], None, None, None, None, None),
        ("m", 9, "q3", None, -0.0, 2**62, 0, 0, 0, 0, None, True,
         [Row(name="positive", action="drop", passed=4, failed=1)], [], 1, None),
    ]  # fmt: skip


def same(first: list[Row], second: list[Row]) -> bool:
    """Equal rows, NaN equal to NaN."""
    return repr(first) == repr(second)


@pytest.fixture(params=["UTC", "Europe/Paris", "America/New_York"])
def local_zone(request: pytest.FixtureRequest) -> Iterator[str]:
    """The Python process's local time zone, which a naive datetime is read in."""
    before = os.environ.get("TZ")
    os.environ["TZ"] = request.param
    time.tzset()
    yield request.param
    if before is None:
        del os.environ["TZ"]
    else:
        os.environ["TZ"] = before
    time.tzset()


def test_event_log_rows_equal_what_create_dataframe_makes(spark: SparkSession, local_zone: str):
    rows = event_log_rows()
    built = local_frame(spark, rows, EVENT_LOG_SCHEMA)
    expected = spark.createDataFrame(rows, EVENT_LOG_SCHEMA)
    assert built.schema == expected.schema
    assert same(built.collect(), expected.collect()), local_zone
    # the same instants, seen by Spark (in the session's time zone), not only by Python
    instants = [r[0] for r in built.selectExpr("CAST(started_at AS STRING)").collect()]
    assert instants == [r[0] for r in expected.selectExpr("CAST(started_at AS STRING)").collect()]
    # the naive one read in local time (in the skipped hour: as mktime reads it), shown in UTC,
    # the session's time zone
    local = datetime.fromtimestamp(time.mktime(NAIVE.timetuple()), UTC)
    assert instants[0] == local.replace(microsecond=NAIVE.microsecond).strftime(
        "%Y-%m-%d %H:%M:%S.%f"
    )
    assert instants[1] == "2026-01-01 05:00:00"


def test_no_python_rdd_in_the_plan_until_the_literal_limit(
    spark: SparkSession, monkeypatch: pytest.MonkeyPatch
):
    rows = event_log_rows()
    plan = local_frame(spark, rows, EVENT_LOG_SCHEMA)._jdf.queryExecution().executedPlan()
    assert "ExistingRDD" not in plan.toString()  # createDataFrame's Python RDD
    monkeypatch.setattr(local_frames, "LITERAL_LIMIT", 100)
    large = local_frame(spark, rows, EVENT_LOG_SCHEMA)
    assert "ExistingRDD" in large._jdf.queryExecution().executedPlan().toString()
    assert same(large.collect(), spark.createDataFrame(rows, EVENT_LOG_SCHEMA).collect())


def test_rows_kept_as_json_come_back_as_the_same_rows(
    spark: SparkSession, monkeypatch: pytest.MonkeyPatch
):
    """A stream's event-log rows wait in files as ``json_row`` writes them, and are appended
    later from that form: one literal, or past the limit one JSON text per row."""
    rows = event_log_rows()
    kept = [json.loads(json.dumps(json_row(row, EVENT_LOG_SCHEMA))) for row in rows]
    expected = spark.createDataFrame(rows, EVENT_LOG_SCHEMA).collect()
    assert same(json_rows_frame(spark, kept, EVENT_LOG_SCHEMA).collect(), expected)
    monkeypatch.setattr(local_frames, "LITERAL_LIMIT", 100)
    assert same(json_rows_frame(spark, kept, EVENT_LOG_SCHEMA).collect(), expected)


def test_no_rows_and_mappings(spark: SparkSession):
    assert local_frame(spark, [], "a BIGINT, b STRING").collect() == []
    frame = local_frame(spark, [{"b": "x", "a": 1}, {"a": None}], "a BIGINT, b STRING")
    assert frame.collect() == [Row(a=1, b="x"), Row(a=None, b=None)]


def test_a_type_without_a_json_form_is_refused(spark: SparkSession):
    with pytest.raises(TypeError, match="no JSON form for binary"):
        local_frame(spark, [(b"\x00",)], "payload BINARY")
