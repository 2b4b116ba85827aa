"""The built-in SQL lint rules, one class each; the docstring is the rule's documentation.

These look at sqlglot expressions parsed with the Delta dialect and never read SQL text with
regexes; the questions they ask of expressions are in expressions.py. The rules about templates
(unknown names, render failures) are in template_rules.py.
"""

from __future__ import annotations

from sqlglot import exp
from sqlglot.errors import ParseError
from sqlglot.tokens import TokenType

from runner.error_text import first_line
from runner.lint.base import ERROR, WARNING, Rule, Violation
from runner.lint.cdc_rules import (
    MergeDependsOnBatching,
    SequenceColumnNotInStream,
    TrackHistoryColumnNotInTarget,
)
from runner.lint.context import Location, ModelContext, ParsedStatement
from runner.lint.expressions import (
    equality_pairs,
    final_selects,
    merge_source,
    optimized_table,
    reachable_queries,
    run_together_at,
    statement_results,
    table_key,
    target_names,
    temp_views,
    unique_on,
    with_ctes,
)
from runner.lint.template_rules import ModelDoesNotRender, UnknownReference
from runner.sql.dialect import Delta, Optimize, Vacuum

CDF_PROPERTY = "delta.enableChangeDataFeed"
SAFE_RETAIN_HOURS = 168  # delta.deletedFileRetentionDuration default: 7 days

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


class SqlSyntaxError(Rule):
    """A rendered statement is not valid Spark/Delta SQL.

    Every statement of the model is rendered for the first batch and a maintenance batch and
    parsed with the Delta dialect (OPTIMIZE, VACUUM, MERGE WITH SCHEMA EVOLUTION, ... included).
    The finding points at the token the parser stopped at.
    """

    code = "DL001"
    severity = ERROR

    def check(self, context: ModelContext) -> list[Violation]:
        found = []
        for parsed in context.statements():
            error = parsed.error
            if error is None:
                continue
            detail = error.errors[0] if isinstance(error, ParseError) and error.errors else {}
            if detail.get("line"):
                token = detail.get("highlight") or ""
                col = max(int(detail["col"]) - len(token) + 1, 1)
                where = context.locate_statement_position(parsed, detail["line"], col, token)
                message = f"{detail.get('description', 'syntax error')} near '{token}'"
            else:
                where = context.locate_line(parsed.statement.line)
                message = first_line(error)
            found.append(
                self.violation(context, where, f"SQL syntax error in {_what(parsed)}: {message}")
            )
        return found


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


class ZorderColumnInvalid(Rule):
    """OPTIMIZE ... ZORDER BY names a partition column or a column the target does not have.

    Delta rejects Z-ordering by a partition column (files are already split by it) and by a
    column missing from the table. The target's columns are `config(columns=...)` or else the
    stream's schema; partition columns are `config(partitioned_by=...)`.
    """

    code = "DL005"
    severity = ERROR

    def check(self, context: ModelContext) -> list[Violation]:
        project = context.project
        by_target = project.models_by_target
        found = []
        for parsed, optimize in context.expressions(Optimize):
            model = by_target.get(optimized_table(optimize))
            if model is None:
                continue
            partitions = {c.lower() for c in model.config.partitioned_by}
            columns = {c.strip("`").lower() for c in project.target_column_names(model)}
            for column in optimize.args.get("zorder") or []:
                name = column.name.lower()
                if name in partitions:
                    problem = f"is a partition column of {model.target_table}"
                elif columns and name not in columns:
                    problem = f"is not a column of {model.target_table}"
                else:
                    continue
                where = self._where(context, parsed, column)
                message = f"ZORDER BY {column.name}: {problem}"
                found.append(self.violation(context, where, message))
        return found

    @staticmethod
    def _where(context: ModelContext, parsed: ParsedStatement, column: exp.Column) -> Location:
        if parsed.statement.phase == "maintenance":  # rendered from config(zorder_by=...)
            line = context.scan.config_line("zorder_by") or parsed.statement.line
            return context.locate_line(line, column.name)
        return context.locate_node(parsed, column)


