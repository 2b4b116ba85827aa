"""Benchmark a maintenance VACUUM of a small target: with Spark's default partition-discovery
parallelism (10,000), which Delta's VACUUM uses to list the table's files, and with the
runner's default (runner/spark/session/builder.py, DEFAULT_CONF).

    .venv/bin/python bench/vacuum_listing_bench.py [--rounds 3] [--commits 20]

One SparkSession with the runner's settings; a Delta table of ``--commits`` small appends (a
streaming target after as many batches); the two settings take turns, so both see the same
machine. Writes bench/results/vacuum-listing.md.
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
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench.upsert.processes import load_average  # noqa: E402
from runner.project import load  # noqa: E402
from runner.spark.session.builder import DEFAULT_CONF, build_session  # noqa: E402

RESULTS = REPO / "bench" / "results" / "vacuum-listing.md"
LISTING = "spark.sql.sources.parallelPartitionDiscovery.parallelism"
SETTINGS = {"Spark's default": "10000", "the runner's default": DEFAULT_CONF[LISTING]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3, help="VACUUMs with each setting")
    parser.add_argument("--commits", type=int, default=20, help="appends before the VACUUMs")
    args = parser.parse_args()
    load_before = load_average()
    spark = build_session(load(REPO, None, {}).target, "vacuum-listing-bench")
    seconds: dict[str, list[float]] = {name: [] for name in SETTINGS}
    with tempfile.TemporaryDirectory(prefix="vacuum-bench-") as scratch:
        table = f"delta.`{scratch}/target`"
        spark.sql(f"CREATE TABLE {table} (id BIGINT, k BIGINT) USING DELTA")
        for commit in range(args.commits):
            rows = f"range({commit * 100}, {(commit + 1) * 100})"
            spark.sql(f"INSERT INTO {table} SELECT id, id % 7 FROM {rows}")
        for round_ in range(args.rounds):
            for name, value in SETTINGS.items():
                spark.conf.set(LISTING, value)
                started = time.perf_counter()
                spark.sql(f"VACUUM {table} RETAIN 168 HOURS")
                seconds[name].append(time.perf_counter() - started)
            print(f"round {round_ + 1}/{args.rounds}", flush=True)
    spark.stop()
    write_results(seconds, load_before, load_average(), args)
    print(RESULTS.read_text())


def write_results(
    seconds: dict[str, list[float]], load_before: str, load_after: str, args: argparse.Namespace
) -> None:
    rows = [
        f"| {name} (`{SETTINGS[name]}`) | {statistics.median(values):.1f} | "
        f"{min(values):.1f} | {max(values):.1f} |"
        for name, values in seconds.items()
    ]
    when = dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    RESULTS.write_text(
        "# VACUUM of a small target: the listing's parallelism\n\n"
        f"`.venv/bin/python bench/vacuum_listing_bench.py --rounds {args.rounds} --commits "
        f"{args.commits}`, {when}, {os.cpu_count()} CPUs, Python {platform.python_version()}. "
        f"Load average (1/5/15 min) before {load_before}, after {load_after}.\n\n"
        f"A Delta table of {args.commits} appends of 100 rows; `VACUUM ... RETAIN 168 HOURS` "
        "(nothing to delete), the settings taking turns.\n\n"
        f"| `{LISTING}` | median (s) | min (s) | max (s) |\n"
        "|---|---|---|---|\n" + "\n".join(rows) + "\n\n"
        "Delta's VACUUM lists the table's directories in a Spark job of as many tasks as this "
        "setting says, whatever the table's size: 10,000 near-empty tasks on a machine's few "
        "cores. The runner's sessions set it as low as their shuffle partitions; on a cluster "
        "whose tables span many directories, raise it in the target's `spark_conf`.\n"
    )


if __name__ == "__main__":
    main()
