"""Benchmark what Delta's file-list verification costs a JVM whose time zone is not UTC.

Delta 4.4 keeps a small table's file list in each commit's checksum file, and in a JVM whose
default time zone is not UTC (``TZ=Europe/Paris``, say) it checks that list on every commit by
rebuilding the table's whole state (``allFilesInCrc.verificationMode.forceOnNonUTC``).
Open-source Delta never reads that list back, so the runner turns the check off
(runner/spark/session/builder.py's defaults). This bench runs, in one JVM started with the
given time zone, the MERGE benches' 2,000-event batches into 20,000-row targets
(bench/merge_batches.py) and one-row appends to event logs made as the runner makes them,
with the check as Delta ships it and off, taking turns:

    .venv/bin/python bench/non_utc_bench.py [--time-zone Europe/Paris] [--batches 16]

Writes bench/results/non-utc.md. The first three of each kind are left out (warm-up).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "bench" / "results" / "non-utc.md"
CHECK = "spark.databricks.delta.allFilesInCrc.verificationMode.forceOnNonUTC.enabled"
WARM_UP = 3
TARGET_ROWS = 20_000
BATCH_EVENTS = 2_000  # bench/merge_batches.py's batches
KINDS = {"shipped": "true", "runner": "false"}  # the check as Delta ships it, and off


def measure(batches: int, scratch: Path) -> dict[str, dict[str, list[float]]]:
    """In this process (started with the time zone under test): seconds per MERGE and per
    event-log append of each kind. The targets, batches and MERGE are the MERGE benches'
    (bench/merge_batches.py); each kind's event log is made as the runner makes it."""
    sys.path.insert(0, str(REPO))
    from bench.merge_batches import MERGE, batch_of, build_target
    from runner.project import load
    from runner.spark.batch.eventlog import EVENT_LOG_SCHEMA, ensure_event_log, event_log_location
    from runner.spark.session.builder import build_session, temporary_conf

    target = load(REPO, None, {}).target
    spark = build_session(target, "non-utc-bench")
    seconds: dict[str, dict[str, list[float]]] = {k: {"merge": [], "append": []} for k in KINDS}
    logs = {}
    for kind in KINDS:
        build_target(spark, scratch / kind, TARGET_ROWS, deletion_vectors=False)
        warehouse = replace(target, warehouse=scratch / f"{kind}_warehouse")
        ensure_event_log(spark, warehouse)
        logs[kind] = str(event_log_location(warehouse))
    for batch in range(batches):
        batch_of(spark, TARGET_ROWS, batch).createOrReplaceTempView("batch")
        row = ("m", batch, "q", dt.datetime.now(), 1.0, BATCH_EVENTS, 1, 2, 3, 0, [], False, [],
               [], 0, None)  # fmt: skip
        for kind, check in KINDS.items():
            with temporary_conf(spark, {CHECK: check}):
                started = time.perf_counter()
                spark.sql(MERGE.format(table=scratch / kind)).collect()
                seconds[kind]["merge"].append(time.perf_counter() - started)
                append = spark.createDataFrame([row], EVENT_LOG_SCHEMA).write.format("delta")
                started = time.perf_counter()
                append.mode("append").save(logs[kind])
                seconds[kind]["append"].append(time.perf_counter() - started)
        print(f"batch {batch + 1}/{batches}", flush=True)
    spark.stop()
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--time-zone", default="Europe/Paris", help="the JVM's default zone")
    parser.add_argument("--batches", type=int, default=16, help="MERGEs and appends of each")
    parser.add_argument("--measure", type=Path, help=argparse.SUPPRESS)  # the child's output
    args = parser.parse_args()
    if args.measure is not None:
        with tempfile.TemporaryDirectory(prefix="non-utc-bench-") as scratch:
            seconds = measure(args.batches, Path(scratch))
        args.measure.write_text(json.dumps(seconds))
        return
    with tempfile.TemporaryDirectory(prefix="non-utc-bench-out-") as out:
        answer = Path(out) / "seconds"
        env = {**os.environ, "TZ": args.time_zone}
        command = [sys.executable, __file__, "--batches", str(args.batches), "--measure", answer]
        subprocess.run(command, env=env, check=True)
        seconds = json.loads(answer.read_text())
    write_results(args, seconds)


def write_results(args: argparse.Namespace, seconds: dict[str, dict[str, list[float]]]) -> None:
    def median(kind: str, what: str) -> float:
        return statistics.median(seconds[kind][what][WARM_UP:])

    now = dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    lines = [
        "# Delta's file-list check in a JVM outside UTC",
        "",
        f"`.venv/bin/python bench/non_utc_bench.py --time-zone {args.time_zone} --batches "
        f"{args.batches}`, {now}, {os.cpu_count()} CPUs, Python {platform.python_version()}.",
        "",
        f"One JVM with `TZ={args.time_zone}`, the runner's session settings; per batch, a "
        f"MERGE of {BATCH_EVENTS:,} events into a {TARGET_ROWS:,}-row table (the MERGE benches' "
        "batches and sequence-guarded MERGE) and a one-row "
        "event-log append, with the check as Delta ships it and with the runner's default "
        f"(`{CHECK}` false), taking turns. Median seconds over batches {WARM_UP + 1} to "
        f"{args.batches}.",
        "",
        "| | MERGE (s) | event-log append (s) |",
        "|---|---|---|",
        f"| check on (Delta's default) | {median('shipped', 'merge'):.3f} | "
        f"{median('shipped', 'append'):.3f} |",
        f"| check off (the runner) | {median('runner', 'merge'):.3f} | "
        f"{median('runner', 'append'):.3f} |",
        "",
        "A blind append (the event log's) rebuilds the table's state for the check alone; a "
        "MERGE has already rebuilt the state of the version it read, so the check costs it "
        "less. The check only runs while a table has at most 50 files (Delta keeps no file "
        "list in the checksum beyond that).",
    ]
    RESULTS.write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