class ChangeDataFeedNotEnabled(Rule):
    """The model reads another target's Change Data Feed, but that target does not enable it.

    `table_changes('silver.orders', ...)` (or `table_changes('{{ ref("orders_merge") }}', ...)`)
    fails at run time unless the model that writes `silver.orders` sets
    `table_properties={'delta.enableChangeDataFeed': 'true'}`. The same holds for a model whose
    stream is declared with `format: delta`, `ref: <model>` and `change_data_feed: true`.
    """

    code = "DL006"
    severity = ERROR

    def check(self, context: ModelContext) -> list[Violation]:
        by_target = context.project.models_by_target
        found = self._stream_reads(context)
        for parsed, func in context.expressions(exp.Anonymous):
            if func.name.lower() != "table_changes" or not func.expressions:
                continue
            first = func.expressions[0]
            if not (isinstance(first, exp.Literal) and first.is_string):
                continue
            writer = by_target.get(first.name.lower())
            if writer is None:
                continue
            enabled = writer.config.table_properties.get(CDF_PROPERTY, "false").lower() == "true"
            if not enabled:
                message = (
                    f"reads the Change Data Feed of {writer.target_table}, but model "
                    f"{writer.name} does not set table_properties={{'{CDF_PROPERTY}': 'true'}}"
                )
                found.append(self.violation(context, context.locate_node(parsed, first), message))
        return found

    def _stream_reads(self, context: ModelContext) -> list[Violation]:
        """The model's stream reads another model's Change Data Feed (streams/*.yml)."""
        model = context.model
        stream = context.project.streams.get(model.config.stream or "") if model else None
        writer = context.project.models.get(getattr(stream, "ref", None) or "")
        if stream is None or not stream.change_data_feed or writer is None:
            return []
        if writer.config.table_properties.get(CDF_PROPERTY, "false").lower() == "true":
            return []
        line = context.scan.config_line("stream") or 1
        message = (
            f"stream {stream.name} reads the Change Data Feed of {writer.target_table}, but model "
            f"{writer.name} does not set table_properties={{'{CDF_PROPERTY}': 'true'}}"
        )
        return [self.violation(context, context.locate_line(line, stream.name), message)]


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


class SelectStarInFinalProjection(Rule):
    """`SELECT *` in a final projection (a view, INSERT or MERGE source, or a query).

    The columns then change silently when the stream's schema changes. `SELECT *` inside a CTE
    or subquery that is projected explicitly later is fine, and so are `UPDATE SET *` and
    `INSERT *` in a MERGE (they are not projections).
    """

    code = "DL009"
    severity = WARNING

    def check(self, context: ModelContext) -> list[Violation]:
        found = []
        for parsed in context.statements():
            for query in statement_results(parsed.expression):
                for select in final_selects(query):
                    for item in select.expressions:
                        if isinstance(item, exp.Star) or (
                            isinstance(item, exp.Column) and isinstance(item.this, exp.Star)
                        ):
                            where = context.locate_node(parsed, item)
                            message = f"SELECT * in the final projection of {_what(parsed)}"
                            found.append(self.violation(context, where, message))
        return found


class OpaqueStatement(Rule):
    """A statement parses only as an opaque command, so no rule can check it.

    sqlglot falls back to a generic command for statements it does not know (`SHOW ...`,
    `REFRESH ...`). They may be fine for Spark, but the linter cannot see inside them. Two
    statements run together (a missing `;`) are DL015's finding, not this one.
    """

    code = "DL011"
    severity = WARNING

    def check(self, context: ModelContext) -> list[Violation]:
        return [
            self.violation(
                context,
                context.locate_line(parsed.statement.line),
                f"{_what(parsed)} is not understood by the Delta dialect; it is not linted",
            )
            for parsed in context.statements()
            if isinstance(parsed.expression, exp.Command) and run_together_at(parsed.sql) is None
        ]


