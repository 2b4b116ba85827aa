"""`runner plan`: what an edit to a running model changes, and what to do about it.

Each selected model's record of what it last ran (runner/last_run.py, kept in its checkpoint)
is compared with the record the project gives now, and every difference is classified:

- ``logic``: what runs per batch (the compiled SQL, hence macros and vars, the expectations, the
  stream's schema): new batches use it, the rows already in the target were made by the old;
- ``target_addition``: the target gains something (a column, a table property, a type that
  widens): what the next start applies by itself, and what it does not;
- ``target_rewrite``: the target's shape changes in a way only a rewrite applies (``unique_key``,
  ``sequence_by``, partitioning, clustering, a column type that does not widen, a dropped
  column, another table);
- ``source``: the stream reads other data (format, path, topic, table, an option that decides
  what is read): the checkpoint's positions belong to the old source;
- ``note``: differences that need nothing (batch-size limits, a starting position that only a
  new checkpoint reads, a removed table property, the schema-drift policy).

The choices offered depend on whether the model is safe to replay (runner/replay_safety.py).
Pure Python: no JVM.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from runner.last_run import model_record, read_last_run
from runner.model_sql import relative_location
from runner.project import Project
from runner.replay_safety import ReplaySafety, replay_safety
from runner.specs.model import ModelSpec
from runner.storage import Location
from runner.type_widening import widens

ChangeKind = Literal["logic", "target_addition", "target_rewrite", "source", "note"]
Status = Literal["no_change", "new", "changed"]

# most severe first: a model's headline is its first kind in this order
SEVERITY: tuple[ChangeKind, ...] = ("source", "target_rewrite", "logic", "target_addition", "note")

SQL_SECTIONS = (
    ("expectations", "EXPECTATIONS"),
    ("batch", "PER BATCH"),
    ("maintenance", "MAINTENANCE"),
)
# options that only size batches: Spark allows adding, removing and changing them
RATE_LIMIT_OPTIONS = frozenset(
    {
        "maxfilespertrigger",
        "maxbytespertrigger",
        "maxoffsetspertrigger",
        "minoffsetspertrigger",
        "maxtriggerdelay",
        "rowspersecond",
        "rowsperbatch",
        "rampuptime",
        "numpartitions",
    }
)
# options read only when a checkpoint is new: a checkpoint resumes where it stopped
STARTING_OPTIONS = frozenset(
    {"startingoffsets", "startingversion", "startingtimestamp", "startingoffsetsbytimestamp"}
)
# options that name the data read: another value is another source
SOURCE_OPTIONS = frozenset({"subscribe", "subscribepattern", "assign", "kafka.bootstrap.servers"})
SCHEMA_DRIFT_ADDS = ("append_new_columns", "evolve")

BACKFILL_CHOICE = (
    "`runner backfill --model {model}` rebuilds the history through the model as it is now "
    "into a shadow table and reports the difference; with --apply it applies only that (same "
    "table id and history; docs/changing-a-model.md)"
)
FULL_REFRESH_COST = (
    "`runner run --select {model} --full-refresh` rebuilds now, at a cost: it deletes the "
    "target and the checkpoint (a new table id breaks downstream Change Data Feed readers; the "
    "table's history is gone) and rereads the source from its start (events it no longer holds "
    "are lost)"
)


@dataclass(frozen=True)
class Change:
    """One classified difference between what a model last ran and what it would run now."""

    kind: ChangeKind
    subject: str  # what changed, e.g. "column discount added"
    means: str
    todo: str
    needs_action: bool


@dataclass(frozen=True)
class ModelPlan:
    """What ``runner plan`` says about one model."""

    model: str
    status: Status
    replay: ReplaySafety
    changes: tuple[Change, ...] = ()
    diff: str = ""  # unified diff of the compiled per-batch SQL, last run -> now
    recorded_at: str = ""
    checkpoint: Location | None = None
    fingerprints: dict[str, str] = field(default_factory=dict)

    @property
    def needs_action(self) -> bool:
        return any(change.needs_action for change in self.changes)

    @property
    def headline(self) -> str:
        """``no_change``, ``new`` or the most severe kind of change."""
        if self.status != "changed":
            return self.status
        kinds = {change.kind for change in self.changes}
        return next(kind for kind in SEVERITY if kind in kinds)


def plan_models(project: Project, names: list[str]) -> list[ModelPlan]:
    """The plan of each model of ``names``, in that order."""
    return [plan_model(project, project.models[name]) for name in names]


def plan_model(project: Project, model: ModelSpec) -> ModelPlan:
    """Compare what ``model`` last ran on the project's target with what it would run now."""
    checkpoint = project.target.checkpoint_for(model.name)
    then = read_last_run(checkpoint)
    now = model_record(project, model)
    safety = replay_safety(project, model)
    if then is None:
        return ModelPlan(model.name, "new", safety, checkpoint=checkpoint)
    fingerprints = {"last_run": str(then["fingerprint"]), "now": str(now["fingerprint"])}
    recorded_at = str(then.get("recorded_at", ""))
    if then["fingerprint"] == now["fingerprint"]:
        return ModelPlan(
            model.name, "no_change", safety, (), "", recorded_at, checkpoint, fingerprints
        )
    changes = [
        *_logic_changes(model, then, now, safety),
        *_target_changes(model, then["target"], now["target"], safety),
        *_stream_changes(model, then["stream"], now["stream"], checkpoint, safety, project.root),
    ]
    if not changes:  # e.g. only the create statement's SQL (an overridden create_target macro)
        changes.append(
            Change(
                "note",
                "set-up SQL",
                "the statements that create the target changed; they run only when no table "
                "exists at the target's location",
                "nothing: the existing table is kept",
                False,
            )
        )
    diff = sql_diff(then["sql"], now["sql"], recorded_at)
    return ModelPlan(
        model.name, "changed", safety, tuple(changes), diff, recorded_at, checkpoint, fingerprints
    )


