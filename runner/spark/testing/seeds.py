"""`runner seed`: load checked seed rows into their Delta tables, idempotently.

A seed's table is overwritten with the CSV's content. When the table already holds exactly that
content (same schema, same rows), nothing is written: a second `runner seed` leaves the table,
and its version, as they were. The table lives under the target's warehouse like a model's.
"""

from __future__ import annotations

from dataclasses import dataclass

from pyspark.sql import DataFrame, SparkSession

from runner.project import Project
from runner.seed_sql import seed_statements
from runner.spark.delta.relations import attach_existing
from runner.spark.delta.targets import latest_version
from runner.spark.testing.frames import text_rows_of_both, typed_frame
from runner.specs.seeds import SeedSpec


@dataclass(frozen=True)
class SeedReport:
    """What loading one seed did."""

    name: str
    table: str
    rows: int
    version: int
    written: bool  # False: the table already held this content


def load_seed(
    spark: SparkSession, project: Project, seed: SeedSpec, rows: list[tuple[str | None, ...]]
) -> SeedReport:
    """Make ``seed.table`` hold exactly ``rows`` (checked text, in declared column order)."""
    frame = typed_frame(spark, rows, list(seed.columns))
    location = project.target.table_location(seed.table)
    create_schema, attach = seed_statements(project, seed)
    exists = attach_existing(spark, seed.table, location, create_schema, attach)
    if exists and _same_content(spark.read.format("delta").load(str(location)), frame):
        return SeedReport(seed.name, seed.table, len(rows), latest_version(spark, location), False)
    frame.coalesce(1).write.format("delta").mode("overwrite").option(
        "overwriteSchema", "true"
    ).save(str(location))
    attach_existing(spark, seed.table, location, create_schema, attach)
    return SeedReport(seed.name, seed.table, len(rows), latest_version(spark, location), True)


def _same_content(existing: DataFrame, new: DataFrame) -> bool:
    """Same schema and the same rows (in any order). Seeds are small: comparing them in Python
    costs one job and no shuffle."""
    if existing.schema.simpleString() != new.schema.simpleString():
        return False
    before, after = text_rows_of_both(existing, new, new.columns)
    return sorted(before, key=repr) == sorted(after, key=repr)
