"""Where a bare Delta MERGE of one 2,000-event batch spends its time, beside an append of it.

    .venv/bin/python bench/merge_floor_bench.py [--size 20000] [--batches 10]

No runner, no event log, no checkpoint: one SparkSession on the runner's settings, and the
batches of bench/merge_batches.py (persisted, as the runner persists a batch) through the
sequence-guarded MERGE the merge() macro renders, into a target of --size rows built in one
write. After each MERGE the same persisted batch is appended to a plain Delta table: the
denominator of issue #12's goal 1. Each variant (Spark settings on top of the runner's) has its
own target, and the variants take turns batch by batch, so all see the same machine.

Spark's record of the SQL executions nested in each MERGE (the session's SQL status store, kept
with the UI off) splits the MERGE's wall into Delta's steps: the target's snapshot state (the
log replay and aggregation Delta runs for each new table version), materialising the source,
finding the touched files (an inner join of the batch with the target's key column), rewriting
them, and the rest (parsing, analysis, planning, the commit). Medians leave out the first two
batches (the JVM's first jobs). Writes bench/results/merge-floor.md (merge-floor-SIZE.md for
another --size).
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

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
from runner.spark.session.builder import build_session, temporary_conf  # noqa: E402

RESULTS = REPO / "bench" / "results"
DEFAULT_SIZE = 20_000
WARM_UP = 2  # batches left out of the medians

# Each variant's Spark settings, on top of the runner's own (runner/spark/session/builder.py).
VARIANTS: dict[str, dict[str, str]] = {
    "runner's settings": {},
    "adaptive query execution off": {"spark.sql.adaptive.enabled": "false"},
    # the runner's default until 2026-11-28
    "two snapshot partitions": {"spark.databricks.delta.snapshotPartitions": "2"},
    # what the runner's two settings save (issue #12's baseline recipe ran on these)
    "Spark's and Delta's defaults": {
        "spark.sql.shuffle.partitions": "200",
        "spark.databricks.delta.snapshotPartitions": "50",
    },
}

# Delta's steps, matched in this order against the description of each SQL execution nested in
# the MERGE (Delta names its jobs by the step: "MERGE operation - scanning files for matches").
STEPS = (
    ("snapshot state", "Compute snapshot"),
    ("source", "materialize source"),
    ("touched files", "scanning files for matches"),
    ("rewrite", "MERGE operation - Rewriting"),
)
DELTA_METRICS = ("executionTimeMs", "materializeSourceTimeMs", "scanTimeMs", "rewriteTimeMs")


@dataclass
class Samples:
    """One variant's measurements, a value per batch under each name."""

    values: dict[str, list[float]] = field(default_factory=dict)

    def add(self, name: str, value: float) -> None:
        self.values.setdefault(name, []).append(value)

    def median(self, name: str) -> float:
        return statistics.median(self.values[name][WARM_UP:])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=DEFAULT_SIZE, help="target rows")
    parser.add_argument("--batches", type=int, default=10, help="batches per variant")
    args = parser.parse_args()
    if args.batches <= WARM_UP:
        parser.error(f"--batches must be more than {WARM_UP}: the first {WARM_UP} are warm-up")
    load_before = load_average()
    spark = build_session(load(REPO, None, {}).target, "merge-floor-bench")
    samples = {name: Samples() for name in VARIANTS}
    with tempfile.TemporaryDirectory(prefix="merge-floor-bench-") as scratch:
        targets = {name: Path(scratch) / f"target{i}" for i, name in enumerate(VARIANTS)}
        appended = {name: Path(scratch) / f"appended{i}" for i, name in enumerate(VARIANTS)}
        for target in targets.values():
            build_target(spark, target, args.size, deletion_vectors=False)
        for number in range(args.batches):
            batch = batch_of(spark, args.size, number).persist()
            batch.count()
            batch.createOrReplaceTempView("batch")
            for name, settings in VARIANTS.items():
                with temporary_conf(spark, settings):
                    merge_once(spark, targets[name], samples[name])
                started = time.perf_counter()
                batch.write.format("delta").mode("append").save(str(appended[name]))
                samples[name].add("append", time.perf_counter() - started)
            batch.unpersist()
            print(
                f"batch {number}: "
                + ", ".join(f"{name} {s.values['merge'][-1]:.2f} s" for name, s in samples.items()),
                flush=True,
            )
    spark.stop()
    results = RESULTS / (
        "merge-floor.md" if args.size == DEFAULT_SIZE else f"merge-floor-{args.size}.md"
    )
    results.write_text(report(samples, args, load_before, load_average()))
    print(results.read_text())


