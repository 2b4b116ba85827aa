"""Register an existing Delta table under its name in this session, without creating it."""

from __future__ import annotations

from pyspark.sql import SparkSession

from runner.model_sql import CompiledStatement
from runner.spark.delta.statements import run_statement
from runner.spark.delta.targets import delta_table_exists, forget_stale_registration
from runner.storage import Location


def attach_existing(
    spark: SparkSession,
    table: str,
    location: Location,
    create_schema: CompiledStatement,
    attach: CompiledStatement,
) -> bool:
    """Register the Delta table at ``location`` as ``table``; False (and nothing registered)
    when no Delta table is there. Tests read tables; they never create them."""
    run_statement(spark, create_schema)
    forget_stale_registration(spark, table, location, file=attach.file, line=attach.line)
    if not delta_table_exists(spark, location):
        return False
    run_statement(spark, attach)
    return True