class WholeTargetDmlPerBatch(Rule):
    """`DELETE`, `UPDATE` or `TRUNCATE` of the model's target with no `WHERE`, every batch.

    A model's statements run for every micro-batch, so an unrestricted `DELETE FROM {{ this }}`,
    `UPDATE {{ this }} SET ...` or `TRUNCATE TABLE {{ this }}` empties or rewrites the whole
    target each time new events arrive. Restrict it to the keys of the batch
    (`WHERE key IN (SELECT key FROM {{ batch }})`) or express it as a MERGE.
    """

    code = "DL012"
    severity = ERROR

    def check(self, context: ModelContext) -> list[Violation]:
        model = context.model
        if model is None:
            return []
        target = model.target_table.lower()
        found = []
        for statements in context.batches.values():
            for parsed in statements:
                node = parsed.expression
                if isinstance(node, exp.TruncateTable):
                    tables = [table_key(t) for t in node.expressions]
                    verb = "TRUNCATE"
                elif isinstance(node, (exp.Delete, exp.Update)) and not node.args.get("where"):
                    tables = [table_key(node.this)]
                    verb = "DELETE" if isinstance(node, exp.Delete) else "UPDATE"
                else:
                    continue
                if target in tables:
                    where = context.locate_line(parsed.statement.line, verb)
                    message = (
                        f"{verb} of the target {model.target_table} with no WHERE runs every "
                        "micro-batch and rewrites the whole table each time; restrict it to "
                        "the batch's keys or use MERGE"
                    )
                    found.append(self.violation(context, where, message))
        return found


