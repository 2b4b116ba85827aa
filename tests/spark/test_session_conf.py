"""temporary_conf: settings for the length of a block (unit tests' small-data settings, the
benches' variants), put back afterwards, also when the block fails."""

from __future__ import annotations

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
