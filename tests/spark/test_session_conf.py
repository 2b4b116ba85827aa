"""The runner's session settings at work: temporary_conf (settings for the length of a block:
unit tests' small-data settings, the benches' variants, put back afterwards, also when the
block fails), and a local Delta table's log written without Hadoop's checksum files."""

from __future__ import annotations

from pathlib import Path

import pytest
from pyspark.sql import SparkSession

from runner.spark.session.builder import temporary_conf

SET_BEFORE, UNSET_BEFORE = "spark.runner.probe.set", "spark.runner.probe.unset"


def test_settings_are_put_back_and_the_unset_ones_unset_even_when_the_block_fails(
    spark: SparkSession,
) -> None:
    spark.conf.set(SET_BEFORE, "before")
    try:
        with (
            pytest.raises(RuntimeError, match="boom"),
            temporary_conf(spark, {SET_BEFORE: "during", UNSET_BEFORE: "during"}),
        ):
            assert spark.conf.get(SET_BEFORE) == "during"
            assert spark.conf.get(UNSET_BEFORE) == "during"
            raise RuntimeError("boom")
        assert spark.conf.get(SET_BEFORE) == "before"
        assert spark.conf.get(UNSET_BEFORE, None) is None
    finally:
        spark.conf.unset(SET_BEFORE)


def test_a_local_delta_log_has_delta_s_checksums_and_none_of_hadoop_s(
    spark: SparkSession, tmp_path: Path
) -> None:
    """Every query lists the table's _delta_log folder: Hadoop's hidden ``.<name>.crc`` beside
    each commit and checksum would double it (bench/results/delta-log-length.md)."""
    table = tmp_path / "orders"
    spark.sql(f"CREATE TABLE delta.`{table}` (id BIGINT) USING DELTA")
    spark.sql(f"INSERT INTO delta.`{table}` VALUES (1), (2)")

    log = {path.name for path in (table / "_delta_log").iterdir()}
    assert {f"{version:020d}.{kind}" for version in range(2) for kind in ("crc", "json")} <= log
    assert [name for name in log if name.startswith(".")] == []
    assert spark.sql(f"SELECT sum(id) FROM delta.`{table}`").first()[0] == 3
