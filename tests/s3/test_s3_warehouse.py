"""The example project with warehouse and checkpoints on ``s3a://`` (the local object store), on
``local[*]``: one run of the example for the module, then the other commands against what it
left there. In-process on the suite's session (``cli``), whose Hadoop settings are pointed at
the store as Spark points them at start for a target's ``spark.hadoop.*`` settings; the SIGTERM
test runs a real `runner stream` process."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from pyspark.sql import SparkSession

from runner import storage
from runner.spark.delta.targets import registration
from runner.storage import RemotePath
from runner_devtools.example_project import copy_example
from runner_devtools.object_store import LocalBucket
from tests.conftest import REPO, land_events
from tests.spark.conftest import rows_of
from tests.spark.test_orders_pipeline import EXPECTED_ORDERS, EXPECTED_TOTALS

HADOOP_PREFIX = "spark.hadoop."
SAMPLE = REPO / "sample_data" / "orders"
TARGET = ("--target", "s3")


@pytest.fixture(scope="module")
def store_env(s3: LocalBucket, spark: SparkSession) -> Iterator[dict[str, str]]:
    """The variables project.yml's ``s3`` target reads, set for the module; the suite's
    session's Hadoop settings point at the store."""
    conf = s3.spark_conf()
    hadoop = spark.sparkContext._jsc.hadoopConfiguration()  # type: ignore[union-attr]
    for key, value in conf.items():
        hadoop.set(key.removeprefix(HADOOP_PREFIX), value)
    env = {
        "RUNNER_S3_ENDPOINT": conf[f"{HADOOP_PREFIX}fs.s3a.endpoint"],
        "AWS_ACCESS_KEY_ID": conf[f"{HADOOP_PREFIX}fs.s3a.access.key"],
        "AWS_SECRET_ACCESS_KEY": conf[f"{HADOOP_PREFIX}fs.s3a.secret.key"],
    }
    before = {key: os.environ.get(key) for key in env}
    os.environ.update(env)
    yield env
    forget_tables_on_the_store(spark)
    for key, value in before.items():
        if value is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = value


def forget_tables_on_the_store(spark: SparkSession) -> None:
    """Drop the names this module registered in the suite's session for tables on the store
    (the data stays): the store stops after the module, and a later test on this worker whose
    model has the same table name would otherwise ask the stopped store where that table is."""
    for (database,) in spark.sql("SHOW DATABASES").collect():
        for row in spark.sql(f"SHOW TABLES IN `{database}`").collect():
            if row["isTemporary"]:
                continue
            name = f"`{database}`.`{row['tableName']}`"
            found = registration(spark, name)
            if found is not None and found[0].startswith("s3a://"):
                spark.sql(f"DROP TABLE {name}")


@pytest.fixture(scope="module")
def example(
    tmp_path_factory: pytest.TempPathFactory, store_env: dict[str, str], cli_module
) -> tuple[Path, str]:
    """The example project, its four sample files run through orders_merge+ onto the store;
    returns the project and what the run printed."""
    root = copy_example(tmp_path_factory.mktemp("s3") / "example")
    for name in ("001.json", "002.json", "003.json", "004.json"):
        land_events(landing(root), name, (SAMPLE / name).read_text().splitlines())
    # two files a batch: half the batches, each some seconds of S3A requests to the store; the
    # tables do not depend on where batches are cut (tests/spark/test_batch_invariance.py)
    streams = root / "streams" / "orders.yml"
    streams.write_text(
        streams.read_text().replace("maxFilesPerTrigger: 1", f"maxFilesPerTrigger: {PER_BATCH}")
    )
    result = cli_module("run", "--select", "orders_merge+", *TARGET, "-p", root)
    assert result.exit_code == 0, result.output
    return root, result.output


def landing(root: Path) -> Path:
    return root / "target" / "landing" / "orders"


