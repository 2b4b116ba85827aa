"""Read back what the variants wrote, in one JVM at the end of the bench: the correctness
check, the runner's event logs and the Delta history of each target.

    python -m bench.upsert.readback REQUEST.json ANSWER.json

REQUEST.json::

    {"session_project": DIR,
     "checks": {GROUP: {"expected": FILE, "tables": {"runner": LOCATION, ...},
                        "keys_only": BOOL}, ...},
     "counts": {"append": LOCATION, ...},
     "event_logs": {"runner": [PROJECT_DIR, MODEL], ...},
     "histories": {"runner": LOCATION, ...},
     "scans": {"tables": {NAME: LOCATION, ...}, "copy_of": LOCATION, "copy": LOCATION}}

The answer holds, for each group of ``checks``, the rows of each table and of the expected
file and, for each pair, how many rows one has that the other lacks (with up to 5 of them;
with ``keys_only``, only the tables' rows whose key the expected file holds are compared: a
pre-built target's untouched rows are counted instead); for ``counts`` the rows found; the
event-log rows of each model and the event log's own commits; each target's commits with
their time and operation metrics; for ``scans`` (goal 4), each table's file count and the
median seconds of a full-scan query, and the same for a copy of ``copy_of`` written to
``copy`` and OPTIMIZEd (first, before anything is cached). It is written whether or not the
tables agree: the bench decides.
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from datetime import date, datetime
from pathlib import Path
from typing import Any

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from bench.upsert.plan import OPTIMIZED_COPY, SCAN_QUERY, SCAN_REPEATS
from runner.project import load
from runner.spark.batch.eventlog import event_log_location, read_history
from runner.spark.session.builder import build_session

COLUMNS = ("order_id", "customer_id", "status", "amount", "updated_at")
TEXT_SCHEMA = ", ".join(f"{c} STRING" for c in COLUMNS)
SHOWN = 5


def as_text(frame: DataFrame) -> DataFrame:
    """The target's columns as text: decimals as 12.30, timestamps as 2024-01-01 10:00:00."""
    return frame.select(*[F.col(c).cast("string").alias(c) for c in COLUMNS])


def compare(
    spark: SparkSession, expected: Path, tables: dict[str, str], keys_only: bool = False
) -> dict[str, Any]:
    frames = {"expected": spark.read.schema(TEXT_SCHEMA).json(str(expected))}
    keys = frames["expected"].select("order_id")
    for name, location in tables.items():
        frame = as_text(spark.read.format("delta").load(location))
        frames[name] = frame.join(keys, "order_id", "left_semi") if keys_only else frame
    for frame in frames.values():
        frame.cache()
    rows = {name: frame.count() for name, frame in frames.items()}
    names = list(frames)
    differences = []
    for position, left in enumerate(names):
        for right in names[position + 1 :]:
            only_left = frames[left].exceptAll(frames[right])
            only_right = frames[right].exceptAll(frames[left])
            differences.append(
                {
                    "left": left,
                    "right": right,
                    "only_left": only_left.count(),
                    "only_right": only_right.count(),
                    "examples_left": [r.asDict() for r in only_left.limit(SHOWN).collect()],
                    "examples_right": [r.asDict() for r in only_right.limit(SHOWN).collect()],
                }
            )
    return {"rows": rows, "differences": differences}


def history(spark: SparkSession, location: str) -> list[dict[str, Any]]:
    rows = spark.sql(f"DESCRIBE HISTORY delta.`{location}`").collect()
    return [
        {
            "version": r["version"],
            "operation": r["operation"],
            "timestamp": r["timestamp"].timestamp(),  # epoch seconds of the commit
            "metrics": dict(r["operationMetrics"] or {}),
        }
        for r in sorted(rows, key=lambda r: r["version"])
    ]


def event_log(spark: SparkSession, project_dir: str, model: str) -> dict[str, Any]:
    """The model's event-log rows, and the event log's own commits (one per batch): when
    each was committed tells how long the batch's event-log write took."""
    target = load(Path(project_dir)).target
    rows = read_history(spark, target, model, 100_000)
    return {
        "rows": [plain(r.asDict(recursive=True)) for r in rows],
        "commits": history(spark, str(event_log_location(target))),
    }


def plain(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [plain(v) for v in value]
    if isinstance(value, datetime | date):
        return value.isoformat()
    return value


def scans(spark: SparkSession, request: dict[str, Any]) -> dict[str, Any]:
    """Goal 4: each table's file count and a full-scan query's median seconds (SCAN_REPEATS
    runs after one to warm up, the tables taken in turn so a drift of the machine's load
    touches them alike), a freshly OPTIMIZEd copy of ``copy_of`` among them."""
    copy = request["copy"]
    spark.sql(
        f"CREATE TABLE delta.`{copy}` USING DELTA AS SELECT * FROM delta.`{request['copy_of']}`"
    )
    spark.sql(f"OPTIMIZE delta.`{copy}`")
    tables = {**request["tables"], OPTIMIZED_COPY: copy}
    seconds: dict[str, list[float]] = {name: [] for name in tables}
    for repeat in range(SCAN_REPEATS + 1):
        for name, location in tables.items():
            started = time.monotonic()
            spark.sql(SCAN_QUERY.format(location=location)).collect()
            if repeat:
                seconds[name].append(time.monotonic() - started)
    return {
        name: {
            "files": spark.sql(f"DESCRIBE DETAIL delta.`{location}`").collect()[0]["numFiles"],
            "seconds": statistics.median(seconds[name]),
        }
        for name, location in tables.items()
    }


def main() -> None:
    request = json.loads(Path(sys.argv[1]).read_text())
    spark = build_session(load(Path(request["session_project"])).target, app_name="bench:readback")
    answer: dict[str, Any] = {}
    if request.get("scans"):
        answer["scans"] = scans(spark, request["scans"])
    answer["checks"] = {
        group: compare(spark, Path(c["expected"]), c["tables"], bool(c.get("keys_only")))
        for group, c in request.get("checks", {}).items()
    }
    answer["counts"] = {
        name: spark.read.format("delta").load(location).count()
        for name, location in request.get("counts", {}).items()
    }
    answer["event_logs"] = {
        name: event_log(spark, project, model)
        for name, (project, model) in request.get("event_logs", {}).items()
    }
    answer["histories"] = {
        name: history(spark, location) for name, location in request.get("histories", {}).items()
    }
    Path(sys.argv[2]).write_text(json.dumps(answer, indent=1))
    spark.stop()


if __name__ == "__main__":
    main()
