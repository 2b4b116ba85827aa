"""The example model end to end on real Spark and Delta, through `runner run`."""

from __future__ import annotations

import json
import re
import shutil
from datetime import datetime
from decimal import Decimal
from pathlib import Path

import pytest
from pyspark.sql import SparkSession

from tests.conftest import land_events, write_project
from tests.spark.conftest import rows_of

SAMPLE = Path(__file__).resolve().parents[2] / "sample_data" / "orders"


def land_sample(project: Path, names: list[str]) -> None:
    for name in names:
        lines = (SAMPLE / name).read_text().splitlines()
        land_events(project / "target" / "landing" / "orders", name, lines)


def t(hhmm: str) -> datetime:
    return datetime.fromisoformat(f"2024-01-01T{hhmm}:00")


EXPECTED_ORDERS = [
    # o1: a duplicate key in batch 0 collapsed (paid 10:05 wins), then shipped at 12:00
    ("o1", "c1", "shipped", Decimal("10.00"), t("12:00")),
    # o2: shipped at 11:00 is kept; the late 'paid' at 10:30 (batch 2) does not overwrite it
    ("o2", "c2", "shipped", Decimal("25.50"), t("11:00")),
    # o3 deleted in batch 1; o4 deleted in batch 3; o6 inserted and deleted inside batch 3
    ("o5", "c3", "paid", Decimal("5.00"), t("12:30")),
]


def test_example_streams_four_batches_into_delta(spark: SparkSession, cli, example_project):
    """Four files, four batches: the table, its history and Change Data Feed, and the event
    log's row per batch (one run serves all: a run costs seconds)."""
    land_sample(example_project, ["001.json", "002.json", "003.json", "004.json"])

    result = cli("run", "--model", "orders_merge", "--project-dir", example_project)

    assert result.exit_code == 0, result.output
    for batch_id in range(4):
        assert f"orders_merge batch {batch_id}:" in result.output
    assert "batch 0: 5 rows in; inserted 3, updated 0, deleted 0" in result.output
    assert rows_of(spark, "silver.orders", "order_id") == EXPECTED_ORDERS

    history = spark.sql("DESCRIBE HISTORY silver.orders").collect()
    operations = [row["operation"] for row in sorted(history, key=lambda r: r["version"])]
    assert operations[0] == "CREATE TABLE"
    assert operations.count("MERGE") == 4
    assert operations.count("OPTIMIZE") == 2  # optimize_every=2: after batches 1 and 3
    optimize = next(r for r in history if r["operation"] == "OPTIMIZE")
    assert optimize["operationParameters"]["zOrderBy"] == '["customer_id"]'

    changes = spark.sql(
        "SELECT order_id, _change_type, status FROM table_changes('silver.orders', 1)"
    ).collect()
    kinds = {(r["order_id"], r["_change_type"]) for r in changes}
    assert ("o3", "insert") in kinds and ("o3", "delete") in kinds
    assert ("o2", "update_postimage") in kinds
    assert ("o4", "delete") in kinds
    assert not any(order == "o6" for order, _ in kinds)  # never reached the table
    late = [r for r in changes if r["order_id"] == "o2" and r["status"] == "paid"]
    assert late == [], "the late, older o2 event must not appear as a change"

    # the event log: one row per batch, with its counts and statements
    result = cli("history", "--model", "orders_merge", "-p", example_project, "--format", "json")

    assert result.exit_code == 0, result.output
    batches = json.loads(result.output)
    assert [b["batch_id"] for b in batches] == [0, 1, 2, 3]
    assert [b["input_rows"] for b in batches] == [5, 3, 3, 4]
    counts = [(b["inserted"], b["updated"], b["deleted"]) for b in batches]
    assert counts == [(3, 0, 0), (1, 1, 1), (1, 1, 0), (0, 1, 1)]
    assert [[s["keyword"] for s in b["statements"]] for b in batches][1] == [
        "CREATE",
        "MERGE",
        "OPTIMIZE",
    ]
    table = cli("history", "--model", "orders_merge", "-p", example_project)
    assert "orders_merge: last 4 batches" in table.output

    # `runner show`: the table read by its path, counted from its rows when under the limit,
    # counted apart when the limit cuts it; a model not run yet shows its empty target
    shown = cli("show", "--model", "orders_merge", "-p", example_project)
    assert shown.exit_code == 0, shown.output
    assert "silver.orders (3 rows)" in shown.output
    rows = [shown.output.find(f" {order_id} ") for order_id, *_ in EXPECTED_ORDERS]
    assert -1 not in rows and rows == sorted(rows)  # every row, by the unique key
    cut = cli("show", "--model", "orders_merge", "-n", "1", "-p", example_project)
    assert "silver.orders (3 rows)" in cut.output and "o1" in cut.output
    assert "o5" not in cut.output
    empty = cli("show", "--model", "customer_totals", "-p", example_project)
    assert empty.exit_code == 0, empty.output
    assert "gold.customer_totals (0 rows)" in empty.output and "customer_id" in empty.output