def merge_once(spark: SparkSession, target: Path, samples: Samples) -> None:
    """Run the MERGE once; record its wall, its steps and Delta's own metrics of its commit."""
    store = spark._jsparkSession.sharedState().statusStore()
    first_new = store.executionsCount()
    started = time.perf_counter()
    spark.sql(MERGE.format(table=target)).collect()
    wall = time.perf_counter() - started
    samples.add("merge", wall)
    steps = step_seconds(nested_executions(store, first_new))
    for name, _ in STEPS:
        samples.add(name, steps.get(name, 0.0))
    samples.add("rest", wall - sum(steps.values()))
    metrics = last_commit_metrics(target)
    for name in DELTA_METRICS:
        samples.add(name, float(metrics.get(name) or 0) / 1000)


def nested_executions(store: Any, first_new: int) -> list[tuple[str, float]]:
    """(description, seconds) of the SQL executions run inside the MERGE's own execution."""
    executions = store.executionsList(first_new, 10_000)
    found = []
    for i in range(executions.size()):
        execution = executions.apply(i)
        if execution.executionId() == execution.rootExecutionId():
            continue  # the MERGE statement itself: its wall is measured around it
        if not execution.completionTime().isDefined():
            continue
        seconds = (execution.completionTime().get().getTime() - execution.submissionTime()) / 1000
        found.append((str(execution.description()), seconds))
    return found


def step_seconds(executions: list[tuple[str, float]]) -> dict[str, float]:
    """Seconds per Delta step; executions no step names count toward the rest."""
    seconds: dict[str, float] = {}
    for description, duration in executions:
        for name, marker in STEPS:
            if marker in description:
                seconds[name] = seconds.get(name, 0.0) + duration
                break
    return seconds


def report(samples: dict[str, Samples], args: argparse.Namespace, before: str, after: str) -> str:
    when = dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    step_names = [name for name, _ in STEPS]
    rows = []
    for variant, s in samples.items():
        merge, append = s.median("merge"), s.median("append")
        parts = " | ".join(f"{s.median(name):.2f}" for name in [*step_names, "rest"])
        delta = " | ".join(f"{s.median(name):.2f}" for name in DELTA_METRICS)
        rows.append(
            f"| {variant} | {merge:.2f} | {parts} | {delta} | {append:.2f} | {merge / append:.1f} |"
        )
    base = samples[next(iter(VARIANTS))]
    budget = 2 * base.median("append")
    return (
        "# A bare MERGE of one 2,000-event batch, step by step, beside an append of it\n\n"
        f"`.venv/bin/python bench/merge_floor_bench.py --size {args.size} --batches "
        f"{args.batches}`, {when}, {os.cpu_count()} CPUs. Load average (1/5/15 min) before "
        f"{before}, after {after}.\n\n"
        f"A target of {args.size:,} rows; medians over batches {WARM_UP + 1} to {args.batches}. "
        "MERGE's steps are the SQL executions Delta runs inside it (Spark's SQL status store); "
        "*rest* is the MERGE's wall minus them: parsing, analysis and planning on the driver, "
        "and the commit. Delta's columns are its own `operationMetrics` of the same commits. "
        "All in seconds.\n\n"
        "| settings | MERGE wall | snapshot state | materialise source | find touched files "
        "| rewrite | rest | Delta exec | Delta mat | Delta scan | Delta rewrite | append wall "
        "| MERGE / append |\n"
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|\n" + "\n".join(rows) + "\n\n"
        f"Issue #12's goal 1 allows an upsert batch twice an append batch: {budget:.2f} s here, "
        "for the whole batch (source, statements, event log). The bare MERGE alone takes "
        f"{base.median('merge'):.2f} s on the runner's settings; its snapshot-state step alone "
        f"takes {base.median('snapshot state'):.2f} s and finding the touched files "
        f"{base.median('touched files'):.2f} s.\n"
    )


if __name__ == "__main__":
    main()
