"""Make a model's target table exist in the session: create it, or attach the existing one."""

from __future__ import annotations

from pathlib import Path

from pyspark.errors import AnalysisException
from pyspark.sql import SparkSession

from runner import storage
from runner.errors import ConfigError
from runner.model_sql import compile_setup, set_properties_statement
from runner.project import Project
from runner.secrets import reveal_all
from runner.spark.delta.delta_log import is_local_delta_table, newest_version
from runner.spark.delta.statements import StatementResult, run_statement
from runner.spark.session.kind import driver_in_process
from runner.specs.model import ModelSpec
from runner.storage import Location


def ensure_target(spark: SparkSession, project: Project, model: ModelSpec) -> list[StatementResult]:
    """Run the model's set-up statements; returns what ran, for display.

    A missing target is created with the model's columns and table properties. An existing Delta
    table at the target's location is registered under its name (the session catalog does not
    outlive the session) and, if it lacks some of the model's table properties, they are set.
    """
    setup = compile_setup(project, model)
    results = [run_statement(spark, setup.create_schema)]
    _forget_stale_registration(spark, model, setup.table, setup.location)
    if not delta_table_exists(spark, setup.location):
        results.append(run_statement(spark, setup.create))
        return results
    results.append(run_statement(spark, setup.attach))
    missing = missing_properties(spark, setup.table, setup.properties)
    if missing:
        results.append(run_statement(spark, set_properties_statement(project, model, missing)))
    return results


def missing_properties(spark: SparkSession, table: str, wanted: dict[str, str]) -> dict[str, str]:
    """The properties of ``wanted`` that ``table`` (a name, or delta.`<path>`) does not have
    with that value."""
    rows = spark.sql(f"SHOW TBLPROPERTIES {table}").collect()
    existing = {row["key"]: row["value"] for row in rows}
    values = reveal_all(wanted, used_in=f"table property of {table}:")  # env_var() values
    return {key: wanted[key] for key, value in values.items() if existing.get(key) != value}


def delta_table_exists(spark: SparkSession, location: Location) -> bool:
    """Whether a Delta table is at ``location``. Where this process sees the files Spark's
    driver sees (``sees_driver_files``), from the files of its ``_delta_log``: no Spark job
    (DESCRIBE HISTORY ran one per target at every start, 0.4 s on a new project's first).
    Elsewhere (another machine's disk, object storage over Spark Connect), Spark is asked, in
    SQL: over Spark Connect the DeltaTable API needs Delta's Connect plugin on the server."""
    if sees_driver_files(spark, location):
        return is_local_delta_table(location)
    try:
        spark.sql(f"DESCRIBE HISTORY delta.`{location}` LIMIT 1").collect()
    except AnalysisException:
        return False
    return True


def sees_driver_files(spark: SparkSession, location: Location) -> bool:
    """Whether this process sees ``location``'s files as Spark's driver does: any location it
    reaches (a local disk, object storage through the session's JVM) when the driver runs in
    this process; over Spark Connect, only one whose parent folder it finds (a server on this
    machine): a folder missing here may be on the server's disk."""
    if not storage.reachable(location):
        return False
    return driver_in_process(spark) or storage.is_dir(location.parent)


def latest_version(spark: SparkSession, location: Location) -> int:
    """The newest version of the Delta table at ``location``: from the names of its log's files
    where this process reaches them (no Spark job), else from DESCRIBE HISTORY (one job)."""
    if storage.reachable(location):
        found = newest_version(location)
        if found is not None:
            return found
    return int(spark.sql(f"DESCRIBE HISTORY delta.`{location}` LIMIT 1").collect()[0]["version"])


def reset_model(spark: SparkSession, project: Project, model: ModelSpec) -> list[str]:
    """``--full-refresh``: delete the model's checkpoint and its target table (name and data),
    so the next start rebuilds the target from the beginning of the source. Returns what was
    removed, for the operator to read."""
    removed = []
    checkpoint = project.target.checkpoint_for(model.name)
    if storage.remove(checkpoint):
        removed.append(f"checkpoint {checkpoint}")
    setup = compile_setup(project, model)
    _forget_stale_registration(spark, model, setup.table, setup.location)
    spark.sql(f"DROP TABLE IF EXISTS {setup.table}")
    if storage.remove(setup.location):
        removed.append(f"table {setup.table} at {setup.location}")
    return removed


def _forget_stale_registration(
    spark: SparkSession, model: ModelSpec, table: str, location: Location
) -> None:
    forget_stale_registration(spark, table, location, file=model.file, line=model.config_line)


def forget_stale_registration(
    spark: SparkSession, table: str, location: Location, *, file: Path, line: int | None = None
) -> None:
    """The name may already be registered in this session for another location (another
    project, or a target whose warehouse moved). An external registration is only a name, so
    it is dropped (the data stays); a managed table of that name is never touched.

    A name whose data is gone (its directory deleted) is dropped too: over Spark Connect the
    server's catalog outlives the runner and still lists it."""
    try:
        found = registration(spark, table)
    except AnalysisException as exc:
        if "DELTA_PATH_DOES_NOT_EXIST" not in str(exc):
            raise
        spark.sql(f"DROP TABLE IF EXISTS {table}")
        return
    if found is None:
        return
    registered, kind = found
    if storage.same_location(registered, location):
        return
    if kind != "EXTERNAL":
        raise ConfigError(
            f"table {table} already exists as a {kind or '?'} table at "
            f"{registered}, not at its location {location}",
            file=file,
            line=line,
            hint="choose another target name, or drop that table yourself",
        )
    spark.sql(f"DROP TABLE {table}")


def registration(spark: SparkSession, table: str) -> tuple[str, str] | None:
    """Where the session's catalog says ``table`` is, and its type (EXTERNAL, MANAGED); None
    when the name is not registered."""
    if not spark.catalog.tableExists(table):
        return None
    details = {
        row["col_name"]: row["data_type"]
        for row in spark.sql(f"DESCRIBE TABLE EXTENDED {table}").collect()
    }
    return details.get("Location", "").removeprefix("file:"), details.get("Type", "").upper()