def sql_text(sections: dict[str, list[str]]) -> str:
    """The per-batch side of a record's SQL as one text: expectations, per-batch statements,
    maintenance, each statement ending in ``;``."""
    lines: list[str] = []
    for key, title in SQL_SECTIONS:
        statements = sections.get(key) or []
        if not statements:
            continue
        lines.append(f"-- {title}")
        for sql in statements:
            lines += [*f"{sql};".splitlines(), ""]
    return "\n".join(lines)


def sql_diff(then: dict[str, list[str]], now: dict[str, list[str]], recorded_at: str) -> str:
    """Unified diff of the compiled per-batch SQL, from the last run's to the project's."""
    before, after = sql_text(then), sql_text(now)
    if before == after:
        return ""
    label = f"last run ({recorded_at})" if recorded_at else "last run"
    return "".join(
        difflib.unified_diff(
            before.splitlines(keepends=True),
            after.splitlines(keepends=True),
            fromfile=label,
            tofile="now",
        )
    )


def _logic_todo(model: ModelSpec, safety: ReplaySafety) -> str:
    replay_note = (
        " (A new checkpoint from the earliest data would not redo them: the sequence guard "
        "ignores events that are not newer than the target's row.)"
        if safety.safe
        else " (A replay of the source is not safe for this model: see below.)"
    )
    return (
        f"{BACKFILL_CHOICE.format(model=model.name)}.\nOr: keep the existing rows (only new "
        "batches change), or "
        f"{FULL_REFRESH_COST.format(model=model.name)}.{replay_note}"
    )


def _logic_changes(
    model: ModelSpec, then: dict[str, Any], now: dict[str, Any], safety: ReplaySafety
) -> list[Change]:
    changes = []
    expectations_changed = then["target"].get("expectations") != now["target"]["expectations"]
    parts = [
        title.lower().replace(" ", "-")
        for key, title in SQL_SECTIONS
        if (then["sql"].get(key) or []) != (now["sql"].get(key) or [])
        and not (key == "expectations" and expectations_changed)  # said by _target_changes
    ]
    if parts:
        changes.append(
            Change(
                "logic",
                f"{' and '.join(parts)} SQL",
                "new batches run the new SQL; every row already in the target was made by the "
                "old (the diff below)",
                _logic_todo(model, safety),
                True,
            )
        )
    if then["stream"].get("schema") != now["stream"].get("schema") and (
        then["stream"].get("format") == now["stream"].get("format")
    ):
        changes.append(
            Change(
                "logic",
                "stream schema",
                f"new batches are read as {now['stream'].get('schema')}; the rows already in "
                "the target were read as the old schema",
                _logic_todo(model, safety),
                True,
            )
        )
    old_drift, new_drift = then["target"].get("schema_drift"), now["target"].get("schema_drift")
    if old_drift != new_drift:
        changes.append(
            Change(
                "note",
                f"schema_drift {old_drift or 'unset'} -> {new_drift or 'unset'}",
                "the next batches are checked with the new policy",
                "nothing",
                False,
            )
        )
    return changes


def _columns(target: dict[str, Any]) -> dict[str, tuple[str, str]]:
    """lower-cased name -> (name, type) of a record's target columns."""
    return {str(name).lower(): (str(name), str(kind)) for name, kind in target.get("columns", [])}


