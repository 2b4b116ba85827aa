"""`runner backfill` on Spark: build the shadow, compare it with the live target per key, and
apply the difference in one idempotent MERGE (the steps: runner/backfill.py)."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import partial

from pyspark.sql import SparkSession

from runner import storage
from runner.backfill import (
    BackfillPaths,
    apply_app_id,
    finish_handover,
    handed_over,
    handover_marker,
    shadow_project,
    stage_handover,
)
from runner.backfill_report import (
    ApplyOutcome,
    BackfillDiff,
    RowKind,
    RowSample,
    SourceGap,
    deletes_allowed,
)
from runner.checkpoint_files import check_checkpoint_files, checkpoint_query_id
from runner.checkpoint_leftovers import remove_interrupted_first_batch
from runner.checkpoint_owner import batches_read
from runner.errors import ConfigError, RunnerError
from runner.last_run import model_record, read_last_run
from runner.model_sql import CompiledStatement
from runner.project import Project
from runner.source_retention import source_gap
from runner.spark.delta.delta_log import commit_of, is_local_delta_table
from runner.spark.delta.statements import Transaction, run_statement
from runner.spark.delta.targets import delta_table_exists, latest_version, reset_model
from runner.spark.sources.kafka_offsets import earliest_offsets
from runner.spark.streaming.pipeline import stream_models
from runner.spark.streaming.query import Callbacks
from runner.spark.streaming.state_guard import expected_record, find_mismatch, target_facts
from runner.specs.model import ModelSpec
from runner.specs.stream import TriggerSpec
from runner.storage import Location

USER_METADATA = "spark.databricks.delta.commitInfo.userMetadata"
DIFF_VIEW = "runner_backfill_difference"
COMMITS_SEARCHED = 200  # newest commits of the live table searched for an earlier apply


class BackfillPending(RunnerError):
    """A killed ``backfill --apply`` committed its MERGE but did not finish the handover."""


@dataclass(frozen=True)
class BackfillResult:
    """What one ``runner backfill`` found and did. ``diff`` is None when a rerun found the
    backfill applied by an earlier, killed run (``outcome`` then says so)."""

    diff: BackfillDiff | None
    gap: SourceGap
    outcome: ApplyOutcome | None
    notes: tuple[str, ...] = ()


def run_backfill(
    spark: SparkSession,
    project: Project,
    model: ModelSpec,
    *,
    apply: bool,
    allow_deletes: bool,
    samples: int,
    callbacks: Callbacks,
    say: Callable[[str], None],
) -> BackfillResult:
    """Build (or resume) the shadow, compare, and with ``apply`` bring the live target and
    checkpoint to the shadow's state. The caller holds the shadow's checkpoint lock, and with
    ``apply`` the live model's too."""
    paths = BackfillPaths.of(project.target.checkpoint_root, model.name)
    widened, shadow = shadow_project(project, model)
    if handover_marker(paths.staged) is not None or handed_over(paths):
        if not apply:
            raise BackfillPending(
                f"model '{model.name}': a killed `runner backfill --apply` committed its "
                f"difference but did not finish handing over the checkpoint ({paths.staged})",
                file=model.file,
                hint=f"run `runner backfill --model {model.name} --apply` to finish it",
            )
        finish_handover(paths)
        drop_shadow(spark, widened, shadow, paths)
        say(
            f"{model.name}: finished the handover a killed backfill left; the live model "
            "resumes from the shadow's position"
        )
        outcome = ApplyOutcome(None, True, 0, 0, 0, 0, True, "finished by this run")
        return BackfillResult(None, SourceGap(False, note="checked by the killed run"), outcome)
    location = project.target.table_location(model.target_table)
    if not delta_table_exists(spark, location) or not paths.live.is_dir():
        raise ConfigError(
            f"model '{model.name}' has no live state to backfill: its target {model.target_table} "
            f"or its checkpoint {paths.live} is missing",
            file=model.file,
            hint=f"run it first (`runner run --model {model.name}`)",
        )
    notes = build_shadow(spark, widened, shadow, paths, callbacks)
    for note in notes:
        say(note)
    gap = source_gap(project, model, paths.live, partial(earliest_offsets, spark))
    shadow_location = project.target.table_location(shadow.target_table)
    versions = (latest_version(spark, location), latest_version(spark, shadow_location))
    diff = difference(spark, project, model, shadow, versions, samples, batches_read(paths.shadow))
    if not apply:
        return BackfillResult(diff, gap, None, tuple(notes))
    outcome = apply_difference(spark, project, model, diff, gap, allow_deletes, paths, say)
    return BackfillResult(diff, gap, outcome, tuple(notes))


