"""A model's schema-drift policy: compare a batch's columns with its target's before any statement.

``config(schema_drift=...)``:

- ``fail``: stop the batch (it is not committed) with an error naming every new column and every
  column whose type changed;
- ``append_new_columns``: ``ALTER TABLE ... ADD COLUMNS`` for the new columns, then run the batch
  (a changed type still fails: no ALTER can apply it);
- ``evolve``: leave new columns to Delta's schema evolution in the MERGE (``merge()`` renders
  ``MERGE WITH SCHEMA EVOLUTION`` for such models); changed types are Delta's to cast or reject.

Without ``schema_drift`` nothing is checked. Columns the model declares as source-only (in the
stream's schema but not in ``config(columns=...)``, such as an ``op`` flag) are never drift.

JSON and CSV batches carry the fields their stream's schema does not declare in
``_rescued_data`` (raw JSON). Under a policy those fields are drift too: ``fail`` names them,
``append_new_columns`` and ``evolve`` first make each a column of the batch (typed from a sample
value: BOOLEAN, BIGINT, DOUBLE or STRING) and then treat it as any new column.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import StructType

from runner.ddl import column_names
from runner.errors import ConfigError, RunnerError
from runner.project import Project
from runner.specs.model import ModelSpec
from runner.specs.stream import RESCUED_COLUMN


class SchemaDriftError(RunnerError):
    """A batch's columns differ from its target's and the model's policy does not allow it."""


@dataclass(frozen=True)
class SchemaDrift:
    """New columns (name, type) and changed ones (name, target type, batch type)."""

    new: list[tuple[str, str]] = field(default_factory=list)
    changed: list[tuple[str, str, str]] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.new or self.changed)

    def describe(self) -> str:
        parts = []
        if self.new:
            parts.append("new column(s) " + ", ".join(f"{n} {t}" for n, t in self.new))
        if self.changed:
            parts.append(
                "changed type(s) "
                + ", ".join(f"{n} {old} -> {new}" for n, old, new in self.changed)
            )
        return "; ".join(parts)


def find_drift(batch: StructType, target: StructType, source_only: set[str]) -> SchemaDrift:
    """Columns of ``batch`` that ``target`` lacks or types differently (names case-insensitive;
    nullability is not compared)."""
    target_types = {f.name.lower(): f.dataType.simpleString() for f in target.fields}
    new, changed = [], []
    for column in batch.fields:
        name = column.name.lower()
        batch_type = column.dataType.simpleString()
        if name not in target_types:
            if name not in source_only:
                new.append((column.name, batch_type))
        elif target_types[name] != batch_type:
            changed.append((column.name, target_types[name], batch_type))
    return SchemaDrift(new, changed)


def source_only_columns(project: Project, model: ModelSpec) -> set[str]:
    """Stream columns the model's target deliberately leaves out (stream schema minus
    ``config(columns=...)``); empty when the target takes the stream's schema."""
    stream_ddl = project.stream_columns_ddl(project.stream_of(model))
    if not model.config.columns or not stream_ddl:
        return {RESCUED_COLUMN}
    declared = {c.strip("`").lower() for c in project.target_column_names(model)}
    return {c.strip("`").lower() for c in column_names(stream_ddl)} - declared | {RESCUED_COLUMN}


