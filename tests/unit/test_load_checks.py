"""What the project's load rejects before Spark runs: trigger intervals Spark would refuse,
types Spark does not have, two writers of one target; and a Java that does not start.
(tests/unit/test_bad_input.py checks each as one located line through the CLI.)"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from runner.ddl import DdlTypeError, check_column_types
from runner.project import load
from runner.streams import processing_time_problem
from tests.conftest import write_project

RUNNER = str(Path(sys.executable).parent / "runner")


# Spark's own grammar (IntervalUtils.stringToInterval, ProcessingTimeTrigger): case does not
# matter, an 'interval' prefix is allowed, units may be plural and combine; only seconds take a
# fraction; no months or years in a trigger; not negative.
@pytest.mark.parametrize(
    "interval",
    ["5 seconds", "1 minute", "500 milliseconds", "10 SECONDS", "interval 2 hours",
     "1 minute 30 seconds", "1.5 seconds", "0 seconds", "1 day", "250 microseconds"],
)  # fmt: skip
def test_intervals_spark_accepts_pass(interval: str) -> None:
    assert processing_time_problem(interval) is None


@pytest.mark.parametrize(
    ("interval", "problem"),
    [("soon", "expected '<number> <unit>'"), ("5", "expected '<number> <unit>'"),
     ("1 month", "months or years"), ("2 years", "months or years"),
     ("1.5 minutes", "only seconds can have a fraction"), ("5 secs", "unknown unit 'secs'"),
     ("-1 second", "negative"), ("", "no interval"), ("5 seconds later", "expected")],
)  # fmt: skip
def test_intervals_spark_refuses_fail_with_the_reason(interval: str, problem: str) -> None:
    assert problem in (processing_time_problem(interval) or "")


@pytest.mark.parametrize(
    "ddl",
    ["a BOOLEAN, b TINYINT, c SMALLINT, d INT, e BIGINT, f FLOAT, g DOUBLE, h STRING",
     "a DECIMAL(10,2), b DECIMAL(38), c DEC, d NUMERIC(5, 5), e CHAR(3), f VARCHAR(10)",
     "a DATE, b TIMESTAMP, c TIMESTAMP_NTZ, d BINARY, e LONG, f SHORT, g BYTE, h REAL",
     "a ARRAY<STRUCT<x: INT, y: MAP<STRING, ARRAY<BIGINT>>>>, b STRUCT<p INT, q STRING>",
     "`odd name` STRING NOT NULL COMMENT 'a, b', b INTERVAL DAY TO SECOND, c string"],
)  # fmt: skip
def test_spark_types_pass(ddl: str) -> None:
    check_column_types(ddl)


@pytest.mark.parametrize(
    ("ddl", "message"),
    [("a BIGINTT", "column a: unknown type 'BIGINTT' (did you mean BIGINT?)"),
     ("a INT, b ARRAY<STRUCT<x: INT, y: BIGINTT>>", "column b: unknown type 'BIGINTT'"),
     ("a MAP<STRING>", "column a: expected ','"),
     ("a DECIMAL(39,2)", "precision must be 1 to 38"),
     ("a DECIMAL(5,6)", "scale at most the precision"),
     ("a VARCHAR", "VARCHAR takes 1 argument, got 0"),
     ("a INT(3)", "INT takes no arguments"),
     ("a STRING b", "unexpected 'b' after the type")],
)  # fmt: skip
def test_types_spark_lacks_fail_naming_the_column(ddl: str, message: str) -> None:
    with pytest.raises(DdlTypeError) as caught:
        check_column_types(ddl)
    assert message in str(caught.value)


def _model(target: str, shared: bool) -> str:
    extra = ", shared_target=true" if shared else ""
    return f"{{{{ config(stream='orders', target='{target}', unique_key='order_id'{extra}) }}}}\n"


def test_two_writers_of_one_target_load_when_both_say_they_share_it(tmp_path: Path) -> None:
    root = write_project(
        tmp_path / "p", {"a": _model("silver.t", True), "b": _model("SILVER.T", True)}
    )
    assert sorted(load(root).models) == ["a", "b"]


def test_a_java_that_does_not_start_is_one_error_line_with_a_hint(tmp_path: Path) -> None:
    """A JAVA_HOME whose java exits at once: pyspark's gateway error becomes one line."""
    root = write_project(tmp_path / "p", {"m": _model("silver.t", False) + "SELECT 1;\n"})
    java_home = tmp_path / "broken-jdk"
    (java_home / "bin").mkdir(parents=True)
    (java_home / "bin" / "java").write_text("#!/bin/sh\nexit 1\n")
    (java_home / "bin" / "java").chmod(0o755)
    for home, why in ((tmp_path / "no-jdk", "which has no bin/java"), (java_home, "exited")):
        result = subprocess.run(
            [RUNNER, "run", "--model", "m", "--project-dir", str(root)],
            capture_output=True,
            text=True,
            timeout=120,
            env={**os.environ, "JAVA_HOME": str(home)},
        )
        assert result.returncode == 1, result.stderr
        assert "Traceback" not in result.stderr
        errors = [line for line in result.stderr.splitlines() if line.startswith("error:")]
        assert len(errors) == 1 and errors[0].startswith("error: Java did not start"), errors
        assert why in errors[0]
        assert "hint: point JAVA_HOME at a Java 17" in result.stderr