class VacuumRetainBelowDefault(Rule):
    """`VACUUM ... RETAIN n HOURS` with n under Delta's safe default of 168 hours (7 days).

    Delta refuses it unless `spark.databricks.delta.retentionDurationCheck.enabled` is false,
    and with the check off it deletes files that running streams, time travel and concurrent
    readers may still need (the stream's own checkpoint can point at them). Keep `RETAIN` at
    168 hours or more, or leave it out.
    """

    code = "DL013"
    severity = ERROR

    def check(self, context: ModelContext) -> list[Violation]:
        found = []
        for parsed, vacuum in context.expressions(Vacuum):
            hours = vacuum.retain_hours
            if hours is not None and hours < SAFE_RETAIN_HOURS:
                if parsed.statement.line_map:
                    where = context.locate_node(parsed, vacuum.args.get("retain"))
                else:  # runner-generated maintenance: reported at config()
                    where = context.locate_line(parsed.statement.line, "vacuum")
                message = (
                    f"VACUUM RETAIN {hours:g} HOURS is under Delta's safe default of "
                    f"{SAFE_RETAIN_HOURS} hours: Delta rejects it, or (with the retention check "
                    "off) deletes files that streams and time travel still read"
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


class MissingSemicolon(Rule):
    """Two statements run together: a `;` is missing between them.

    The model's statements are split at `;`. When one piece does not parse (or parses only as
    an opaque command) but splits into two statements that each parse at a statement keyword
    (`MERGE`, `INSERT`, `CREATE`, ...), the `;` before that keyword is missing.
    """

    code = "DL015"
    severity = ERROR

    def check(self, context: ModelContext) -> list[Violation]:
        found = []
        for parsed in context.statements():
            if parsed.error is None and not isinstance(parsed.expression, exp.Command):
                continue
            offset = run_together_at(parsed.sql)
            if offset is None:
                continue
            keyword = parsed.sql[offset:].split(None, 1)[0].upper()
            where = context.locate_offset(parsed, offset, keyword)
            message = f"missing ';' before {keyword}: two statements run together"
            found.append(self.violation(context, where, message))
        return found


# -- the rule set ----------------------------------------------------------------------------
# Listed here, at the bottom of the module that defines the rules, so that nothing has to
# import this module for its side effects and runner.lint has no import cycle.

RULES: tuple[type[Rule], ...] = (
    SqlSyntaxError,
    MergeOnMissesUniqueKey,
    MergeSourceNotDeduplicated,
    NonDeterministicMergeSource,
    ZorderColumnInvalid,
    ChangeDataFeedNotEnabled,
    UnknownReference,
    MergeWhenNotMatchedBySource,
    SelectStarInFinalProjection,
    ModelDoesNotRender,
    OpaqueStatement,
    WholeTargetDmlPerBatch,
    VacuumRetainBelowDefault,
    SequenceByNotCompared,
    MissingSemicolon,
    SequenceColumnNotInStream,
    TrackHistoryColumnNotInTarget,
    MergeDependsOnBatching,
)


def all_rules() -> list[type[Rule]]:
    """Every rule, ordered by code."""
    codes = [rule.code for rule in RULES]
    if len(set(codes)) != len(codes):
        raise RuntimeError(f"two lint rules share a code: {sorted(codes)}")
    return sorted(RULES, key=lambda rule: rule.code)


# -- helpers -------------------------------------------------------------------------------


def _what(parsed: ParsedStatement) -> str:
    """``batch[1] (MERGE)``: which statement, for messages."""
    return f"{parsed.statement.label} ({parsed.statement.keyword or 'statement'})"


def _nondeterministic_name(func: exp.Func) -> str:
    if isinstance(func, exp.Anonymous):
        name = func.name.lower()
        return name if name in _NONDETERMINISTIC_NAMES else ""
    if isinstance(func, _NONDETERMINISTIC_TYPES):
        return func.sql_name().lower()
    if isinstance(func, exp.StrToUnix) and func.this is None:  # unix_timestamp(): now
        return "unix_timestamp"
    return ""


def merge_guarded_on(merge: exp.Merge, column: str, *, every_branch: bool = False) -> bool:
    """Whether ``merge`` is sequence-guarded on ``column``: a WHEN MATCHED condition compares
    source and target on it, or its source keeps only events newer than the target's row
    (DL014). With ``every_branch`` (``runner plan``'s replay safety), every WHEN MATCHED branch
    must compare, so no branch lets an older event overwrite or delete a newer row."""
    if _source_filtered_on(merge, column):
        return True
    targets = target_names(merge)
    using = merge.args.get("using")
    source = using.alias_or_name.lower() if using is not None else ""
    whens = merge.args.get("whens")
    matched = [w for w in (whens.expressions if whens is not None else []) if w.args.get("matched")]
    checks = [_when_compares_on(when, column, source, targets) for when in matched]
    return all(checks) and bool(checks) if every_branch else any(checks)


def _when_compares_on(when: exp.Expr, column: str, source: str, targets: set[str]) -> bool:
    """Does this WHEN branch's condition compare a source and a target column ``column``?"""
    condition = when.args.get("condition")
    if condition is None:
        return False
    for compare in condition.find_all(exp.GT, exp.GTE, exp.LT, exp.LTE, exp.NEQ):
        # a column on each side, or a struct of columns on each side (a sequence list)
        sides = [
            [c for c in side.find_all(exp.Column) if c.name.lower() == column]
            for side in (compare.left, compare.right)
        ]
        tables = [{c.table.lower() for c in side} for side in sides]
        if any(source in t for t in tables) and any(t & targets for t in tables):
            return True
    return False


def _source_filtered_on(merge: exp.Merge, column: str) -> bool:
    """Is the MERGE's source a query that reads the target and compares ``column`` in it?

    The guard of a MERGE that keeps only events newer than the target's row before matching
    (``... LEFT JOIN <target> ... WHERE b.updated_at > c.updated_at``), or that places each
    event among the target's versions by it (``h.valid_from = b.updated_at``, as ``scd2()``).
    """
    using = merge.args.get("using")
    query = using.this if isinstance(using, exp.Subquery) else None
    target = table_key(merge.this)
    if query is None or not target:
        return False
    if not any(table_key(table) == target for table in query.find_all(exp.Table)):
        return False
    return any(
        any(c.name.lower() == column for c in compare.find_all(exp.Column))
        for compare in query.find_all(exp.GT, exp.GTE, exp.LT, exp.LTE, exp.EQ)
    )


def _keyword_offsets(sql: str, words: tuple[str, ...]) -> list[int]:
    """Start offsets of each occurrence of the token sequence ``words`` in ``sql``."""
    tokens = [t for t in Delta().tokenize(sql) if t.token_type != TokenType.SEMICOLON]
    texts = [t.text.upper() for t in tokens]
    return [
        tokens[i].start
        for i in range(len(tokens) - len(words) + 1)
        if tuple(texts[i : i + len(words)]) == words
    ]
