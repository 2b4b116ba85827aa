"""Make a model's target table exist in the session: create it, or attach the existing one."""

from __future__ import annotations

from delta.tables import DeltaTable
from pyspark.sql import SparkSession

from runner.compile import compile_setup, set_properties_statement
from runner.config import ModelSpec
from runner.project import Project
from runner.spark.statements import StatementResult, run_statement


def ensure_target(spark: SparkSession, project: Project, model: ModelSpec) -> list[StatementResult]:
    """Run the model's set-up statements; returns what ran, for display.

    A missing target is created with the model's columns and table properties. An existing Delta
    table at the target's location is registered under its name (the session catalog does not
    outlive the session) and, if it lacks some of the model's table properties, they are set.
    """
    setup = compile_setup(project, model)
    results = [run_statement(spark, setup.create_schema)]
    if not DeltaTable.isDeltaTable(spark, str(setup.location)):
        results.append(run_statement(spark, setup.create))
        return results
    results.append(run_statement(spark, setup.attach))
    existing = {
        row["key"]: row["value"] for row in spark.sql(f"SHOW TBLPROPERTIES {setup.table}").collect()
    }
    missing = {k: v for k, v in setup.properties.items() if existing.get(k) != v}
    if missing:
        results.append(run_statement(spark, set_properties_statement(project, model, missing)))
    return results
