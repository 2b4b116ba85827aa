"""The floor: a plain Delta append of each batch (no dedupe, no MERGE), what an upsert batch is
measured against.

    python -m bench.upsert.append --project DIR --landing DIR --result FILE
"""

from __future__ import annotations

from pyspark.sql import DataFrame

from bench.upsert.handwritten import (
    HandwrittenResult,
    arguments,
    run_available_now,
    runner_like_session,
)


def main() -> None:
    args = arguments(__doc__ or "")
    spark, warehouse = runner_like_session(args.project, "bench:append")
    location = warehouse / "bench" / "orders_appended"

    def append(batch: DataFrame, batch_id: int) -> None:
        batch.write.format("delta").mode("append").save(str(location))

    result = HandwrittenResult("append")
    run_available_now(spark, args.landing, warehouse.parent / "checkpoint", append, result)
    result.write(args.result)
    spark.stop()


if __name__ == "__main__":
    main()
