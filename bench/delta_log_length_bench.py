"""Benchmark goal 4's full scan against the length of a one-file table's Delta log: is the gap
between a target after 500 batches and its OPTIMIZEd copy (both one file) the log?

    .venv/bin/python bench/delta_log_length_bench.py [--commits 500] [--repeats 10]

One SparkSession with the runner's settings, four Delta tables of the same 20,000 rows in one
file each, on the local disk:

- ``long log``: ``--commits`` commits, each rewriting the table's one file (INSERT OVERWRITE),
  as a target whose every MERGE rewrites it (goal 4's targets);
- ``long log, checksum files``: the same commits written through Hadoop's checksummed local
  file system (Spark's default, which the runner's settings replace), so a hidden
  ``.<name>.crc`` lies beside every file;
- ``cleaned log``: a copy of it whose log keeps only its newest checkpoint and the commits after
  it, with their checksum files (what Delta's log cleanup leaves once the older commits are
  past ``delta.logRetentionDuration``);
- ``new table``: a copy written in one commit and OPTIMIZEd (goal 4's copy).

The upsert bench's full-scan query (bench/upsert/plan.py) runs on each in turn, once to warm
up and ``--repeats`` times timed. Writes bench/results/delta-log-length.md.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

from pyspark.sql import SparkSession

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench.upsert.plan import SCAN_QUERY  # noqa: E402
from bench.upsert.processes import load_average  # noqa: E402
from runner.project import load  # noqa: E402
from runner.spark.session.builder import build_session  # noqa: E402

RESULTS = REPO / "bench" / "results" / "delta-log-length.md"
ROWS = (
    "SELECT format_string('o%08d', id) AS order_id, format_string('c%05d', id % 5000) AS "
    "customer_id, 'paid' AS status, CAST(id % 1000 AS DECIMAL(10,2)) AS amount, "
    "TIMESTAMP'2024-01-01 00:00:00' + make_interval(0, 0, 0, 0, 0, 0, id) AS updated_at "
    "FROM range(20000) DISTRIBUTE BY 1"
)
TABLES = ("long log, checksum files", "long log", "cleaned log", "new table")
# Hadoop's checksummed local file system, Spark's default for file: paths (the runner's session
# sets the raw one, runner/spark/session/builder.py)
CHECKSUMMED = {
    "fs.file.impl": "org.apache.hadoop.fs.LocalFileSystem",
    "fs.AbstractFileSystem.file.impl": "org.apache.hadoop.fs.local.LocalFs",
    "fs.file.impl.disable.cache": "true",
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--commits", type=int, default=500, help="commits of the long log")
    parser.add_argument("--repeats", type=int, default=10, help="timed scans of each table")
    args = parser.parse_args()
    load_before = load_average()
    spark = build_session(load(REPO, None, {}).target, "delta-log-length-bench")
    seconds: dict[str, list[float]] = {name: [] for name in TABLES}
    with tempfile.TemporaryDirectory(prefix="delta-log-bench-") as scratch:
        paths = {name: Path(scratch) / name.replace(",", "").replace(" ", "-") for name in TABLES}
        long_log = paths["long log"]
        write_long_log(spark, long_log, args.commits)
        with checksum_files(spark):
            write_long_log(spark, paths["long log, checksum files"], args.commits)
        # beside the commits: Delta's checkpoints are Parquet, written with their checksums
        if not any(paths["long log, checksum files"].glob("_delta_log/.*.json.crc")):
            raise SystemExit("the checksummed file system wrote no checksum files")
        if any(long_log.glob("_delta_log/.*.json.crc")):
            raise SystemExit("the runner's session wrote checksum files beside its commits")
        shutil.copytree(long_log, paths["cleaned log"])
        cleaned = clean_log(paths["cleaned log"] / "_delta_log")
        new = paths["new table"]
        spark.sql(f"CREATE TABLE delta.`{new}` USING DELTA AS SELECT * FROM delta.`{long_log}`")
        spark.sql(f"OPTIMIZE delta.`{new}`")
        facts = {
            name: (
                len(os.listdir(path / "_delta_log")),
                spark.sql(f"DESCRIBE DETAIL delta.`{path}`").collect()[0]["numFiles"],
            )
            for name, path in paths.items()
        }
        for repeat in range(args.repeats + 1):
            for name, path in paths.items():
                started = time.perf_counter()
                spark.sql(SCAN_QUERY.format(location=path)).collect()
                if repeat:
                    seconds[name].append(time.perf_counter() - started)
    spark.stop()
    write_results(seconds, facts, cleaned, load_before, load_average(), args)
    print(RESULTS.read_text())


def write_long_log(spark: SparkSession, table: Path, commits: int) -> None:
    """``commits`` commits into ``table``, each rewriting its one file."""
    spark.sql(f"CREATE TABLE delta.`{table}` USING DELTA AS {ROWS}")
    for commit in range(1, commits):
        spark.sql(f"INSERT OVERWRITE delta.`{table}` {ROWS}")
        if commit % 100 == 0:
            print(f"{table.name}: {commit} commits", flush=True)


@contextlib.contextmanager
def checksum_files(spark: SparkSession) -> Iterator[None]:
    """Write through Hadoop's checksummed local file system inside the block: the context's
    Hadoop configuration and the session's, put back after."""
    hadoop = spark.sparkContext._jsc.hadoopConfiguration()  # type: ignore[union-attr]
    before = {key: hadoop.get(key) for key in CHECKSUMMED}
    for key, value in CHECKSUMMED.items():
        hadoop.set(key, value)
        spark.conf.set(key, value)
    try:
        yield
    finally:
        for key, value in before.items():
            if value is None:
                hadoop.unset(key)
            else:
                hadoop.set(key, value)
            spark.conf.unset(key)


