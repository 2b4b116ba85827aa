"""Per-batch cost of the file source, as it is now against an earlier revision, on a small batch.

    .venv/bin/python bench/file_source_batch_bench.py [--lines 2000] [--rounds 15]
        [--before 29f8a54]

One SparkSession with the runner's settings (the project's target). The batch is one JSON-lines
file of ``--lines`` events (one line in 200 malformed, so the quarantine write runs), as in the
upsert bench's batches. Each round times, for the file source as it is now and as it was at
commit ``--before`` (its files.py, source_batch.py and columns.py loaded from git), the
source's work on one batch as ``run_batch`` sees it, in three parts: ``prepare_file_batch``
(parse, persist, count), ``quarantine_rejected`` (the quarantine write) and one pass over the
good rows (the model's read), then ``release``. Each part's wall time and the CPU seconds of
the JVM and this process (load-independent, unlike the walls). The two take turns; the first
3 rounds are left out (JVM warm-up). Writes bench/results/file_source_batch.md.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import platform
import resource
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

from bench.upsert.processes import load_average, process_cpu_seconds  # noqa: E402
from runner.project import load  # noqa: E402
from runner.spark.session.builder import build_session  # noqa: E402
from runner.spark.sources import files as file_source  # noqa: E402
from runner.spark.sources import source_batch  # noqa: E402
from runner.specs.stream import StreamSpec, TriggerSpec  # noqa: E402

RESULTS = REPO / "bench" / "results" / "file_source_batch.md"
WARM_UP = 3
SCHEMA = "order_id STRING, amount DECIMAL(10,2), updated_at TIMESTAMP, op STRING"


SOURCE_MODULES = ("columns", "source_batch", "files")


def old_modules(revision: str, scratch: Path) -> dict[str, ModuleType]:
    """runner/spark/sources/{columns,source_batch,files}.py as they were at ``revision``, each
    imported under another name and importing the others of the same revision (a revision
    without source_batch.py keeps today's)."""
    modules: dict[str, ModuleType] = {"source_batch": source_batch}
    for name in SOURCE_MODULES:
        shown = subprocess.run(
            ["git", "show", f"{revision}:runner/spark/sources/{name}.py"],
            cwd=REPO,
            capture_output=True,
            text=True,
        )
        if shown.returncode != 0 and name == "source_batch":
            continue
        shown.check_returncode()
        source = shown.stdout
        for other in SOURCE_MODULES:
            source = source.replace(f"runner.spark.sources.{other}", f"file_source_before_{other}")
        path = scratch / f"file_source_before_{name}.py"
        path.write_text(source)
        spec = importlib.util.spec_from_file_location(path.stem, path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[path.stem] = module
        spec.loader.exec_module(module)
        modules[name] = module
    return modules


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


def batch_frame(spark: SparkSession, landing: Path) -> DataFrame:
    """The micro-batch DataFrame ``read_file_stream`` gives, read as a batch."""
    return file_source.file_lines(
        spark.read.format("text").option("lineSep", "\n").load(str(landing))
    )


class Clock:
    """Wall and CPU seconds (the JVM's and this process's) since the last ``lap``."""

    def __init__(self, jvm_pid: int) -> None:
        self.jvm_pid = jvm_pid
        self.wall, self.cpu = self.now()

    def now(self) -> tuple[float, float]:
        own = resource.getrusage(resource.RUSAGE_SELF)
        cpu = own.ru_utime + own.ru_stime + process_cpu_seconds(self.jvm_pid)
        return time.perf_counter(), cpu

    def lap(self) -> tuple[float, float]:
        wall, cpu = self.now()
        took = (wall - self.wall, cpu - self.cpu)
        self.wall, self.cpu = wall, cpu
        return took


PARTS = ("prepare", "quarantine", "rows", "total")


def one_batch(
    modules: dict[str, ModuleType],
    spark: SparkSession,
    stream: StreamSpec,
    warehouse: Path,
    batch_id: int,
    jvm_pid: int,
) -> tuple[dict[str, tuple[float, float]], int]:
    """(wall, CPU) seconds of each part of the source's work on one batch, and the good rows."""
    frame = batch_frame(spark, stream.path or Path())
    context = modules["source_batch"].BatchSourceContext("m", batch_id, warehouse, "bench")
    clock = Clock(jvm_pid)
    parts = {}
    batch = modules["files"].prepare_file_batch(stream, frame)
    parts["prepare"] = clock.lap()
    try:
        modules["source_batch"].quarantine_rejected(batch, context)
        parts["quarantine"] = clock.lap()
        rows = batch.rows.count()
        parts["rows"] = clock.lap()
    finally:
        batch.release()
    parts["total"] = (
        sum(wall for wall, _ in parts.values()),
        sum(cpu for _, cpu in parts.values()),
    )
    return parts, rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--before", default="29f8a54")
    args = parser.parse_args()
    load_before = load_average()
    target = load(REPO, None, {}).target
    spark = build_session(target, "file-source-batch-bench")
    jvm_pid = spark.sparkContext._jvm.java.lang.ProcessHandle.current().pid()  # type: ignore[union-attr]
    seconds: dict[str, dict[str, list[tuple[float, float]]]] = {
        "before": {part: [] for part in PARTS},
        "after": {part: [] for part in PARTS},
    }
    with tempfile.TemporaryDirectory(prefix="file-source-batch-") as scratch_name:
        scratch = Path(scratch_name)
        revisions = {
            "before": old_modules(args.before, scratch),
            "after": {"source_batch": source_batch, "files": file_source},
        }
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
            for name, modules in revisions.items():
                warehouse = scratch / name
                parts, good[name] = one_batch(modules, spark, stream, warehouse, round_, jvm_pid)
                if round_ >= WARM_UP:
                    for part, took in parts.items():
                        seconds[name][part].append(took)
            print(f"round {round_ + 1}/{args.rounds}", end="\r", flush=True)
    spark.stop()
    assert good["before"] == good["after"], good
    write_results(seconds, args, load_before, load_average(), good["after"])
    print(RESULTS.read_text())


def write_results(
    seconds: dict[str, dict[str, list[tuple[float, float]]]],
    args: argparse.Namespace,
    load_before: str,
    load_after: str,
    good: int,
) -> None:
    lines = [
        "# File source: per-batch cost, now against an earlier revision",
        "",
        f"`python bench/file_source_batch_bench.py --lines {args.lines} --rounds {args.rounds} "
        f"--before {args.before}` on {platform.node()}, {os.cpu_count()} cores; load average "
        f"before {load_before}, after {load_after} (the machine is shared with other Spark "
        "work: compare the two rows of a part, which took turns, and the CPU seconds more than "
        f"the walls). One JSON-lines file of {args.lines} events ({good} good, the rest "
        "quarantined) per batch. Parts: prepare_file_batch (parse, persist, count), "
        "quarantine_rejected (the quarantine write), one pass over the good rows. CPU: the "
        "JVM's and the bench process's user + system seconds. Median over "
        f"{args.rounds - WARM_UP} batches each.",
        "",
        "| part | source | median wall s | median CPU s | min wall s | max wall s |",
        "|---|---|---:|---:|---:|---:|",
    ]
    for part in PARTS:
        for name, label in (("before", f"before ({args.before})"), ("after", "now")):
            walls = [wall for wall, _ in seconds[name][part]]
            cpus = [cpu for _, cpu in seconds[name][part]]
            lines.append(
                f"| {part} | {label} | {statistics.median(walls):.3f} | "
                f"{statistics.median(cpus):.3f} | {min(walls):.3f} | {max(walls):.3f} |"
            )
    RESULTS.write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
