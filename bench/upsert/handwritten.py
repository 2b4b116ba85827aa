"""What the hand-written variants (the recipe and the plain append) share: a SparkSession built
as the runner builds it (for the recipe as the seeds write it, with the settings the runner
tunes back at their defaults), the stream of order files, and a clock around each
foreachBatch call.

Run as its own process per variant (``python -m bench.upsert.recipe ...``), so each variant
has its own JVM, as ``runner run`` does.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.streaming import StreamingQuery

from bench.upsert.events import EVENT_SCHEMA
from runner.project import load
from runner.spark.session.builder import CODEGEN_CACHE, build_session

BatchFunction = Callable[[DataFrame, int], None]

# What the runner tunes for a small batch on a small machine (runner/spark/session/builder.py's
# defaults and the bench's project.yml): the seeds' recipe, as written, leaves them at Spark's
# and Delta's defaults (200 shuffle partitions, 50 snapshot partitions).
RUNNER_TUNING = ("spark.sql.shuffle.partitions", "spark.databricks.delta.snapshotPartitions")
# and the driver's heap at Spark's 1g, where the runner gives a local master a quarter of the
# machine's memory (set before the JVM starts: SPARK_DRIVER_MEMORY, which the runner respects)
SPARK_DEFAULT_DRIVER_MEMORY = "1g"
# and Spark's cache of compiled code at its 100 entries (static: set in the target before start)
SPARK_DEFAULT_CODEGEN_CACHE = "100"


@dataclass
class BatchTiming:
    batch_id: int
    started: float  # epoch seconds
    seconds: float  # the whole foreachBatch call


@dataclass
class HandwrittenResult:
    variant: str
    batches: list[BatchTiming] = field(default_factory=list)
    # Spark's StreamingQueryProgress.durationMs per batch (addBatch, triggerExecution, ...)
    progress: list[dict[str, object]] = field(default_factory=list)

    def write(self, path: Path) -> None:
        path.write_text(json.dumps(asdict(self), indent=1))


def arguments(description: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--project", type=Path, required=True, help="its project.yml's target")
    parser.add_argument("--landing", type=Path, required=True, help="the order files")
    parser.add_argument("--result", type=Path, required=True, help="JSON written at the end")
    parser.add_argument("--optimize-every", type=int, default=0)
    parser.add_argument(
        "--stream",
        metavar="TRIGGER",
        help="stream until SIGTERM on this processing-time trigger, reading every new file "
        "each batch (goal 3's freshness), instead of every file now, one a batch",
    )
    parser.add_argument(
        "--spark-defaults",
        action="store_true",
        help=f"leave {', '.join(RUNNER_TUNING)} at their defaults, as the seeds' recipe does",
    )
    return parser.parse_args()


def runner_like_session(
    project_dir: Path, app_name: str, spark_defaults: bool = False
) -> tuple[SparkSession, Path]:
    """The session the runner would build for this project's target, and its warehouse; with
    ``spark_defaults``, the settings in RUNNER_TUNING go back to Spark's and Delta's defaults
    (both are session settings, so unsetting them is enough)."""
    target = load(project_dir).target
    if spark_defaults:  # Spark's own heap and code cache, not the runner's (both set at start)
        os.environ["SPARK_DRIVER_MEMORY"] = SPARK_DEFAULT_DRIVER_MEMORY
        defaults = {CODEGEN_CACHE: SPARK_DEFAULT_CODEGEN_CACHE}
        target = replace(target, spark_conf={**target.spark_conf, **defaults})
    spark = build_session(target, app_name=app_name)
    if spark_defaults:
        for key in RUNNER_TUNING:
            spark.conf.unset(key)
        settings = spark.conf.getAll
        print(
            "left at their defaults: "
            + ", ".join(f"{k}={settings.get(k, 'not set')}" for k in RUNNER_TUNING)
            + f", driver heap {SPARK_DEFAULT_DRIVER_MEMORY}"
            + f", {CODEGEN_CACHE}={settings.get(CODEGEN_CACHE, 'not set')}",
            flush=True,
        )
    assert isinstance(target.warehouse, Path), "the bench writes to a local warehouse"
    return spark, target.warehouse


def start_query(
    spark: SparkSession,
    landing: Path,
    checkpoint: Path,
    function: BatchFunction,
    result: HandwrittenResult,
    trigger: str | None,
) -> StreamingQuery:
    """The stream of order files in ``landing`` through ``function``, each call timed: with
    no ``trigger``, every file now, one a batch (availableNow); else every new file each
    batch, on that processing-time trigger."""
    reader = spark.readStream.format("json").schema(EVENT_SCHEMA)
    if trigger is None:
        reader = reader.option("maxFilesPerTrigger", 1)
    writer = (
        reader.load(str(landing))
        .writeStream.queryName(result.variant)
        .option("checkpointLocation", str(checkpoint))
        .foreachBatch(timed(function, result))
    )
    if trigger is None:
        return writer.trigger(availableNow=True).start()
    return writer.trigger(processingTime=trigger).start()


def run_available_now(
    spark: SparkSession,
    landing: Path,
    checkpoint: Path,
    function: BatchFunction,
    result: HandwrittenResult,
) -> None:
    """Stream every file in ``landing`` through ``function``, one file per batch, timing each
    call; then keep Spark's own per-batch durations."""
    query = start_query(spark, landing, checkpoint, function, result, None)
    query.awaitTermination()
    keep_progress(query, result)


def run_until_stopped(
    spark: SparkSession,
    landing: Path,
    checkpoint: Path,
    function: BatchFunction,
    result: HandwrittenResult,
    trigger: str,
) -> None:
    """Stream every new file in ``landing`` (all of them each batch) through ``function`` on
    a processing-time ``trigger`` until SIGTERM, then stop the query (goal 3 sends it once
    every landed file's rows are visible)."""
    stopping = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stopping.set())
    query = start_query(spark, landing, checkpoint, function, result, trigger)
    while not stopping.is_set() and query.isActive:
        stopping.wait(0.5)
    query.stop()
    keep_progress(query, result)


def timed(function: BatchFunction, result: HandwrittenResult) -> BatchFunction:
    """``function`` with a clock around each call, kept in ``result``."""

    def call(batch: DataFrame, batch_id: int) -> None:
        started, clock = time.time(), time.monotonic()
        function(batch, batch_id)
        seconds = time.monotonic() - clock
        result.batches.append(BatchTiming(batch_id, started, seconds))
        print(f"{result.variant} batch {batch_id}: {seconds:.2f}s", flush=True)

    return call


def keep_progress(query: StreamingQuery, result: HandwrittenResult) -> None:
    """Spark's own durations of each batch of ``query``."""
    result.progress = [
        {"batchId": p["batchId"], "numInputRows": p["numInputRows"], **p["durationMs"]}
        for p in query.recentProgress
    ]