def promote_rescued_fields(model: ModelSpec, batch_df: DataFrame) -> DataFrame:
    """Under a drift policy, the batch's rescued fields: ``fail`` stops naming them (before
    anything is written to the target); ``append_new_columns`` / ``evolve`` add each as a
    column. Without a policy, or without rescued data, the batch is returned as it is."""
    policy = model.config.schema_drift
    if policy is None or RESCUED_COLUMN not in batch_df.columns:
        return batch_df
    found = rescued_fields(batch_df)
    if not found:
        return batch_df
    if policy == "fail":
        raise SchemaDriftError(
            f"schema drift in the batch for {model.target_table} (schema_drift='fail'): new "
            f"field(s) in the input, not in the stream's schema: "
            + ", ".join(f"{name} {kind}" for name, kind in found.items()),
            file=model.file,
            line=model.config_line_of("schema_drift"),
            hint="the batch was not committed (they are kept in _rescued_data otherwise); add "
            "the fields to the stream's schema and the target, or set "
            "schema_drift='append_new_columns' / 'evolve', and run again",
        )
    fields = F.from_json(F.col(RESCUED_COLUMN), "MAP<STRING, STRING>")
    existing = {c.lower() for c in batch_df.columns}
    return batch_df.withColumns(
        {
            name: fields[name].cast(kind)
            for name, kind in found.items()
            if name.lower() not in existing
        }
    )


def rescued_fields(batch_df: DataFrame) -> dict[str, str]:
    """The names of the fields in the batch's ``_rescued_data``, with a SQL type guessed from
    one sample value each (in name order)."""
    samples = (
        batch_df.where(F.col(RESCUED_COLUMN).isNotNull())
        .select(
            F.explode(F.map_keys(F.from_json(F.col(RESCUED_COLUMN), "MAP<STRING, STRING>"))).alias(
                "name"
            ),
            F.col(RESCUED_COLUMN).alias("sample"),
        )
        .groupBy("name")
        .agg(F.first("sample").alias("sample"))
        .orderBy("name")
        .collect()
    )
    return {row["name"]: _sql_type(json.loads(row["sample"]).get(row["name"])) for row in samples}


def _sql_type(value: object) -> str:
    if isinstance(value, bool):
        return "BOOLEAN"
    if isinstance(value, int):
        return "BIGINT"
    if isinstance(value, float):
        return "DOUBLE"
    return "STRING"


def apply_schema_drift(
    session: SparkSession, project: Project, model: ModelSpec, batch_df: DataFrame
) -> DataFrame:
    """The model's schema-drift policy on a batch, in one step before anything of the batch is
    written: its rescued fields first (``promote_rescued_fields``), then its columns against the
    target's (``apply_drift_policy``). Returns the batch with the promoted columns; raises
    SchemaDriftError."""
    rows = promote_rescued_fields(model, batch_df)
    apply_drift_policy(session, project, model, rows)
    return rows


def apply_drift_policy(
    session: SparkSession, project: Project, model: ModelSpec, batch_df: DataFrame
) -> SchemaDrift:
    """Check ``batch_df`` against the target under the model's policy; returns the drift found
    (after ``append_new_columns`` has added the new columns). Raises SchemaDriftError."""
    policy = model.config.schema_drift
    if policy is None:
        return SchemaDrift()
    table = model.target_table
    drift = find_drift(
        batch_df.schema, session.table(table).schema, source_only_columns(project, model)
    )
    if not drift:
        return drift
    if policy == "fail" or (policy == "append_new_columns" and drift.changed):
        raise SchemaDriftError(
            f"schema drift in the batch for {table} (schema_drift='{policy}'): {drift.describe()}",
            file=model.file,
            line=model.config_line_of("schema_drift"),
            hint=_HINTS[policy],
        )
    if policy == "append_new_columns" and drift.new:
        columns = ", ".join(f"`{name}` {kind}" for name, kind in drift.new)
        session.sql(f"ALTER TABLE {table} ADD COLUMNS ({columns})")
    return drift


_HINTS = {
    "fail": "the batch was not committed; add the columns to the target (or set "
    "schema_drift='append_new_columns' / 'evolve') and run again",
    "append_new_columns": "a changed type cannot be appended; cast it in the stream or migrate "
    "the target, then run again (the batch was not committed)",
}

__all__ = [
    "ConfigError",
    "SchemaDrift",
    "SchemaDriftError",
    "apply_drift_policy",
    "apply_schema_drift",
    "find_drift",
    "promote_rescued_fields",
]