def clean_log(log: Path) -> int:
    """Remove the commits and checkpoints older than the newest checkpoint, and their checksum
    files (Hadoop's ``.<name>.crc`` beside each, Delta's ``<version>.crc``); returns how many
    entries went."""
    newest = int(json.loads((log / "_last_checkpoint").read_text())["version"])
    removed = 0
    for entry in os.listdir(log):
        version = entry.lstrip(".").split(".")[0]
        if version.isdigit() and int(version) < newest:
            (log / entry).unlink()
            removed += 1
    return removed


def write_results(
    seconds: dict[str, list[float]],
    facts: dict[str, tuple[int, int]],
    cleaned: int,
    load_before: str,
    load_after: str,
    args: argparse.Namespace,
) -> None:
    new = statistics.median(seconds["new table"])
    rows = [
        f"| {name} | {facts[name][0]:,} | {facts[name][1]} | "
        f"{statistics.median(values):.3f} | {statistics.median(values) / new:.2f} | "
        f"{min(values):.3f} | {max(values):.3f} |"
        for name, values in seconds.items()
    ]
    when = dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    RESULTS.write_text(
        "# A one-file table's full scan against the length of its Delta log\n\n"
        f"`.venv/bin/python bench/delta_log_length_bench.py --commits {args.commits} --repeats "
        f"{args.repeats}`, {when}, {os.cpu_count()} CPUs. Load average (1/5/15 min) before "
        f"{load_before}, after {load_after}.\n\n"
        f"The same 20,000 rows in one file: after {args.commits} commits each rewriting it, "
        "written by the runner's session (*long log*) and through Hadoop's checksummed local "
        "file system, Spark's default, which writes a hidden `.<name>.crc` beside every file "
        f"(*long log, checksum files*); the first with the {cleaned:,} log entries older than "
        "its newest checkpoint removed (*cleaned log*), and a copy in one commit, OPTIMIZEd "
        "(*new table*). The upsert bench's full-scan query (goal 4) on the runner's session, "
        f"the tables in turn, once to warm up and {args.repeats} times timed.\n\n"
        "| table | `_delta_log` entries | files | median scan (s) | × new table | min (s) | "
        "max (s) |\n|---|---|---|---|---|---|---|\n" + "\n".join(rows) + "\n\n"
        "Each query on a path asks Delta for the table's newest version, and on the local disk "
        "Delta finds it by listing the whole `_delta_log` folder: every commit, checkpoint and "
        "checksum file, and Hadoop's `.crc` beside each where they were written. The runner's "
        "session writes the commits through the raw local FileContext, which writes none "
        "beside them; the checkpoints, Parquet files, keep theirs "
        "(runner/spark/session/builder.py). Delta removes commits older than "
        "`delta.logRetentionDuration` (30 days by default) when it writes a checkpoint; until "
        "then a streaming target's log grows by a commit a batch.\n"
    )


if __name__ == "__main__":
    main()
