"""Check, before any model starts, that each model's checkpoint and target still belong
together (runner/checkpoint_owner.py says why and compares); record them at a first start.

In a local warehouse the target's table id and data come from its files, with no Spark job;
elsewhere (object storage) from ``DESCRIBE DETAIL``.
"""

from __future__ import annotations

from pyspark.sql import SparkSession

from runner import storage
from runner.checkpoint_owner import (
    ADOPT_FLAG,
    MismatchKind,
    OwnerRecord,
    StateMismatch,
    TargetFacts,
    has_progress,
    owner_path,
    read_owner,
    state_mismatch,
    write_owner,
)
from runner.project import Project
from runner.spark.delta.delta_log import local_data_files, local_table_id
from runner.spark.delta.targets import delta_table_exists
from runner.specs.model import ModelSpec
from runner.storage import Location

# What --adopt-state does with each mismatch, as the run says it.
ADOPTED: dict[MismatchKind, str] = {
    "target_deleted": "the target is created again, empty, and the stream goes on from its "
    "checkpoint",
    "target_replaced": "the stream goes on from its checkpoint into the table now there",
    "foreign_checkpoint": "the checkpoint is now this model's; it goes on from where it stopped",
    "no_checkpoint": "a new checkpoint: the source is read from the start into the existing target",
}


def guard_models(
    spark: SparkSession, project: Project, models: list[ModelSpec], *, adopt: bool = False
) -> list[str]:
    """Raise StateMismatch for the first of ``models`` whose checkpoint and target do not
    belong together, before any is started. With ``adopt`` (``--adopt-state``) the state found
    is accepted: each such model gets a new record when it starts; returns what was adopted,
    one line per model, for the operator to read."""
    adopted = []
    for model in models:
        mismatch = find_mismatch(spark, project, model)
        if mismatch is None:
            continue
        if not adopt:
            raise mismatch
        adopted.append(f"{model.name}: {ADOPT_FLAG}: {ADOPTED[mismatch.kind]}")
        storage.remove(owner_path(project.target.checkpoint_for(model.name)))
    return adopted


def find_mismatch(spark: SparkSession, project: Project, model: ModelSpec) -> StateMismatch | None:
    """What is wrong with ``model``'s state at its start, or None."""
    checkpoint = project.target.checkpoint_for(model.name)
    location = project.target.table_location(model.target_table)
    facts = target_facts(spark, location, need_data=not has_progress(checkpoint))
    return state_mismatch(
        expected=expected_record(project, model, facts.table_id or ""),
        checkpoint=checkpoint,
        recorded=read_owner(checkpoint),
        target=facts,
    )


def record_owner(spark: SparkSession, project: Project, model: ModelSpec) -> None:
    """After the model's target exists and before its query starts: write the checkpoint's
    owner record when there is none (a first start, an adopted state, or a checkpoint from
    before records existed)."""
    checkpoint = project.target.checkpoint_for(model.name)
    if read_owner(checkpoint) is not None:
        return
    location = project.target.table_location(model.target_table)
    table_id = target_facts(spark, location, need_data=False).table_id
    if table_id is not None:
        write_owner(checkpoint, expected_record(project, model, table_id))


def expected_record(project: Project, model: ModelSpec, table_id: str) -> OwnerRecord:
    """The record ``model`` writes for a target whose table id is ``table_id``."""
    return OwnerRecord(
        model=model.name,
        stream=model.config.stream or "",
        target=model.target_table,
        location=str(project.target.table_location(model.target_table)),
        table_id=table_id,
    )


def target_facts(spark: SparkSession, location: Location, *, need_data: bool) -> TargetFacts:
    """The table id at ``location`` (None: no Delta table there) and, with ``need_data``,
    whether it holds data files."""
    if not delta_table_exists(spark, location):
        return TargetFacts(table_id=None, holds_data=False)
    table_id = local_table_id(location)
    if table_id is not None:
        return TargetFacts(table_id, need_data and local_data_files(location))
    detail = spark.sql(f"DESCRIBE DETAIL delta.`{location}`").first()
    assert detail is not None  # one row for a table
    return TargetFacts(str(detail["id"]), bool(detail["numFiles"]))
