"""The hand-written foreachBatch recipe of the seeds (streaming MERGE into Delta), with the same
logic as the bench's runner model: a row_number view keeps the newest event per order, a MERGE
with the sequence guard applies updates, inserts and deletes, and OPTIMIZE ZORDER runs after
every N-th batch (batch ids from 0, as the runner's optimize_every).

    python -m bench.upsert.recipe --project DIR --landing DIR --result FILE --optimize-every N
        [--spark-defaults] [--stream TRIGGER]

With ``--spark-defaults`` it runs as the seeds write it, on Spark's and Delta's defaults for
the settings the runner tunes (issue #12's baseline); without, on the runner's settings.
With ``--stream``, it streams until SIGTERM (goal 3, freshness).
"""

from __future__ import annotations

from pyspark.sql import DataFrame

from bench.upsert.events import DELETE_OP, TARGET_COLUMNS
from bench.upsert.handwritten import (
    HandwrittenResult,
    arguments,
    run_available_now,
    run_until_stopped,
    runner_like_session,
)
from bench.upsert.plan import ZORDER_BY
from bench.upsert.projects import ORDERS_TABLE

LATEST = """
CREATE OR REPLACE TEMPORARY VIEW latest_orders AS
SELECT order_id, customer_id, status, amount, updated_at, op
FROM (
  SELECT *, row_number() OVER (PARTITION BY order_id ORDER BY updated_at DESC) AS rn
  FROM updates
)
WHERE rn = 1
"""

MERGE = f"""
MERGE INTO {ORDERS_TABLE} AS t
USING latest_orders AS s
ON t.order_id = s.order_id
WHEN MATCHED AND s.updated_at > t.updated_at AND s.op = '{DELETE_OP}' THEN DELETE
WHEN MATCHED AND s.updated_at > t.updated_at THEN UPDATE SET *
WHEN NOT MATCHED AND s.op <> '{DELETE_OP}' THEN INSERT *
"""


def main() -> None:
    args = arguments(__doc__ or "")
    variant = "recipe" if args.spark_defaults else "recipe-tuned"
    spark, warehouse = runner_like_session(args.project, f"bench:{variant}", args.spark_defaults)
    location = warehouse / "bench" / "orders"
    spark.sql("CREATE SCHEMA IF NOT EXISTS bench")
    spark.sql(
        f"CREATE TABLE IF NOT EXISTS {ORDERS_TABLE} ({TARGET_COLUMNS}) USING DELTA "
        f"LOCATION '{location}'"
    )

    def upsert(batch: DataFrame, batch_id: int) -> None:
        session = batch.sparkSession
        batch.createOrReplaceTempView("updates")
        session.sql(LATEST)
        session.sql(MERGE)
        if args.optimize_every and (batch_id + 1) % args.optimize_every == 0:
            session.sql(f"OPTIMIZE {ORDERS_TABLE} ZORDER BY ({ZORDER_BY})")

    result = HandwrittenResult(variant)
    checkpoint = warehouse.parent / "checkpoint"
    if args.stream:
        run_until_stopped(spark, args.landing, checkpoint, upsert, result, args.stream)
    else:
        run_available_now(spark, args.landing, checkpoint, upsert, result)
    result.write(args.result)
    spark.stop()


if __name__ == "__main__":
    main()
