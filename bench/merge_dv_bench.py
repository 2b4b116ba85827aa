"""Benchmark a streaming-style MERGE with and without deletion vectors on the target.

    .venv/bin/python bench/merge_dv_bench.py [--sizes 20000,1000000] [--batches 6]

For each target size, two targets are built in one write (files of up to 250k rows, keys spread
over every file), one with `delta.enableDeletionVectors`. Each then takes the same batches of
2,000 events (80 % updates of random existing keys, 20 % new keys, 2 % deletes), persisted as
the runner persists a batch, through the sequence-guarded MERGE the runner's merge() macro
renders. Medians leave out the first batch. Writes bench/results/merge-dv.md with Delta's own
operation metrics, which say where the MERGE's time went.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from pyspark.sql import SparkSession  # noqa: E402

from bench.merge_batches import (  # noqa: E402
    MERGE,
    batch_of,
    build_target,
    last_commit_metrics,
)
from bench.upsert.processes import load_average  # noqa: E402
from runner.project import load  # noqa: E402
from runner.spark.session.builder import build_session  # noqa: E402

RESULTS = REPO / "bench" / "results" / "merge-dv.md"
METRICS = ("executionTimeMs", "scanTimeMs", "rewriteTimeMs", "numTargetRowsCopied")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="20000,1000000", help="target rows, comma-separated")
    parser.add_argument("--batches", type=int, default=6, help="MERGE batches per target")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    load_before = load_average()
    spark = build_session(load(REPO, None, {}).target, "merge-dv-bench")
    rows = []
    with tempfile.TemporaryDirectory(prefix="merge-dv-bench-") as scratch:
        for size in sizes:
            tables = {dv: Path(scratch) / f"t{size}_{dv}" for dv in (False, True)}
            for dv, table in tables.items():
                build_target(spark, table, size, dv)
            # the two targets take turns, batch by batch, so both see the same machine
            runs = {dv: Run() for dv in tables}
            for number in range(args.batches):
                batch = batch_of(spark, size, number).persist()
                batch.count()
                batch.createOrReplaceTempView("batch")
                for dv, table in tables.items():
                    runs[dv].merge(spark, table)
                batch.unpersist()
            for dv, run in runs.items():
                rows.append((size, dv, run.seconds, run.metrics))
                print(f"{size:,} rows, deletion vectors {dv}: {[round(s, 2) for s in run.seconds]}")
    spark.stop()
    write_results(rows, load_before, load_average(), args)
    print(RESULTS.read_text())


class Run:
    """The MERGE walls of one target and Delta's metrics of its commits."""

    def __init__(self) -> None:
        self.seconds: list[float] = []
        self.metrics: dict[str, list[float]] = {name: [] for name in METRICS}

    def merge(self, spark: SparkSession, table: Path) -> None:
        started = time.perf_counter()
        spark.sql(MERGE.format(table=table)).collect()
        self.seconds.append(time.perf_counter() - started)
        metrics = last_commit_metrics(table)
        for name in METRICS:
            self.metrics[name].append(float(metrics.get(name) or 0))


def write_results(rows: list, load_before: str, load_after: str, args: argparse.Namespace) -> None:
    lines = []
    walls = {(size, dv): statistics.median(seconds[1:]) for size, dv, seconds, _ in rows}
    ratios = ", ".join(
        f"{size:,} rows {walls[(size, True)] / walls[(size, False)]:.2f}"
        for size in dict.fromkeys(size for size, *_ in rows)
    )
    for size, dv, seconds, metrics in rows:
        med = {name: statistics.median(values[1:]) for name, values in metrics.items()}
        lines.append(
            f"| {size:,} | {'yes' if dv else 'no'} | {statistics.median(seconds[1:]):.2f} | "
            f"{med['executionTimeMs']:,.0f} | {med['scanTimeMs']:,.0f} | "
            f"{med['rewriteTimeMs']:,.0f} | {med['numTargetRowsCopied']:,.0f} |"
        )
    when = dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    RESULTS.write_text(
        "# MERGE of 2,000-event batches: with and without deletion vectors\n\n"
        f"`.venv/bin/python bench/merge_dv_bench.py --sizes {args.sizes} --batches "
        f"{args.batches}`, {when}, {os.cpu_count()} CPUs. Load average (1/5/15 min) before "
        f"{load_before}, after {load_after}.\n\n"
        "Median over batches 2 to the last; Delta's operation metrics of the same commits.\n\n"
        "| target rows | deletion vectors | MERGE wall (s) | exec (ms) | scan (ms) | rewrite (ms) "
        "| rows copied |\n|---|---|---|---|---|---|---|\n"
        + "\n".join(lines)
        + f"\n\nMERGE wall with / without deletion vectors: {ratios}. Deletion vectors "
        "spare the copy of a touched file's unchanged rows, but add a pass over the touched files "
        "for the matched rows' indexes and write a deletion-vector file per touched file; the "
        "default the runner gives the targets it creates is argued in the README (Benchmarks).\n"
    )


if __name__ == "__main__":
    main()