EXPECTED_TOTALS = [
    ("c1", 1, Decimal("10.00")),
    ("c2", 1, Decimal("25.50")),
    ("c3", 1, Decimal("5.00")),
]


@pytest.mark.parametrize("files_per_run", [4, 2])
def test_customer_totals_follow_the_change_data_feed(
    spark: SparkSession, cli, example_project, files_per_run: int
):
    """orders_merge+ runs orders_merge, then customer_totals over its Change Data Feed; the
    totals equal an aggregate of the final orders table whether the feed arrives at once or in
    two runs (the second updates o1 and deletes o4, rows the first run's totals counted). Each
    run resumes from the checkpoint: it reads only the files landed since the one before (a
    batch per file: maxFilesPerTrigger 1), and a run with none does nothing."""
    names = ["001.json", "002.json", "003.json", "004.json"]
    for start in range(0, len(names), files_per_run):
        land_sample(example_project, names[start : start + files_per_run])
        result = cli("run", "--select", "orders_merge+", "--project-dir", example_project)
        assert result.exit_code == 0, result.output
        assert result.output.count("orders_merge batch") == files_per_run  # only the new files
        assert result.output.index("orders_merge batch") < result.output.index(
            "customer_totals batch"
        )

    assert rows_of(spark, "silver.orders", "order_id") == EXPECTED_ORDERS
    assert rows_of(spark, "gold.customer_totals", "customer_id") == EXPECTED_TOTALS
    recomputed = spark.sql(
        "SELECT customer_id, COUNT(*), CAST(SUM(amount) AS DECIMAL(14,2)) FROM silver.orders "
        "GROUP BY customer_id ORDER BY customer_id"
    ).collect()
    assert [tuple(r) for r in recomputed] == EXPECTED_TOTALS

    versions_before = spark.sql("DESCRIBE HISTORY silver.orders").count()
    again = cli("run", "--select", "orders_merge+", "--project-dir", example_project)
    assert again.exit_code == 0 and re.search(r" batch \d+:", again.output) is None
    assert spark.sql("DESCRIBE HISTORY silver.orders").count() == versions_before


def test_a_run_killed_before_its_first_offset_write_finished_starts_again(
    spark: SparkSession, cli, example_project
):
    """SIGKILL while Spark renames offsets/0 into place leaves only its temp files; Spark would
    refuse that checkpoint as 'not empty on batch 0' for ever. The runner clears them first."""
    offsets = example_project / "target" / "local" / "checkpoints" / "orders_merge" / "offsets"
    offsets.mkdir(parents=True)
    temp = ".0.0f8e2a3c-4b5d-4e6f-8a9b-0c1d2e3f4a5b.tmp"
    (offsets / temp).write_text("v1\n")
    (offsets / f".{temp}.crc").write_bytes(b"crc")
    land_sample(example_project, ["001.json"])

    result = cli("run", "--model", "orders_merge", "--project-dir", example_project)

    assert result.exit_code == 0, result.output
    assert "orders_merge: removed 2 temp file(s) a killed start left" in result.output
    assert "orders_merge batch 0: 5 rows in" in result.output
    assert sorted(p.name for p in offsets.iterdir() if not p.name.startswith(".")) == ["0"]


TOTALS_MODEL = """{{ config(stream='orders', target='gold.customer_totals',
                    unique_key='customer_id', columns='customer_id STRING, total DECIMAL(12,2)') }}
CREATE OR REPLACE TEMPORARY VIEW batch_totals AS
SELECT customer_id, SUM(amount) AS amount FROM {{ batch }} GROUP BY customer_id;

MERGE INTO {{ this }} AS t
USING batch_totals AS s
ON t.customer_id = s.customer_id
WHEN MATCHED THEN UPDATE SET t.total = t.total + s.amount
WHEN NOT MATCHED THEN INSERT (customer_id, total) VALUES (s.customer_id, s.amount);
"""


def event(order: str, customer: str, amount: str, hhmm: str) -> str:
    return (
        f'{{"order_id": "{order}", "customer_id": "{customer}", "status": "created", '
        f'"amount": {amount}, "updated_at": "2024-01-01T{hhmm}:00", "op": "U"}}'
    )


