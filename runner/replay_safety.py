"""Whether a model is safe to replay: does its target converge when old events come again?

A new checkpoint that reads the source from its earliest data feeds the model every event it
has already applied. A sequence-guarded upsert (the ``merge()`` / ``scd2()`` macros, or a
hand-written MERGE guarded on ``sequence_by`` as lint rule DL014 requires) ignores an event
that is not newer than the target's row, so the target ends as it would have anyway. An
additive MERGE (running totals: ``SET t.total = t.total + s.amount``) counts each replayed
event again, an INSERT appends it again, and an unguarded upsert lets an old event overwrite a
newer row until the newer one comes again. ``runner plan`` offers a replay only to safe models.

Pure Python: the model's per-batch SQL, as ``runner compile`` renders it, parsed with the Delta
dialect.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlglot import exp
from sqlglot.errors import ParseError

from runner.errors import RunnerError
from runner.last_run import SAMPLE_BATCH
from runner.lint.expressions import merge_guarded_on, table_key, target_names
from runner.model_sql import compile_batch
from runner.project import Project
from runner.specs.model import ModelSpec
from runner.sql.dialect import parse_statement, to_sql


@dataclass(frozen=True)
class ReplaySafety:
    """``safe``: replaying events already applied leaves the target as it is."""

    safe: bool
    reason: str


def replay_safety(project: Project, model: ModelSpec) -> ReplaySafety:
    """Whether ``model`` converges when events it already applied come again, and why."""
    target = model.target_table.lower()
    sequence = model.config.sequence_by
    first = sequence if isinstance(sequence, str) else (sequence or [""])[0]
    try:
        statements = [s for s in compile_batch(project, model, SAMPLE_BATCH) if s.phase == "batch"]
    except RunnerError as exc:
        return ReplaySafety(False, f"its SQL does not render ({exc})")
    writes = 0
    hard_delete = False
    for statement in statements:
        if not statement.is_dml:  # views and the like write nothing (and parse slowly)
            continue
        try:
            node = parse_statement(statement.sql, allow_command=True)
        except ParseError:
            if model.target_table.lower() in statement.sql.lower():
                return ReplaySafety(False, f"{statement.label} does not parse: not known")
            continue
        if isinstance(node, exp.Merge) and table_key(node.this) == target:
            writes += 1
            hard_delete = hard_delete or _deletes(node)
            additive = _additive_assignment(node)
            if additive:
                return ReplaySafety(
                    False,
                    f"additive MERGE ({additive}): an event applied again counts again",
                )
            if not first:
                return ReplaySafety(
                    False,
                    "its MERGE has no sequence guard (no sequence_by): an old event that comes "
                    "again overwrites a newer row",
                )
            if not merge_guarded_on(node, first.lower(), every_branch=True):
                return ReplaySafety(
                    False,
                    f"a WHEN MATCHED branch of its MERGE is not guarded on sequence_by "
                    f"'{first}': an old event that comes again overwrites a newer row",
                )
        elif isinstance(node, exp.Insert) and target in {
            table_key(t) for t in node.find_all(exp.Table)
        }:
            return ReplaySafety(
                False, "it INSERTs into the target: an event applied again is appended again"
            )
        elif isinstance(node, exp.Update | exp.Delete) and table_key(node.this) == target:
            return ReplaySafety(
                False,
                f"{statement.label} ({statement.keyword}) of the target: not known to converge",
            )
    if writes == 0:
        return ReplaySafety(False, "no MERGE into the target: not known to converge")
    reason = (
        f"sequence-guarded upsert on '{first}': an event not newer than the target's row is "
        "ignored, so old events that come again change nothing"
    )
    if hard_delete:
        reason += (
            " (a deleted key has no row left to compare with: its old events bring it back "
            "until the replay reaches its delete again; merge(deletes='tombstone') avoids that)"
        )
    return ReplaySafety(True, reason)


def _deletes(merge: exp.Merge) -> bool:
    """Whether a WHEN MATCHED branch of ``merge`` deletes the row (a hard delete)."""
    whens = merge.args.get("whens")
    return any(
        isinstance(when.args.get("then"), exp.Var) and when.args["then"].name.upper() == "DELETE"
        for when in (whens.expressions if whens is not None else [])
    )


def _additive_assignment(merge: exp.Merge) -> str:
    """The first ``SET`` assignment of ``merge`` whose value reads the target's own column
    (``t.total = t.total + s.amount``), as SQL; '' when there is none."""
    targets = target_names(merge)
    whens = merge.args.get("whens")
    for when in whens.expressions if whens is not None else []:
        then = when.args.get("then")
        if not isinstance(then, exp.Update):
            continue
        for assignment in then.expressions:
            value = assignment.expression if isinstance(assignment, exp.EQ) else None
            if value is None:
                continue
            if any(column.table.lower() in targets for column in value.find_all(exp.Column)):
                return to_sql(assignment)
    return ""
