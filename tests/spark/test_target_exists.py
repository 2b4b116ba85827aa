"""Whether a model's target exists is read from its ``_delta_log`` on a session whose driver
runs in this process, even when the warehouse's folders are not there yet: a new project's
first run asked Spark (DESCRIBE HISTORY, 0.4 s for the first) for each of its tables."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import SparkSession

from runner.spark.delta.targets import delta_table_exists, sees_driver_files


@pytest.fixture
def statements(spark: SparkSession, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The SQL the session is asked to run from here on (it still runs)."""
    asked: list[str] = []
    run = spark.sql

    def recorded(query: str, *args: Any, **kwargs: Any) -> Any:
        asked.append(query)
        return run(query, *args, **kwargs)

    monkeypatch.setattr(spark, "sql", recorded)
    return asked


def test_a_target_under_missing_folders_is_absent_without_asking_spark(
    spark: SparkSession, tmp_path: Path, statements: list[str]
) -> None:
    location = tmp_path / "warehouse" / "silver" / "orders"
    assert sees_driver_files(spark, location)
    assert not delta_table_exists(spark, location)
    assert statements == []


def test_a_written_table_is_found_and_its_empty_sibling_is_not(
    spark: SparkSession, tmp_path: Path, statements: list[str]
) -> None:
    location = tmp_path / "warehouse" / "silver" / "orders"
    spark.range(3).write.format("delta").save(str(location))
    (tmp_path / "warehouse" / "silver" / "half_made" / "_delta_log").mkdir(parents=True)
    assert delta_table_exists(spark, location)
    assert not delta_table_exists(spark, location.parent / "half_made")
    assert not delta_table_exists(spark, location.parent / "customers")
    assert statements == []
