"""Lint rules about a model's MERGE into its target: the ON keys, a source with one row per key
and the same rows on a replay, the sequence guard, and clauses that reach past the batch.

The questions they ask of the MERGE's expressions are in ``runner.lint.expressions``.
"""

from __future__ import annotations

from sqlglot import exp
from sqlglot.tokens import TokenType

from runner.lint.base import ERROR, Rule, Violation
from runner.lint.context import ModelContext
from runner.lint.expressions import (
    equality_pairs,
    merge_guarded_on,
    merge_source,
    reachable_queries,
    table_key,
    target_names,
    temp_views,
    unique_on,
    with_ctes,
)
from runner.sql.dialect import Delta

# Functions whose result changes from one evaluation to the next.
_NONDETERMINISTIC_TYPES = tuple(
    getattr(exp, name)
    for name in (
        "Rand", "Randn", "Randstr", "Uniform", "Uuid", "Shuffle", "CurrentTimestamp",
        "CurrentDate", "CurrentTime", "CurrentDatetime", "Localtimestamp",
    )
    if hasattr(exp, name)
)  # fmt: skip
_NONDETERMINISTIC_NAMES = frozenset(
    {"now", "uuid", "rand", "randn", "random", "monotonically_increasing_id",
     "spark_partition_id", "input_file_name", "current_timestamp", "current_date",
     "localtimestamp", "unix_timestamp"}
)  # fmt: skip


class MergeOnMissesUniqueKey(Rule):
    """The MERGE `ON` condition does not compare every column of the model's `unique_key`.

    Without `t.<key> = s.<key>` for each key column (as a top-level AND term), one source row
    can match several target rows, or rows of different keys match each other, and the MERGE
    updates the wrong rows. Applies to MERGEs into the model's own target (`{{ this }}`).
    """

    code = "DL002"
    severity = ERROR

    def check(self, context: ModelContext) -> list[Violation]:
        model = context.model
        if model is None or not model.config.unique_keys:
            return []
        found = []
        for parsed, merge in context.expressions(exp.Merge):
            if table_key(merge.this) != model.target_table.lower():
                continue
            targets = target_names(merge)
            compared = {
                column.name.lower()
                for pair in equality_pairs(merge.args.get("on"))
                for column in pair
                if column.table.lower() in targets or not column.table
            }
            missing = [key for key in model.config.unique_keys if key.lower() not in compared]
            if missing:
                alias = merge.this.alias_or_name
                fix = " AND ".join(f"{alias}.{key} = s.{key}" for key in missing)
                where = context.locate_node(parsed, merge.args.get("on") or merge)
                message = (
                    f"MERGE ON does not compare unique_key column(s) {', '.join(missing)} of "
                    f"{model.target_table}; add {fix}"
                )
                found.append(self.violation(context, where, message))
        return found


class MergeSourceNotDeduplicated(Rule):
    """The MERGE source is not deduplicated on the key it is matched on.

    A micro-batch often holds several events of one key; MERGE then fails with "multiple
    source rows matched". The source must keep one row per key: a view built with
    `{{ dedupe(batch, key=...) }}`, `ROW_NUMBER() OVER (PARTITION BY <key> ...) = 1` (WHERE over
    a subquery, or QUALIFY) or `GROUP BY <key>`. Views created earlier in the model (`CREATE
    TEMPORARY VIEW`) and CTEs are followed. The key is the source side of the ON equalities, or
    the model's `unique_key`. Sources the linter cannot see into (other tables) are not reported.
    """

    code = "DL003"
    severity = ERROR

    def check(self, context: ModelContext) -> list[Violation]:
        model = context.model
        if model is None:
            return []
        found = []
        for statements in context.batches.values():
            views = temp_views(statements)
            for parsed in statements:
                if not isinstance(parsed.expression, exp.Merge):
                    continue
                merge = parsed.expression
                scope = with_ctes(views, merge)
                source = merge_source(merge, scope)
                keys = {
                    column.name.lower()
                    for pair in equality_pairs(merge.args.get("on"))
                    for column in pair
                    if column.table.lower() == source.alias
                } or {key.lower() for key in model.config.unique_keys}
                if not keys:
                    continue
                if source.name == model.batch_view.lower():
                    unique: bool | None = False
                    what = f"the raw micro-batch view {model.batch_view}"
                else:
                    unique = unique_on(source.query, keys, scope, model.batch_view)
                    what = f"view {source.name}" if source.name else "the source subquery"
                if unique is False:
                    where = context.locate_node(parsed, source.node)
                    message = (
                        f"MERGE source ({what}) is not deduplicated on {', '.join(sorted(keys))}: "
                        "two events of one key in a batch fail with 'multiple source rows "
                        "matched'; read from {{ dedupe(batch, key=...) }} or keep ROW_NUMBER() = 1"
                    )
                    found.append(self.violation(context, where, message))
        return found