def build_shadow(
    spark: SparkSession,
    project: Project,
    shadow: ModelSpec,
    paths: BackfillPaths,
    callbacks: Callbacks,
) -> list[str]:
    """Run the shadow over all the source holds now (available-now), resuming from its
    checkpoint. A shadow made by other SQL than the model's now, or whose checkpoint and table
    no longer belong together (a kill in a clean-up), is built again. Returns what was reset."""
    notes = []
    recorded = read_last_run(paths.shadow)
    if (
        recorded is not None
        and recorded["fingerprint"] != model_record(project, shadow)["fingerprint"]
    ):
        notes.append(f"{shadow.name}: built by other SQL than the model's now: built again")
        reset_model(spark, project, shadow)
    elif find_mismatch(spark, project, shadow) is not None:
        notes.append(f"{shadow.name}: its checkpoint and table do not belong together: built again")
        reset_model(spark, project, shadow)
    check_checkpoint_files(shadow.name, paths.shadow)
    remove_interrupted_first_batch(paths.shadow)
    stream_models(
        project,
        [shadow],
        trigger=TriggerSpec(kind="available_now"),
        callbacks=callbacks,
        spark=spark,
    )
    return notes


def difference(
    spark: SparkSession,
    project: Project,
    model: ModelSpec,
    shadow: ModelSpec,
    versions: tuple[int, int],
    samples: int,
    shadow_batches: int,
) -> BackfillDiff:
    """Compare the live target and the shadow at ``versions`` (live, shadow) per key: registers
    the difference as the temp view ``DIFF_VIEW`` (one row per differing key) and counts it."""
    live_location = project.target.table_location(model.target_table)
    shadow_location = project.target.table_location(shadow.target_table)
    live_columns = spark.read.format("delta").load(str(live_location)).columns
    shadow_columns = {
        c.lower() for c in spark.read.format("delta").load(str(shadow_location)).columns
    }
    keys = model.config.unique_keys
    lowered = {k.lower() for k in keys}
    values = [c for c in live_columns if c.lower() in shadow_columns and c.lower() not in lowered]
    on = " AND ".join(f"l.{_q(k)} <=> s.{_q(k)}" for k in keys)
    differs = [f"NOT (l.{_q(c)} <=> s.{_q(c)})" for c in values]
    kind = (
        "CASE WHEN s.__in_shadow IS NULL THEN 'only_live' "
        "WHEN l.__in_live IS NULL THEN 'only_shadow' ELSE 'changed' END"
    )
    select = [
        f"{kind} AS __kind",
        *(f"COALESCE(l.{_q(k)}, s.{_q(k)}) AS {_q(k)}" for k in keys),
        *(f"l.{_q(c)} AS __live_{i}, s.{_q(c)} AS __shadow_{i}" for i, c in enumerate(values)),
        *(f"{test} AS __differs_{i}" for i, test in enumerate(differs)),
    ]
    where = " OR ".join(["l.__in_live IS NULL", "s.__in_shadow IS NULL", *differs])
    spark.sql(
        f"CREATE OR REPLACE TEMPORARY VIEW {DIFF_VIEW} AS SELECT {', '.join(select)} "
        f"FROM (SELECT *, true AS __in_live FROM delta.`{live_location}` "
        f"VERSION AS OF {versions[0]}) AS l "
        f"FULL OUTER JOIN (SELECT *, true AS __in_shadow FROM delta.`{shadow_location}` "
        f"VERSION AS OF {versions[1]}) AS s ON {on} WHERE {where}"
    )
    counted = [
        "count_if(__kind = 'only_live')",
        "count_if(__kind = 'only_shadow')",
        "count_if(__kind = 'changed')",
        *(f"count_if(__kind = 'changed' AND __differs_{i})" for i in range(len(values))),
    ]
    row = spark.sql(f"SELECT {', '.join(counted)} FROM {DIFF_VIEW}").collect()[0]
    only_live, only_shadow, changed, *per_column = (int(v) for v in row)
    rows_in = [
        int(spark.sql(f"SELECT count(*) FROM delta.`{where_}` VERSION AS OF {v}").collect()[0][0])
        for where_, v in ((live_location, versions[0]), (shadow_location, versions[1]))
    ]
    return BackfillDiff(
        model=model.name,
        live_table=model.target_table,
        shadow_table=shadow.target_table,
        key=tuple(keys),
        live_rows=rows_in[0],
        shadow_rows=rows_in[1],
        only_live=only_live,
        only_shadow=only_shadow,
        changed=changed,
        columns={c: n for c, n in zip(values, per_column, strict=True) if n},
        compared=tuple(values),
        samples=_samples(spark, keys, values, samples),
        shadow_batches=shadow_batches,
    )