def _target_changes(
    model: ModelSpec, then: dict[str, Any], now: dict[str, Any], safety: ReplaySafety
) -> list[Change]:
    table = now["table"]
    rewrite_todo = (
        f"The next start does not change the existing table. "
        f"{BACKFILL_CHOICE.format(model=model.name)}.\nOr: "
        f"{FULL_REFRESH_COST.format(model=model.name)}; or revert the change."
    )
    changes = []
    if str(then["table"]).lower() != str(table).lower():
        changes.append(
            Change(
                "target_rewrite",
                f"target {then['table']} -> {table}",
                f"the next start creates {table} empty, while the checkpoint carries on where "
                f"it stopped: {table} would lack every row written to {then['table']}",
                f"Copy the old table into the new one first (e.g. CREATE TABLE {table} ... AS "
                f"SELECT * FROM {then['table']}, with the model's location), or "
                f"{FULL_REFRESH_COST.format(model=model.name)}.",
                True,
            )
        )
        return changes
    for key, what in (
        ("unique_key", "unique_key"),
        ("sequence_by", "sequence_by"),
        ("partitioned_by", "partitioned_by"),
        ("cluster_by", "cluster_by"),
    ):
        if [str(c).lower() for c in then.get(key, [])] != [str(c).lower() for c in now[key]]:
            means = {
                "unique_key": "rows already in the target are keyed by the old key: the MERGE "
                "now matches on another, so old rows are no longer updated (duplicates)",
                "sequence_by": "rows already in the target were ordered by the old column: "
                "the guard now compares events with values of another meaning",
                "partitioned_by": "a Delta table's partitioning is fixed when it is created: "
                "the existing table keeps the old one",
                "cluster_by": "the existing table keeps the clustering it was created with",
            }[key]
            changes.append(
                Change(
                    "target_rewrite",
                    f"{what} {_show(then.get(key, []))} -> {_show(now[key])}",
                    means,
                    rewrite_todo,
                    True,
                )
            )
    old_cols, new_cols = _columns(then), _columns(now)
    drift = now.get("schema_drift")
    for lower, (name, kind) in new_cols.items():
        if lower not in old_cols:
            applied = drift in SCHEMA_DRIFT_ADDS
            changes.append(
                Change(
                    "target_addition",
                    f"column {name} {kind} added",
                    "existing rows get NULL in it"
                    + (
                        f"; schema_drift='{drift}' adds it with the first batch that carries it"
                        if applied
                        else "; the next start does not add it to an existing table"
                    ),
                    "nothing"
                    if applied
                    else f"ALTER TABLE {table} ADD COLUMNS ({name} {kind}) before the next "
                    "start (a metadata-only change), or set schema_drift='append_new_columns'",
                    not applied,
                )
            )
            continue
        old_kind = old_cols[lower][1]
        if old_kind == kind:
            continue
        if widens(old_kind, kind):
            changes.append(
                Change(
                    "target_addition",
                    f"column {name} {old_kind} -> {kind} (widens)",
                    "a type change Delta's type widening applies without rewriting data; "
                    "the next start does not apply it",
                    f"ALTER TABLE {table} SET TBLPROPERTIES ('delta.enableTypeWidening' = "
                    f"'true'); ALTER TABLE {table} ALTER COLUMN {name} TYPE {kind}",
                    True,
                )
            )
        else:
            changes.append(
                Change(
                    "target_rewrite",
                    f"column {name} {old_kind} -> {kind} (does not widen)",
                    "Delta's type widening cannot apply this change: every file must be rewritten",
                    rewrite_todo,
                    True,
                )
            )
    for lower, (name, kind) in old_cols.items():
        if lower not in new_cols:
            changes.append(
                Change(
                    "target_rewrite",
                    f"column {name} {kind} removed",
                    "the existing table keeps the column; statements that write every column "
                    "(UPDATE SET *, INSERT *) may fail or leave it NULL",
                    f"ALTER TABLE {table} DROP COLUMN {name} (needs "
                    "'delta.columnMapping.mode' = 'name'), or rebuild: " + rewrite_todo,
                    True,
                )
            )
    old_props, new_props = then.get("table_properties", {}), now["table_properties"]
    for key, value in new_props.items():
        if old_props.get(key) != value:
            changes.append(
                Change(
                    "target_addition",
                    f"table property {key} = {value}"
                    + (" (was " + str(old_props[key]) + ")" if key in old_props else " added"),
                    "the next start sets it on the existing table (ALTER TABLE ... SET "
                    "TBLPROPERTIES)",
                    "nothing",
                    False,
                )
            )
    for key in old_props:
        if key not in new_props:
            changes.append(
                Change(
                    "note",
                    f"table property {key} removed",
                    "the next start does not unset it: the existing table keeps it",
                    f"ALTER TABLE {table} UNSET TBLPROPERTIES ('{key}') if it should go",
                    False,
                )
            )
    if then.get("expectations") != now["expectations"]:
        before, after = then.get("expectations", []), now["expectations"]
        names = sorted({e["name"] for e in [*before, *after] if e not in before or e not in after})
        changes.append(
            Change(
                "logic",
                f"expectations ({', '.join(names)})",
                "new batches are checked with the new expectations; rows already in the target "
                "were let through (or not) by the old",
                _logic_todo(model, safety),
                True,
            )
        )
    return changes


