"""Pre-build the targets of the target-size curve: one spark.range write per target, no
streaming, in the target's location in its curve project (where `runner run` attaches it).

    python -m bench.upsert.curve_targets REQUEST.json

REQUEST.json: ``[{"project": DIR, "rows": N, "files": F, "cluster_by": [...],
"table_properties": {...}, "table": NAME, "ordered": BOOL}, ...]`` (``table`` defaults to the
curve's; ``ordered``: files hold key ranges without clustering, as a target filled over time
by orders placed in order, goal 2's). Rows are
orders ``o00000000 ..`` with ``updated_at`` older than every curve event. A plain target's
files each hold keys from the whole range (round-robin); a clustered one (``CLUSTER BY``) is
written range-partitioned and sorted by the clustering columns: the layout clustering makes,
in F files (an OPTIMIZE here would compact a small table into one file, and then nothing could
be skipped at any size).
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from bench.upsert.events import CUSTOMERS, KEY_DIGITS, TARGET_COLUMNS, TARGET_ROWS_TIME
from bench.upsert.projects import CURVE_TABLE
from runner.project import load
from runner.spark.session.builder import build_session


def target_rows(spark: SparkSession, rows: int) -> DataFrame:
    return spark.range(rows).select(
        F.format_string(f"o%0{KEY_DIGITS}d", "id").alias("order_id"),
        F.format_string("c%05d", F.col("id") % CUSTOMERS).alias("customer_id"),
        F.lit("created").alias("status"),
        ((F.col("id") % 100_000) / 100).cast("decimal(10,2)").alias("amount"),
        F.lit(TARGET_ROWS_TIME).cast("timestamp").alias("updated_at"),
    )


def build(
    spark: SparkSession,
    location: Path,
    rows: int,
    files: int,
    cluster_by: list[str],
    properties: dict[str, str],
    ordered: bool = False,
) -> None:
    clustering = f" CLUSTER BY ({', '.join(cluster_by)})" if cluster_by else ""
    settings = ", ".join(f"'{key}' = '{value}'" for key, value in properties.items())
    spark.sql(
        f"CREATE TABLE delta.`{location}` ({TARGET_COLUMNS}) USING DELTA{clustering}"
        + (f" TBLPROPERTIES ({settings})" if settings else "")
    )
    frame = target_rows(spark, rows)
    if cluster_by or ordered:
        keys = cluster_by or ["order_id"]
        frame = frame.repartitionByRange(files, *keys).sortWithinPartitions(*keys)
    else:
        frame = frame.repartition(files)
    frame.write.format("delta").mode("append").save(str(location))


def main() -> None:
    request = json.loads(Path(sys.argv[1]).read_text())
    spark = None
    for item in request:
        project = load(Path(item["project"]))
        spark = spark or build_session(project.target, app_name="bench:curve-targets")
        location = project.target.table_location(item.get("table", CURVE_TABLE))
        assert isinstance(location, Path), "the bench writes to a local warehouse"
        started = time.monotonic()
        build(
            spark,
            location,
            int(item["rows"]),
            int(item["files"]),
            list(item["cluster_by"]),
            dict(item.get("table_properties", {})),
            bool(item.get("ordered")),
        )
        print(
            f"built {item['rows']:,} rows in {item['files']} files at {location} "
            f"in {time.monotonic() - started:.1f}s",
            flush=True,
        )
    if spark is not None:
        spark.stop()


if __name__ == "__main__":
    main()