def _samples(
    spark: SparkSession, keys: list[str], values: list[str], limit: int
) -> tuple[RowSample, ...]:
    """Up to ``limit`` differing rows of each kind, in key order."""
    if limit <= 0:
        return ()
    order = ", ".join(_q(k) for k in keys)
    rows = spark.sql(
        f"SELECT * FROM (SELECT *, row_number() OVER (PARTITION BY __kind ORDER BY {order}) "
        f"AS __n FROM {DIFF_VIEW}) WHERE __n <= {limit} ORDER BY __kind, {order}"
    ).collect()
    found = []
    for row in rows:
        kind: RowKind = row["__kind"]
        key = {k: _text(row[k]) for k in keys}
        shown = [i for i in range(len(values)) if kind != "changed" or row[f"__differs_{i}"]]
        live = (
            {values[i]: _text(row[f"__live_{i}"]) for i in shown} if kind != "only_shadow" else {}
        )
        shadow = (
            {values[i]: _text(row[f"__shadow_{i}"]) for i in shown} if kind != "only_live" else {}
        )
        found.append(RowSample(kind, key, live, shadow))
    order_of = {"only_live": 0, "only_shadow": 1, "changed": 2}
    return tuple(sorted(found, key=lambda s: order_of[s.kind]))


def apply_difference(
    spark: SparkSession,
    project: Project,
    model: ModelSpec,
    diff: BackfillDiff,
    gap: SourceGap,
    allow_deletes: bool,
    paths: BackfillPaths,
    say: Callable[[str], None],
) -> ApplyOutcome:
    """One MERGE of the difference into the live target (under the shadow's idempotent-write
    identity), then the checkpoint handover and the shadow's clean-up."""
    location = project.target.table_location(model.target_table)
    shadow_id = checkpoint_query_id(paths.shadow) or ""
    txn = Transaction(apply_app_id(model.name, shadow_id), diff.shadow_batches)
    deletes = deletes_allowed(gap, allow_deletes)
    kept = 0 if deletes else diff.only_live
    earlier = commit_of(location, txn, COMMITS_SEARCHED) if is_local_delta_table(location) else None
    version: int | None = None
    metrics: dict[str, int] = {}
    already = earlier is not None
    if earlier is not None:
        version = earlier.version
        say(
            f"{model.name}: an earlier run committed version {version}; handing over the checkpoint"
        )
    elif diff.only_shadow or diff.changed or (deletes and diff.only_live):
        merge = _merge_statement(model, location, diff, deletes)
        say(f"{model.name}: applying the difference to {model.target_table} in one MERGE")
        spark.conf.set(
            USER_METADATA,
            json.dumps(
                {
                    "runner": "backfill",
                    "model": model.name,
                    "txnAppId": txn.app_id,
                    "txnVersion": txn.version,
                }
            ),
        )
        try:
            result = run_statement(spark, merge, txn)
        finally:
            spark.conf.unset(USER_METADATA)
        already = result.skipped
        metrics = result.metrics
        made = (
            commit_of(location, txn, COMMITS_SEARCHED) if is_local_delta_table(location) else None
        )
        version = made.version if made is not None else latest_version(spark, location)
        say(f"{model.name}: committed version {version}; handing over the checkpoint")
    table_id = target_facts(spark, location, need_data=False).table_id or ""
    marker = {
        "model": model.name,
        "shadow_query_id": shadow_id,
        "shadow_batches": diff.shadow_batches,
        "apply": {"txnAppId": txn.app_id, "txnVersion": txn.version, "version": version},
        "applied_at": datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%S UTC"),
    }
    stage_handover(
        paths, expected_record(project, model, table_id), model_record(project, model), marker
    )
    finish_handover(paths)
    widened, shadow = shadow_project(project, model)
    drop_shadow(spark, widened, shadow, paths)
    return ApplyOutcome(
        version=version,
        already_applied=already,
        inserted=metrics.get("num_inserted_rows", 0),
        updated=metrics.get("num_updated_rows", 0),
        deleted=metrics.get("num_deleted_rows", 0),
        kept=kept,
        handed_over=True,
    )