def _show(values: list[str] | Any) -> str:
    return "[" + ", ".join(str(v) for v in values) + "]" if values else "(none)"


def _shown_path(path: Location, root: Path) -> str:
    """``path`` relative to the project root when it is under it, as commands there use it."""
    if not isinstance(path, Path):
        return str(path)
    return relative_location(path, root) if path.is_relative_to(root) else str(path)


def _stream_changes(
    model: ModelSpec,
    then: dict[str, Any],
    now: dict[str, Any],
    checkpoint: Location,
    safety: ReplaySafety,
    project_root: Path,
) -> list[Change]:
    changes = []
    todo = source_choices(model, now, _shown_path(checkpoint, project_root), safety)
    for key, what in (
        ("format", "format"),
        ("path", "path"),
        ("table", "table"),
        ("ref_table", "upstream table"),
        ("change_data_feed", "change_data_feed"),
    ):
        if then.get(key) != now.get(key):
            changes.append(
                Change(
                    "source",
                    f"stream {what} {then.get(key)} -> {now.get(key)}",
                    "the checkpoint holds positions in the old source: Spark does not allow "
                    "changing a query's source between restarts from one checkpoint (it fails, "
                    "or reads from a position that means nothing in the new source)",
                    todo,
                    True,
                )
            )
    if changes:
        return changes  # another source: its options are that source's
    old_opts, new_opts = then.get("options", {}), now.get("options", {})
    for key in sorted(set(old_opts) | set(new_opts)):
        before, after = old_opts.get(key), new_opts.get(key)
        if before == after:
            continue
        subject = f"option {key}: {before} -> {after}"
        lower = key.lower()
        if lower in RATE_LIMIT_OPTIONS:
            changes.append(
                Change(
                    "note",
                    subject,
                    "a rate limit: Spark allows adding, removing and changing it between "
                    "restarts; only batch sizes change",
                    "nothing",
                    False,
                )
            )
        elif lower in STARTING_OPTIONS:
            changes.append(
                Change(
                    "note",
                    subject,
                    "a starting position is read only when a checkpoint is new: this checkpoint "
                    "resumes where it stopped",
                    "nothing, unless you meant to re-read: then start a new checkpoint (below)",
                    False,
                )
            )
        else:
            meaning = (
                "another topic / broker is another source: Spark does not allow changing the "
                "subscribed topics between restarts from one checkpoint"
                if lower in SOURCE_OPTIONS
                else "an option that decides what or how data is read: whether Spark allows "
                "it depends on the source; new batches are read with it, data already read is "
                "not read again"
            )
            changes.append(Change("source", subject, meaning, todo, True))
    return changes


def source_choices(
    model: ModelSpec, stream: dict[str, Any], checkpoint: str, safety: ReplaySafety
) -> str:
    """The choices after a source change, one a line, only the safe ones for ``model``."""
    aside = f"stop the model, mv {checkpoint} {checkpoint}.old"
    latest = {
        "kafka": "set the stream's starting_offsets: latest",
        "delta": "set the stream's option startingVersion: latest",
    }.get(
        str(stream.get("format")),
        "point the file stream at a path holding only new files (a new checkpoint reads every "
        "file there)",
    )
    earliest = (
        f"(b) a new checkpoint from the earliest data, safe for this model (sequence-guarded): "
        f"{aside}, start it with --adopt-state"
        if safety.safe
        else "(b) no new checkpoint from the earliest data: a replay is not safe for this "
        f"model ({safety.reason.split(':')[0]})"
    )
    return "\n".join(
        [
            f"(a) a new checkpoint from the latest data (the target keeps its rows; what came "
            f"in between is not read): {aside}, {latest}, start it with --adopt-state",
            earliest,
            f"(c) {BACKFILL_CHOICE.format(model=model.name)}",
            f"(d) {FULL_REFRESH_COST.format(model=model.name)}",
        ]
    )
