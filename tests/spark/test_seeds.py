"""`runner seed` on real Delta: idempotent loads, and bad CSV rows reported before writing."""

from __future__ import annotations

from datetime import date
from pathlib import Path

from pyspark.sql import SparkSession

from tests.spark.conftest import rows_of

CUSTOMERS = [
    ("c1", "Ada Lovelace", "gold", date(2023, 3, 1)),
    ("c2", "Grace Hopper", "silver", date(2023, 6, 15)),
    ("c3", "Edsger Dijkstra", "bronze", date(2023, 11, 30)),
]


def history_versions(spark: SparkSession, table: str) -> list[int]:
    return sorted(r["version"] for r in spark.sql(f"DESCRIBE HISTORY {table}").collect())


def test_seed_twice_leaves_an_identical_table(spark: SparkSession, cli, example_project: Path):
    first = cli("seed", "-p", example_project)
    assert first.exit_code == 0, first.output
    assert "customers: loaded 3 rows in ref.customers (version 0)" in first.output
    assert rows_of(spark, "ref.customers", "customer_id") == CUSTOMERS
    location = example_project / "target" / "local" / "warehouse" / "ref" / "customers"
    assert (location / "_delta_log").is_dir()  # under the target's warehouse, like a model's

    second = cli("seed", "-p", example_project)

    # Same content: nothing is written, so the table and its version stay as they were.
    assert second.exit_code == 0, second.output
    assert "customers: unchanged, 3 rows in ref.customers (version 0)" in second.output
    assert rows_of(spark, "ref.customers", "customer_id") == CUSTOMERS
    assert history_versions(spark, "ref.customers") == [0]

    csv_file = example_project / "seeds" / "customers.csv"
    csv_file.write_text(csv_file.read_text().replace("bronze", "gold"))
    third = cli("seed", "--select", "customers", "-p", example_project)
    assert "customers: loaded 3 rows in ref.customers (version 1)" in third.output
    assert [r[2] for r in rows_of(spark, "ref.customers", "customer_id")] == [
        "gold",
        "silver",
        "gold",
    ]


def test_bad_csv_row_is_reported_with_file_line_and_column_before_writing(
    spark: SparkSession, cli, example_project: Path
):
    csv_file = example_project / "seeds" / "customers.csv"
    csv_file.write_text(csv_file.read_text() + "c4,Alan Turing,gold,someday\n")

    result = cli("seed", "-p", example_project)

    assert result.exit_code == 1
    assert f"{csv_file}:5: column 'signed_up': 'someday' is not a DATE" in result.stderr
    location = example_project / "target" / "local" / "warehouse" / "ref" / "customers"
    assert not location.exists()  # checked before anything was written
