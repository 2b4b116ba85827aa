"""Another job: a plain pyspark session with only the settings docs/deploy.md gives for the
shared catalog (no runner code). It reads a table by name each time the test asks, and prints
what it read as one JSON line.

    python read_by_name.py SETTINGS_JSON TABLE SIGNAL_DIR

Read N happens when SIGNAL_DIR/read-N appears; SIGNAL_DIR/stop ends it."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from pyspark.sql import SparkSession


def main() -> None:
    settings, table, signals = json.loads(sys.argv[1]), sys.argv[2], Path(sys.argv[3])
    builder = SparkSession.builder.master("local[2]").appName("another-job")
    for key, value in settings.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    print(json.dumps({"started": True}), flush=True)
    number = 0
    while not (signals / "stop").exists():
        if not (signals / f"read-{number}").exists():
            time.sleep(0.2)
            continue
        rows = spark.sql(f"SELECT * FROM {table} ORDER BY order_id").collect()
        detail = spark.sql(f"DESCRIBE DETAIL {table}").first()
        assert detail is not None
        print(
            json.dumps(
                {
                    "read": number,
                    "rows": [[str(value) for value in row] for row in rows],
                    "location": detail["location"],
                    "tables": sorted(
                        f"{db.name}.{t.name}"
                        for db in spark.catalog.listDatabases()
                        for t in spark.catalog.listTables(db.name)
                    ),
                }
            ),
            flush=True,
        )
        number += 1
    spark.stop()


if __name__ == "__main__":
    main()
