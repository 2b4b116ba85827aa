"""A query whose foreachBatch worker missed Spark's 10 s to connect back (a loaded Connect
server) is started again, saying so; any other start error is raised at once."""

from __future__ import annotations

import pytest
from pyspark.errors import PySparkException

from runner.spark.streaming.query import START_ATTEMPTS, WORKER_LATE, StreamFailed, start_query

LATE = f"{WORKER_LATE}.\n\nJVM stacktrace:\norg.apache.spark.SparkException"


def starts_after(failures: list[Exception]):
    calls: list[int] = []

    def start() -> str:
        calls.append(1)
        if failures:
            raise failures.pop(0)
        return "query"

    return start, calls


def test_a_late_worker_is_started_again_and_said(capsys: pytest.CaptureFixture[str]) -> None:
    start, calls = starts_after([PySparkException(LATE), PySparkException(LATE)])
    assert start_query(start, "orders_merge") == "query"  # type: ignore[arg-type]
    assert len(calls) == 3
    lines = capsys.readouterr().err.splitlines()
    assert lines[-1].startswith("orders_merge: the server's Python worker for this query did not")
    assert [line[-5:] for line in lines] == [f"(2/{START_ATTEMPTS})", f"(3/{START_ATTEMPTS})"]


def test_late_every_time_is_one_line_and_another_error_is_raised() -> None:
    start, calls = starts_after([PySparkException(LATE)] * START_ATTEMPTS)
    with pytest.raises(StreamFailed) as raised:
        start_query(start, "m")  # type: ignore[arg-type]
    assert len(calls) == START_ATTEMPTS
    message = str(raised.value)
    assert "JVM stacktrace" not in message and message.startswith("m: the server's Python worker")
    assert f"{START_ATTEMPTS} times" in message and raised.value.hint
    start, calls = starts_after([PySparkException("[STREAM_FAILED] no such table")])
    with pytest.raises(PySparkException, match="no such table"):
        start_query(start, "m")  # type: ignore[arg-type]
    assert len(calls) == 1
