"""Failures that used to exit 0 without a word, or name neither the stream nor the file, or
hide their cause in the Spark log: each is one line saying what and where, and what to do
(tests/unit/test_start_checks.py has the halves that need no JVM)."""

from __future__ import annotations

import re
from pathlib import Path

from pyspark.sql import SparkSession

from tests.conftest import land_events, write_project

SCHEMA = "order_id STRING, amount STRING"
MODEL = """{{ config(stream='orders', target='{table}', unique_key='order_id',
    columns='order_id STRING, amount BIGINT') }}
MERGE INTO {{ this }} AS t
USING (SELECT order_id, amount FROM {{ batch }}) AS s ON t.order_id = s.order_id
WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *;
"""


def streams(trigger: str = "") -> str:
    return (
        f'streams:\n  orders:\n    format: json\n    path: landing/orders\n    schema: "{SCHEMA}"\n'
        + trigger
    )


def project(root: Path, table: str, trigger: str = "") -> Path:
    return write_project(root, {"m": MODEL.replace("{table}", table)}, streams=streams(trigger))


def test_stream_on_a_missing_source_path_says_it_waits_for_files(
    spark: SparkSession, cli, tmp_path: Path
) -> None:
    root = project(tmp_path / "p", "clear.waits", "    trigger: available_now\n")
    path = root / "landing" / "orders"

    result = cli("stream", "-m", "m", "-p", root)  # available_now: it ends by itself

    assert result.exit_code == 0, result.output + result.stderr
    assert (
        f"warning: {root / 'streams' / 'orders.yml'}:3: stream 'orders' (json): path {path} did "
        "not exist: created it, waiting for files to land there (if it is a typo, fix path: and "
        "delete that directory)"
    ) in result.output
    assert path.is_dir()


def test_a_damaged_newest_commit_is_named_and_deleting_it_loses_nothing(
    spark: SparkSession, cli, tmp_path: Path
) -> None:
    root = project(tmp_path / "p", "clear.commit")
    land_events(root / "landing" / "orders", "0.json", ['{"order_id": "o1", "amount": "1"}'])
    assert cli("run", "-m", "m", "-p", root).exit_code == 0
    commit = root / "target" / "checkpoints" / "m" / "commits" / "0"
    commit.write_text('v1\n{"nextBatchWat')  # cut short, as by a full disk
    before = spark.read.format("delta").load(str(root / "target/warehouse/clear/commit"))

    refused = cli("run", "-m", "m", "-p", root)

    assert refused.exit_code == 1, refused.output + refused.stderr
    assert refused.stderr.splitlines() == [
        f"error: model 'm': checkpoint file {commit} is damaged (line 2 is not JSON: "
        "'{\"nextBatchWat'); Spark cannot start the stream from it",
        f"hint: delete it and its checksum {commit.parent / '.0.crc'} if there: Spark then runs "
        "batch 0 again, which its idempotent writes make harmless; or restore it from a copy of "
        "the checkpoint",
    ]
    commit.unlink()
    (commit.parent / ".0.crc").unlink(missing_ok=True)  # only where Hadoop wrote one
    again = cli("run", "-m", "m", "-p", root)
    assert again.exit_code == 0, again.output + again.stderr
    assert "m batch 0: 1 rows in" in again.output and "already applied" in again.output
    assert before.count() == 1


def test_a_type_mismatch_with_the_target_shows_its_cause_column_and_value(
    spark: SparkSession, cli, tmp_path: Path
) -> None:
    """The target's amount is BIGINT; the stream declares it STRING and a value is 'ten': the
    write fails in a task (TASK_WRITE_FAILED), and the line shows why (CAST_INVALID_INPUT)."""
    root = project(tmp_path / "p", "clear.cast")
    land_events(root / "landing" / "orders", "0.json", ['{"order_id": "o1", "amount": "ten"}'])

    result = cli("run", "-m", "m", "-p", root)

    assert result.exit_code == 1, result.output + result.stderr
    errors = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1, result.stderr
    line = errors[0]
    assert "[TASK_WRITE_FAILED]" in line
    assert re.search(r"\[CAST_INVALID_INPUT\] The value 'ten' of the type \"STRING\"", line), line
    assert "BIGINT" in line, line
    assert result.stderr.splitlines()[-1] == (
        "hint: column(s) whose type differs from the target's: amount (STRING in the batch, "
        "BIGINT in clear.cast); cast them in the model, or declare them in the stream's schema "
        "with the target's type (a value that cannot be cast is then quarantined)"
    )