class NonDeterministicMergeSource(Rule):
    """The MERGE source calls a non-deterministic function (rand, uuid, now, ...).

    Delta may evaluate a MERGE source more than once (it scans it to find matches, then to
    write), and a replayed batch must produce the same rows; `rand()`, `uuid()`,
    `current_timestamp()`, `monotonically_increasing_id()` and the like break both. The
    source subquery and the views and CTEs it reads are checked. Stamp times in the UPDATE/INSERT
    clauses instead, or carry them in the event.
    """

    code = "DL004"
    severity = ERROR

    def check(self, context: ModelContext) -> list[Violation]:
        found = []
        for statements in context.batches.values():
            views = temp_views(statements)
            by_root = {id(s.expression): s for s in statements if s.expression is not None}
            for parsed in statements:
                if not isinstance(parsed.expression, exp.Merge):
                    continue
                scope = with_ctes(views, parsed.expression)
                source = merge_source(parsed.expression, scope)
                for view, query in reachable_queries(source.query, scope):
                    # a view's functions are located in the statement that creates the view
                    home = by_root.get(id(query.root()), parsed)
                    for func in query.find_all(exp.Func):
                        name = _nondeterministic_name(func)
                        if name:
                            via = f" (in view {view})" if view else ""
                            message = (
                                f"non-deterministic {name}() in the MERGE source{via}: a retried "
                                "or re-scanned source gives different rows"
                            )
                            where = context.locate_node(home, func)
                            found.append(self.violation(context, where, message))
        return found


class MergeWhenNotMatchedBySource(Rule):
    """A per-batch MERGE has a `WHEN NOT MATCHED BY SOURCE` clause.

    The source of a streaming MERGE is one micro-batch, not the full data set, so the clause
    applies to every target row absent from that batch: `THEN DELETE` deletes all of them, and
    Delta scans and rewrites the whole target on every batch (no file pruning). Use an explicit
    delete flag in the events instead; `-- noqa: DL008` if a full sync is really meant.
    """

    code = "DL008"
    severity = ERROR

    def check(self, context: ModelContext) -> list[Violation]:
        found = []
        for parsed, merge in context.expressions(exp.Merge):
            whens = merge.args.get("whens")
            clauses = whens.expressions if whens is not None else []
            count = sum(1 for w in clauses if w.args.get("source"))
            if not count:
                continue
            clause = ("WHEN", "NOT", "MATCHED", "BY", "SOURCE")
            for offset in _keyword_offsets(parsed.sql, clause)[:count]:
                where = context.locate_offset(parsed, offset, "WHEN")
                message = (
                    "WHEN NOT MATCHED BY SOURCE in a per-batch MERGE: it deletes (or updates) "
                    "every target row absent from one micro-batch, and rewrites the whole target "
                    "on every batch"
                )
                found.append(self.violation(context, where, message))
        return found


class SequenceByNotCompared(Rule):
    """`config(sequence_by=...)` is set, but no MERGE branch compares source and target on it.

    `sequence_by` names the column that orders versions of a key. A MERGE into the model's
    target must use it in a `WHEN MATCHED` condition (e.g. `s.updated_at > t.updated_at`), or
    compare its source with the target on it (a `USING` subquery that reads the target and
    keeps only events newer than its row, or places each event among the target's versions by
    it, as `scd2()` does), or a late, older event overwrites a newer row. The `merge()` and
    `scd2()` macros add the guard themselves.
    """

    code = "DL014"
    severity = ERROR

    def check(self, context: ModelContext) -> list[Violation]:
        model = context.model
        configured = model.config.sequence_by if model is not None else None
        # a list of columns is compared as a struct; its first column must be in the guard
        first = configured if isinstance(configured, str) else (configured or [""])[0]
        sequence = first.lower()
        if model is None or not sequence:
            return []
        found = []
        reported: set[int] = set()
        for parsed, merge in context.expressions(exp.Merge):
            if table_key(merge.this) != model.target_table.lower():
                continue
            if merge_guarded_on(merge, sequence) or parsed.statement.line in reported:
                continue
            reported.add(parsed.statement.line)
            where = context.locate_line(parsed.statement.line, "MERGE")
            message = (
                f"sequence_by='{model.config.sequence_by}' but no WHEN MATCHED condition of this "
                f"MERGE compares s.{model.config.sequence_by} with t.{model.config.sequence_by}, "
                "nor does its source filter on it against the target: a late, older event "
                "overwrites a newer row"
            )
            found.append(self.violation(context, where, message))
        return found


def _nondeterministic_name(func: exp.Func) -> str:
    if isinstance(func, exp.Anonymous):
        name = func.name.lower()
        return name if name in _NONDETERMINISTIC_NAMES else ""
    if isinstance(func, _NONDETERMINISTIC_TYPES):
        return func.sql_name().lower()
    if isinstance(func, exp.StrToUnix) and func.this is None:  # unix_timestamp(): now
        return "unix_timestamp"
    return ""


def _keyword_offsets(sql: str, words: tuple[str, ...]) -> list[int]:
    """Start offsets of each occurrence of the token sequence ``words`` in ``sql``."""
    tokens = [t for t in Delta().tokenize(sql) if t.token_type != TokenType.SEMICOLON]
    texts = [t.text.upper() for t in tokens]
    return [
        tokens[i].start
        for i in range(len(tokens) - len(words) + 1)
        if tuple(texts[i : i + len(words)]) == words
    ]