def _merge_statement(
    model: ModelSpec, location: Location, diff: BackfillDiff, deletes: bool
) -> CompiledStatement:
    keys = list(diff.key)
    values = list(diff.compared)
    kinds = "('only_shadow', 'changed', 'only_live')" if deletes else "('only_shadow', 'changed')"
    source = ", ".join(
        [
            "__kind",
            *(_q(k) for k in keys),
            *(f"__shadow_{i} AS {_q(c)}" for i, c in enumerate(values)),
        ]
    )
    columns = [*keys, *values]
    sql = "\n".join(
        [
            f"MERGE INTO delta.`{location}` AS t",
            f"USING (SELECT {source} FROM {DIFF_VIEW} WHERE __kind IN {kinds}) AS d",
            "ON " + " AND ".join(f"t.{_q(k)} <=> d.{_q(k)}" for k in keys),
            "WHEN MATCHED AND d.__kind = 'only_live' THEN DELETE",
            *(
                [
                    "WHEN MATCHED AND d.__kind = 'changed' THEN UPDATE SET "
                    + ", ".join(f"t.{_q(c)} = d.{_q(c)}" for c in values)
                ]
                if values
                else []
            ),
            "WHEN NOT MATCHED AND d.__kind = 'only_shadow' THEN INSERT "
            f"({', '.join(_q(c) for c in columns)}) VALUES "
            f"({', '.join(f'd.{_q(c)}' for c in columns)})",
        ]
    )
    return CompiledStatement("backfill", 0, sql, model.file, model.config_line)


def drop_shadow(
    spark: SparkSession, project: Project, shadow: ModelSpec, paths: BackfillPaths
) -> None:
    """Drop the shadow table, then delete its checkpoint: a kill in between leaves a checkpoint
    whose query id the live checkpoint's marker names, which a rerun recognises."""
    location = project.target.table_location(shadow.target_table)
    spark.sql(f"DROP TABLE IF EXISTS {shadow.target_table}")
    storage.remove(location)
    storage.remove(paths.shadow)


def _q(name: str) -> str:
    """``name`` as a quoted identifier."""
    return "`" + name.strip("`").replace("`", "``") + "`"


def _text(value: object) -> str:
    return "NULL" if value is None else str(value)