PER_BATCH = 2
BATCHES = 2  # of the four sample files
WAREHOUSE = RemotePath("s3a://lake/example/warehouse")
CHECKPOINTS = RemotePath("s3a://lake/example/checkpoints")


@pytest.fixture(scope="module")
def cli_module(spark: SparkSession) -> Callable[..., object]:
    """``cli`` of tests/conftest.py, for module-scoped fixtures."""
    from typer.testing import CliRunner

    from runner.cli.app import app

    runner = CliRunner()
    return lambda *args: runner.invoke(app, [str(a) for a in args], catch_exceptions=False)


def test_the_example_on_s3_gives_the_tables_it_gives_on_local_disk(
    spark: SparkSession, example: tuple[Path, str]
) -> None:
    root, output = example
    # files 003 and 004: o1 updated, o5 inserted, o4 deleted (o6 inserted and deleted inside)
    assert "orders_merge batch 1: 7 rows in; inserted 1, updated 1, deleted 1" in output
    assert rows_of(spark, "silver.orders", "order_id") == EXPECTED_ORDERS
    assert rows_of(spark, "gold.customer_totals", "customer_id") == EXPECTED_TOTALS
    location = spark.sql("DESCRIBE DETAIL silver.orders").first()
    assert location is not None and location["location"] == str(WAREHOUSE / "silver/orders")
    # the runner's own files sit in the bucket, beside Spark's
    checkpoint = CHECKPOINTS / "orders_merge"
    assert {"metadata", "offsets", "commits", "runner_owner.json"} <= set(
        storage.names_in(checkpoint)
    )
    assert json.loads(storage.read_text(checkpoint / "runner_owner.json"))["target"] == (
        "silver.orders"
    )
    assert not (root / "target" / "s3").exists()  # nothing on the local disk


def test_history_and_timings_read_the_event_log_and_delta_log_on_s3(
    cli, example: tuple[Path, str]
) -> None:
    root, _ = example
    result = cli("history", "-m", "orders_merge", *TARGET, "-p", root, "--format", "json")
    assert result.exit_code == 0, result.output
    batches = json.loads(result.output)
    assert [b["batch_id"] for b in batches[:BATCHES]] == list(range(BATCHES))
    timed = cli("history", "-m", "orders_merge", *TARGET, "-p", root, "--timings", "-f", "json")
    assert timed.exit_code == 0, timed.output
    first = json.loads(timed.output)["batches"][0]
    merge = next(s for s in first["statements"] if s["keyword"] == "MERGE")
    assert "execution" in merge["delta"]  # from the table's _delta_log, read through S3A
    assert first["checkpoint"] is not None  # the commit file's time, through S3A


def test_show_seed_test_and_docs_on_s3(cli, example: tuple[Path, str]) -> None:
    root, _ = example
    shown = cli("show", "--model", "customer_totals", *TARGET, "-p", root)
    assert shown.exit_code == 0 and "c2" in shown.output, shown.output
    seeded = cli("seed", *TARGET, "-p", root)
    assert seeded.exit_code == 0, seeded.output
    assert storage.exists(WAREHOUSE / "ref" / "customers" / "_delta_log")
    tested = cli("test", *TARGET, "-p", root)
    assert tested.exit_code == 0, tested.output
    docs = cli("docs", "generate", "--with-history", *TARGET, "-p", root)
    assert docs.exit_code == 0, docs.output
    assert "history: batches per model:" in docs.output and f"orders_merge {BATCHES}" in docs.output