def test_replayed_batch_is_not_applied_twice(spark: SparkSession, cli, tmp_path: Path):
    """Spark replays a batch whose commit never reached the checkpoint (a crash after the MERGE);
    Delta's idempotent-write settings make the replayed MERGE a no-op."""
    project = write_project(tmp_path / "totals", {"customer_totals": TOTALS_MODEL})
    landing = project / "landing" / "orders"
    land_events(
        landing, "1.json", [event("o1", "c1", "10", "10:00"), event("o2", "c2", "5", "10:00")]
    )
    land_events(landing, "2.json", [event("o3", "c1", "2.5", "11:00")])
    assert cli("run", "--model", "customer_totals", "--project-dir", project).exit_code == 0
    expected = [("c1", Decimal("12.50")), ("c2", Decimal("5.00"))]
    assert rows_of(spark, "gold.customer_totals", "customer_id") == expected

    # Forget that batch 1 finished: as if the process died between the MERGE and the commit.
    commits = project / "target" / "checkpoints" / "customer_totals" / "commits"
    (commits / "1").unlink()
    for crc in commits.glob(".1.crc"):
        crc.unlink()
    replay = cli("run", "--model", "customer_totals", "--project-dir", project)

    assert replay.exit_code == 0, replay.output
    assert "customer_totals batch 1" in replay.output
    assert "already applied, skipped: batch[1]" in replay.output
    assert rows_of(spark, "gold.customer_totals", "customer_id") == expected
    # the replay found its event-log row (the offset log held batch 1 at the start): one row
    # per batch, as `runner history` shows
    log = spark.read.format("delta").load(
        str(project / "target" / "warehouse" / "_runner/event_log")
    )
    assert sorted(r.batch_id for r in log.where("model = 'customer_totals'").collect()) == [0, 1]


BROKEN_MERGE = """{{ config(stream='orders', target='silver.broken', unique_key='order_id') }}

MERGE INTO {{ this }} AS t
USING {{ batch }} AS s
ON t.order_id = s.order_id
WHEN MATCHED THEN UPDATE SET t.status = s.state
WHEN NOT MATCHED THEN INSERT *;
"""


def test_spark_sql_error_names_model_line_and_loses_no_data(
    spark: SparkSession, cli, tmp_path: Path
):
    project = write_project(tmp_path / "broken", {"broken": BROKEN_MERGE})
    land_events(project / "landing" / "orders", "1.json", [event("o1", "c1", "1", "10:00")])

    result = cli("run", "--model", "broken", "--project-dir", project)

    assert result.exit_code == 1
    stderr = result.stderr
    model_file = project / "models" / "broken.sql"
    assert f"{model_file}:6:" in stderr  # the line with s.state
    assert "Cannot resolve s.state" in stderr
    assert "WHEN MATCHED THEN UPDATE SET t.status = s.state" in stderr  # the failing statement
    for noise in ("Traceback", "py4j", "at org.apache", "Py4JJavaError"):
        assert noise not in stderr
    assert spark.table("silver.broken").count() == 0

    # Fix the model: the batch that failed is processed on the next run; nothing was lost.
    model_file.write_text(BROKEN_MERGE.replace("s.state", "s.status"))
    fixed = cli("run", "--model", "broken", "--project-dir", project)
    assert fixed.exit_code == 0, fixed.stderr
    assert [r["order_id"] for r in spark.table("silver.broken").collect()] == ["o1"]


def test_existing_target_is_attached_and_missing_properties_set(
    spark: SparkSession, cli, example_project
):
    land_sample(example_project, ["001.json"])
    assert cli("run", "--model", "orders_merge", "--project-dir", example_project).exit_code == 0
    location = example_project / "target" / "local" / "warehouse" / "silver" / "orders"
    spark.sql(f"ALTER TABLE delta.`{location}` UNSET TBLPROPERTIES ('delta.enableChangeDataFeed')")
    spark.sql("DROP TABLE silver.orders")  # a new session knows no table names

    land_sample(example_project, ["002.json"])
    result = cli("run", "--model", "orders_merge", "--project-dir", example_project)

    assert result.exit_code == 0, result.output
    properties = {
        r["key"]: r["value"] for r in spark.sql("SHOW TBLPROPERTIES silver.orders").collect()
    }
    assert properties["delta.enableChangeDataFeed"] == "true"
    assert spark.table("silver.orders").count() == 3  # o1, o2, o4 (o3 deleted in batch 1)
    assert shutil.which("java")
