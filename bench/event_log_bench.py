"""Benchmark one event-log append: with Delta's idempotent-write check, as a blind append that
declares its identity in the commit's userMetadata, that with the event log's own table
properties (a checkpoint every 100 commits instead of Delta's 10), and that with its row built
in the JVM (runner/spark/local_frames.py) instead of through ``createDataFrame``'s Python RDD:
the runner's append.

    .venv/bin/python bench/event_log_bench.py [--appends 60]

Three event logs (the runner's schema) in one SparkSession with the runner's settings; the
kinds of append take turns, one row each, so all see the same machine. The first five of each
are left out (the JVM warms up). Each append is timed from building its one-row DataFrame to
the end of its commit. The mean counts the appends that also wrote a checkpoint; the
median does not see them. Writes bench/results/event-log-append.md.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import platform
import statistics
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from pyspark.sql import SparkSession  # noqa: E402

from bench.upsert.processes import load_average  # noqa: E402
from runner.project import load  # noqa: E402
from runner.spark.batch.eventlog import (  # noqa: E402
    EVENT_LOG_PROPERTIES,
    EVENT_LOG_SCHEMA,
    ensure_event_log,
    event_log_location,
    event_log_transaction,
)
from runner.spark.delta.delta_log import identity_metadata  # noqa: E402
from runner.spark.local_frames import local_frame  # noqa: E402
from runner.spark.session.builder import build_session  # noqa: E402

RESULTS = REPO / "bench" / "results" / "event-log-append.md"
WARM_UP = 5
KINDS = {
    "txn": "with txnAppId / txnVersion (Delta checks the table's transactions)",
    "declared": "blind append, identity in userMetadata, checkpoint every 10 commits",
    "python_rdd": "blind append, identity in userMetadata, checkpoint every 100, row through "
    "createDataFrame (the runner until 2026-11-28)",
    "runner": "blind append, identity in userMetadata, checkpoint every 100, row built in the "
    "JVM (the runner)",
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--appends", type=int, default=60, help="appends of each kind")
    args = parser.parse_args()
    load_before = load_average()
    target = load(REPO, None, {}).target
    spark = build_session(target, "event-log-bench")
    seconds: dict[str, list[float]] = {kind: [] for kind in KINDS}
    with tempfile.TemporaryDirectory(prefix="event-log-bench-") as scratch:
        tables = {kind: Path(scratch) / kind for kind in KINDS}
        for kind in ("txn", "declared"):  # Delta's defaults
            spark.sql(f"CREATE TABLE delta.`{tables[kind]}` ({EVENT_LOG_SCHEMA}) USING DELTA")
        for kind in ("python_rdd", "runner"):  # as the runner creates it
            runners = replace(target, warehouse=Path(scratch) / kind)
            ensure_event_log(spark, runners)
            tables[kind] = event_log_location(runners)
        for batch_id in range(args.appends):
            for kind, table in tables.items():
                seconds[kind].append(append_one(spark, table, kind, batch_id))
            print(f"append {batch_id + 1}/{args.appends}", end="\r", flush=True)
    spark.stop()
    write_results(seconds, load_before, load_average(), args.appends)
    print(RESULTS.read_text())


def append_one(spark: SparkSession, table: Path, kind: str, batch_id: int) -> float:
    row = ("m", batch_id, "q", dt.datetime.now(), 1.0, 10, 1, 2, 3, 0, [], False, [], [], 0, None)
    txn = event_log_transaction("q", "m", batch_id)
    started = time.perf_counter()
    if kind == "runner":
        frame = local_frame(spark, [row], EVENT_LOG_SCHEMA)
    else:
        frame = spark.createDataFrame([row], EVENT_LOG_SCHEMA)
    writer = frame.write.format("delta").mode("append")
    writer = writer.option("mergeSchema", "true")
    if kind == "txn":
        writer = writer.option("txnAppId", txn.app_id).option("txnVersion", txn.version)
    else:
        writer = writer.option("userMetadata", identity_metadata(txn))
    writer.save(str(table))
    return time.perf_counter() - started


def write_results(
    seconds: dict[str, list[float]],
    load_before: str,
    load_after: str,
    appends: int,
) -> None:
    kept = {kind: values[WARM_UP:] for kind, values in seconds.items()}
    means = {kind: statistics.mean(values) for kind, values in kept.items()}
    rows = [
        f"| {KINDS[kind]} | {statistics.median(values) * 1000:,.0f} | {means[kind] * 1000:,.0f} | "
        f"{min(values) * 1000:,.0f} | {max(values) * 1000:,.0f} | {sum(values):,.1f} |"
        for kind, values in kept.items()
    ]
    when = dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    RESULTS.write_text(
        "# Event-log append: idempotent-write check, declared identity, checkpoint interval\n\n"
        f"`.venv/bin/python bench/event_log_bench.py --appends {appends}`, {when}, "
        f"{os.cpu_count()} CPUs, Python {platform.python_version()}. Load average (1/5/15 min) "
        f"before {load_before}, after {load_after}.\n\n"
        "One row per append into an event log of the runner's schema, the kinds taking turns; "
        f"appends {WARM_UP + 1} to {appends} of each.\n\n"
        "| append | median (ms) | mean (ms) | min (ms) | max (ms) | total (s) |\n"
        "|---|---|---|---|---|---|\n" + "\n".join(rows) + "\n\n"
        f"Mean, declared / txn: {means['declared'] / means['txn']:.2f}. With txnAppId, Delta looks "
        "the app id up in the snapshot's transactions, which (Delta 4.4) rebuilds the table's "
        "whole state (three Spark jobs) on every append: each append's commit is a new snapshot. "
        "The runner appends blindly and reads the row back only for the one batch Spark may be "
        "replaying: the first of a query start, when the offset log already held it.\n\n"
        f"Mean, checkpoint every 100 / every 10: {means['runner'] / means['declared']:.2f}. An "
        "append that reaches delta.checkpointInterval also writes the table's checkpoint, which "
        "rebuilds its state: the max column. The runner creates its event log with "
        + ", ".join(f"`{k} = {v}`" for k, v in EVENT_LOG_PROPERTIES.items())
        + " (runner/spark/batch/eventlog.py): one append in a hundred writes a checkpoint, "
        "not one in ten.\n\n"
        f"Mean, row built in the JVM / through createDataFrame: "
        f"{means['runner'] / means['python_rdd']:.2f}. On a classic session createDataFrame "
        "ships the row through a Python RDD, and the append's write job starts a Python worker "
        "to unpickle it; runner/spark/local_frames.py hands Spark one JSON literal instead.\n"
    )


if __name__ == "__main__":
    main()
