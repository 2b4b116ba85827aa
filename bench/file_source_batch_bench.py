"""Per-batch cost of the file source, before and after issue 27's redesign, on a small batch.

    .venv/bin/python bench/file_source_batch_bench.py [--lines 2000] [--rounds 15]
        [--before 8f8e9e6]

One SparkSession with the runner's settings (the project's target). The batch is one JSON-lines
file of ``--lines`` events (one line in 200 malformed, so the quarantine write runs), as in the
upsert bench's batches. Each round times, for the file source as it is now and as it was at
commit ``--before`` (loaded from git), the source's work on one batch as ``run_batch`` sees it:
``prepare_file_batch`` (parse, persist, count) and ``quarantine_rejected`` (the quarantine write)
plus one pass over the good rows, then ``release``. The two take turns; the first 3 rounds are
left out (JVM warm-up).
Writes bench/results/file_source_batch.md.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import ModuleType

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from pyspark.sql import DataFrame, SparkSession  # noqa: E402
from pyspark.sql import functions as F  # noqa: E402

from bench.upsert.processes import load_average  # noqa: E402
from runner.project import load  # noqa: E402
from runner.spark.session.builder import build_session  # noqa: E402
from runner.spark.sources import files as file_source  # noqa: E402
from runner.spark.sources.columns import BLOCK_COLUMN, FILE_COLUMN, LINE_COLUMN  # noqa: E402
from runner.spark.sources.source_batch import (  # noqa: E402
    BatchSourceContext,
    quarantine_rejected,
)
from runner.specs.stream import StreamSpec, TriggerSpec  # noqa: E402

RESULTS = REPO / "bench" / "results" / "file_source_batch.md"
WARM_UP = 3
SCHEMA = "order_id STRING, amount DECIMAL(10,2), updated_at TIMESTAMP, op STRING"


def old_module(revision: str, scratch: Path) -> ModuleType:
    """runner/spark/sources/files.py as it was at ``revision``, imported under another name."""
    source = subprocess.run(
        ["git", "show", f"{revision}:runner/spark/sources/files.py"],
        cwd=REPO,
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    path = scratch / "file_source_before.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location("file_source_before", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def write_batch(landing: Path, lines: int) -> None:
    landing.mkdir(parents=True)
    with (landing / "batch.json").open("w") as out:
        for n in range(lines):
            if n % 200 == 199:
                out.write(f'{{"order_id":"o{n}","amount":\n')
            else:
                out.write(
                    f'{{"order_id":"o{n}","amount":{n % 1000}.{n % 100:02d},'
                    '"updated_at":"2024-01-01T10:00:00Z","op":"U","channel":"web"}\n'
                )


def batch_frame(spark: SparkSession, landing: Path, before: bool) -> DataFrame:
    """The micro-batch DataFrame each version's ``read_file_stream`` gives, read as a batch."""
    if before:
        frame = spark.read.format("text").option("wholetext", "true").load(str(landing))
        return frame.select(
            F.col("_metadata.file_path").alias("_file"), F.col("value").alias("_text")
        )
    frame = spark.read.format("text").option("lineSep", "\n").load(str(landing))
    return frame.select(
        F.col("_metadata.file_path").alias(FILE_COLUMN),
        F.col("_metadata.file_block_start").alias(BLOCK_COLUMN),
        F.col("value").alias(LINE_COLUMN),
    )


def one_batch(
    module: ModuleType, spark: SparkSession, stream: StreamSpec, warehouse: Path, batch_id: int
) -> tuple[float, int]:
    """Seconds of the source's work on one batch, and the good rows it gave."""
    frame = batch_frame(spark, stream.path or Path(), module is not file_source)
    started = time.perf_counter()
    context = BatchSourceContext("m", batch_id, warehouse, "bench")
    if module is file_source:  # parsing and the quarantine write are two calls
        batch = module.prepare_file_batch(stream, frame)
        quarantine_rejected(batch, context)
    else:  # a revision whose prepare_file_batch wrote the quarantine itself
        batch = module.prepare_file_batch(stream, frame, batch_id, "m", warehouse, "bench")
    try:
        rows = batch.rows.count()
    finally:
        batch.release()
    return time.perf_counter() - started, rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--before", default="8f8e9e6")
    args = parser.parse_args()
    load_before = load_average()
    target = load(REPO, None, {}).target
    spark = build_session(target, "file-source-batch-bench")
    seconds: dict[str, list[float]] = {"before": [], "after": []}
    with tempfile.TemporaryDirectory(prefix="file-source-batch-") as scratch_name:
        scratch = Path(scratch_name)
        modules = {"before": old_module(args.before, scratch), "after": file_source}
        landing = scratch / "landing"
        write_batch(landing, args.lines)
        stream = StreamSpec(
            name="orders",
            file=landing,
            line=1,
            format="json",
            path=landing,
            schema=SCHEMA,
            options={},
            trigger=TriggerSpec(kind="available_now"),
        )
        good = {}
        for round_ in range(args.rounds):
            for name, module in modules.items():
                warehouse = scratch / name
                took, good[name] = one_batch(module, spark, stream, warehouse, round_)
                if round_ >= WARM_UP:
                    seconds[name].append(took)
            print(f"round {round_ + 1}/{args.rounds}", end="\r", flush=True)
    spark.stop()
    assert good["before"] == good["after"], good
    write_results(seconds, args, load_before, load_average(), good["after"])
    print(RESULTS.read_text())


def write_results(
    seconds: dict[str, list[float]],
    args: argparse.Namespace,
    load_before: str,
    load_after: str,
    good: int,
) -> None:
    lines = [
        "# File source: per-batch cost, before and after issue 27",
        "",
        f"`python bench/file_source_batch_bench.py --lines {args.lines} --rounds {args.rounds}` "
        f"on {platform.node()}, {os.cpu_count()} cores; load average before {load_before}, "
        f"after {load_after} (the machine is shared with other Spark work: compare the two "
        "columns, which took turns, more than the absolute seconds). One JSON-lines file of "
        f"{args.lines} events ({good} good, the rest quarantined) per batch; the time of "
        "prepare_file_batch and quarantine_rejected (parse, persist, count, quarantine write) "
        "plus one pass over the "
        f"good rows. Before = commit {args.before} (whole file, Python UDF per line).",
        "",
        "| source | median s | mean s | min s | max s | batches |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for name, values in seconds.items():
        lines.append(
            f"| {name} | {statistics.median(values):.3f} | {statistics.mean(values):.3f} | "
            f"{min(values):.3f} | {max(values):.3f} | {len(values)} |"
        )
    RESULTS.write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
