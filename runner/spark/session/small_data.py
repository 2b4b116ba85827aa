"""Spark settings for a few rows: what `runner test` runs a unit test with, and what the
project's own test suite gives every Spark it starts (CONTRIBUTING.md, "Running the suite").

One shuffle partition (a target's count is sized for real batches and would only make each
MERGE write more tiny files), no adaptive re-planning (it costs more than it saves on a few
rows: bench/results/unit_tests.md), and no generated Java code: compiling it for each new plan
(a MERGE makes several) costs more CPU than interpreting a few rows (about 30 % of a unit
test's JVM CPU: bench/results/inner_loop.md). The statements and the runner's code path are
the same as in a stream; only how Spark executes each plan differs. (``factoryMode`` is a
setting Spark's own tests use: under it ``spark.catalog.listTables`` fails to decode its rows,
EXPRESSION_DECODING_FAILED; the runner asks the catalog only ``tableExists`` and
``databaseExists``.)

Pure: importing it starts no JVM and imports no pyspark.
"""

from __future__ import annotations

SMALL_DATA_CONF = {
    "spark.sql.shuffle.partitions": "1",
    "spark.sql.adaptive.enabled": "false",
    "spark.sql.codegen.wholeStage": "false",
    "spark.sql.codegen.factoryMode": "NO_CODEGEN",
}


def submit_args(conf: dict[str, str]) -> str:
    """``conf`` as pyspark's ``PYSPARK_SUBMIT_ARGS``: the defaults of every JVM pyspark starts
    in a process that inherits it (a setting the session's builder gives wins)."""
    return " ".join(f"--conf {key}={value}" for key, value in conf.items()) + " pyspark-shell"