def test_quarantine_and_replay_count_recovery_on_s3(
    spark: SparkSession, cli, example: tuple[Path, str]
) -> None:
    """A file with a malformed line: its row lands, the line is quarantined in the bucket. Then
    the newest commit of the checkpoint is deleted, as a kill after the MERGE leaves it: the
    next run replays the batch, Delta skips the MERGE, and the counts it prints come from the
    Delta log on S3; the event log keeps its one row of the batch."""
    root, _ = example
    good = (
        '{"order_id": "o7", "customer_id": "c4", "status": "paid", "amount": 7.00, '
        '"updated_at": "2024-01-01T13:00:00", "op": "U"}'
    )
    land_events(landing(root), "005.json", [good, '{"order_id": "o8", "amount": '])
    first = cli("run", "--model", "orders_merge", *TARGET, "-p", root)
    assert first.exit_code == 0, first.output
    line = next(x for x in first.output.splitlines() if f"orders_merge batch {BATCHES}:" in x)
    assert "1 quarantined" in line and "inserted 1," in line, first.output
    quarantine = spark.read.format("delta").load(str(WAREHOUSE / "_quarantine/orders_merge"))
    assert quarantine.count() == 1

    commit = CHECKPOINTS / "orders_merge" / "commits" / str(BATCHES)
    assert storage.remove(commit)
    again = cli("run", "--model", "orders_merge", *TARGET, "-p", root)
    assert again.exit_code == 0, again.output
    replayed = next(x for x in again.output.splitlines() if f"orders_merge batch {BATCHES}:" in x)
    assert "inserted 1," in replayed, again.output  # the skipped MERGE's counts, recovered
    assert quarantine.count() == 1  # not quarantined twice
    assert rows_of(spark, "silver.orders", "order_id")[-1][0] == "o7"  # once
    history = cli("history", "-m", "orders_merge", *TARGET, "-p", root, "--format", "json")
    assert [b["batch_id"] for b in json.loads(history.output)].count(BATCHES) == 1


def test_full_refresh_deletes_checkpoint_and_table_on_s3(
    spark: SparkSession, cli, example: tuple[Path, str]
) -> None:
    root, _ = example
    result = cli("run", "--model", "orders_merge", "--full-refresh", *TARGET, "-p", root)
    assert result.exit_code == 0, result.output
    assert f"full refresh: removed checkpoint {CHECKPOINTS / 'orders_merge'}" in result.output
    assert f"full refresh: removed table silver.orders at {WAREHOUSE / 'silver/orders'}" in (
        result.output
    )
    assert "orders_merge batch 0: 8 rows in" in result.output  # files 001 and 002
    assert len(rows_of(spark, "silver.orders", "order_id")) == len(EXPECTED_ORDERS) + 1  # o7


def test_lint_analyze_on_s3(cli, example: tuple[Path, str]) -> None:
    root, _ = example
    result = cli("lint", "--analyze", *TARGET, "-p", root)
    assert result.exit_code == 0, result.output


def test_stream_on_s3_stops_on_sigterm(
    example: tuple[Path, str], store_env: dict[str, str]
) -> None:
    """A real `runner stream` process: it resumes from the checkpoint in the bucket, takes a new
    file, and stops between batches on SIGTERM."""
    root, _ = example
    event = (
        '{"order_id": "o9", "customer_id": "c4", "status": "paid", "amount": 9.00, '
        '"updated_at": "2024-01-01T14:00:00", "op": "U"}'
    )
    land_events(landing(root), "006.json", [event])
    env = {**os.environ, **store_env}
    runner = Path(sys.executable).parent / "runner"
    command = [str(runner), "stream", "-m", "orders_merge", *TARGET]
    process = subprocess.Popen(
        [*command, "-p", str(root)], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        text=True,
    )  # fmt: skip
    lines: list[str] = []
    try:
        assert process.stdout is not None
        deadline = time.monotonic() + 600
        for line in process.stdout:
            lines.append(line)
            if "orders_merge batch" in line or time.monotonic() > deadline:
                break
        process.send_signal(signal.SIGTERM)
        rest, _ = process.communicate(timeout=300)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    output = "".join(lines) + rest
    assert "orders_merge batch" in output, output
    assert "SIGTERM: stopping after the batch in flight" in output
    assert process.returncode == 0, output
