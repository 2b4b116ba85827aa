"""Lint rules about statements as Spark runs them: syntax, statements run together or opaque to
the linter, final projections, and DML that rewrites the whole target every batch.
"""

from __future__ import annotations

import re

from sqlglot import exp
from sqlglot.errors import ParseError

from runner.error_text import first_line
from runner.lint.base import ERROR, Rule, Violation
from runner.lint.context import ModelContext, ParsedStatement
from runner.lint.expressions import final_selects, run_together_at, statement_results, table_key
from runner.lint.findings import WARNING


class SqlSyntaxError(Rule):
    """A rendered statement is not valid Spark/Delta SQL.

    Every statement of the model is rendered for the first batch and a maintenance batch and
    parsed with the Delta dialect (OPTIMIZE, VACUUM, MERGE WITH SCHEMA EVOLUTION, ... included).
    The finding points at the token the parser stopped at. Spark's parser also requires a
    column name (not an expression) on the left of `SET col = ...` and in the column list of
    `INSERT (col, ...)`, which the dialect accepts (`PARSE_SYNTAX_ERROR`); an alias after `AS`
    is a name (`AS map('k', x)` is refused at its `(`, also in a view's query, which sqlglot
    would keep as an opaque command), and a lambda of one parameter is `x -> ...`, without
    parentheses (`(x) -> ...` is refused at its `->`).
    """

    spark_rejects = True
    code = "DL001"
    severity = ERROR

    def check(self, context: ModelContext) -> list[Violation]:
        found = []
        for parsed in context.statements():
            error = parsed.error
            if error is None:
                for node in _assigned_non_columns(parsed):
                    message = (
                        f"[PARSE_SYNTAX_ERROR] {node.sql(dialect='spark')} is assigned to, but "
                        "only a column name can be: SET col = ..., INSERT (col, ...)"
                    )
                    where = context.locate_node(parsed, node)
                    found.append(
                        self.violation(
                            context, where, f"SQL syntax error in {_what(parsed)}: {message}"
                        )
                    )
                continue
            detail = error.errors[0] if isinstance(error, ParseError) and error.errors else {}
            if detail.get("line"):
                token = detail.get("highlight") or ""
                col = max(int(detail["col"]) - len(token) + 1, 1)
                where = context.locate_statement_position(parsed, detail["line"], col, token)
                message = f"{detail.get('description', 'syntax error')} near '{token}'"
                insert = _insert_action_before(parsed.sql, detail["line"], col)
                if message.startswith("INSERT column list") and insert is not None:
                    # Spark names the INSERT action, not where its VALUES end
                    where = context.locate_offset(parsed, insert, "INSERT")
            else:
                where = context.locate_line(parsed.statement.line)
                message = first_line(error)
            found.append(
                self.violation(context, where, f"SQL syntax error in {_what(parsed)}: {message}")
            )
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
    target each time new events arrive. Restrict it with a `WHERE`, or reach only the batch's
    keys with a MERGE (`MERGE INTO {{ this }} t USING (SELECT key FROM {{ batch }} GROUP BY
    key) s ON t.key = s.key WHEN MATCHED THEN DELETE`): Delta refuses a subquery in a
    `DELETE`'s or `UPDATE`'s `WHERE` (`DELTA_UNSUPPORTED_SUBQUERY`).
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


class SubqueryInDeltaDmlCondition(Rule):
    """A `DELETE` or `UPDATE` of a Delta table has a subquery in its `WHERE`.

    Delta refuses it (`DELTA_UNSUPPORTED_SUBQUERY`): `DELETE FROM {{ this }} WHERE key IN
    (SELECT key FROM {{ batch }})`, an `EXISTS (...)` or a scalar subquery alike. To delete or
    update the rows of the batch's keys, use a MERGE: `MERGE INTO {{ this }} t USING (SELECT
    key FROM {{ batch }} GROUP BY key) s ON t.key = s.key WHEN MATCHED THEN DELETE`. Checked on
    the tables the project's models write (all Delta tables).
    """

    spark_rejects = True
    code = "DL039"
    severity = ERROR

    def check(self, context: ModelContext) -> list[Violation]:
        targets = {table.lower() for table in context.project.models_by_target}
        found = []
        for parsed in context.statements():
            node = parsed.expression
            if not isinstance(node, (exp.Delete, exp.Update)):
                continue
            where = node.args.get("where")
            subquery = where.find(exp.Query) if where is not None else None
            if subquery is None or table_key(node.this) not in targets:
                continue
            deletes = isinstance(node, exp.Delete)
            message = (
                "[DELTA_UNSUPPORTED_SUBQUERY] Delta refuses a subquery in "
                f"{'a DELETE' if deletes else 'an UPDATE'}'s WHERE; reach the rows of the "
                "batch's keys with a MERGE (... WHEN MATCHED THEN "
                f"{'DELETE' if deletes else 'UPDATE SET ...'})"
            )
            found.append(self.violation(context, context.locate_node(parsed, subquery), message))
        return found


class BatchViewWritten(Rule):
    """A statement writes the batch view: `DELETE FROM {{ batch }}`, `UPDATE {{ batch }}`,
    `MERGE INTO {{ batch }}`, `INSERT INTO {{ batch }}`, `TRUNCATE TABLE {{ batch }}`.

    The batch view holds the micro-batch's rows as the stream delivered them: a view of a
    DataFrame, not a table, so Spark cannot change it (`INTERNAL_ERROR` for a DELETE or an
    INSERT, `UNSUPPORTED_FEATURE.TABLE_OPERATION` for an UPDATE or a MERGE,
    `EXPECT_TABLE_NOT_VIEW` for a TRUNCATE, each probed on Spark 4.2). To drop or change rows
    of the batch, create a view of the rows you keep, `CREATE OR REPLACE TEMPORARY VIEW kept AS
    SELECT ... FROM {{ batch }} WHERE ...`, and read that instead.
    """

    spark_rejects = True
    code = "DL043"
    severity = ERROR

    def check(self, context: ModelContext) -> list[Violation]:
        if context.model is None:
            return []
        batch = context.model.batch_view.lower()
        found = []
        for parsed in context.statements():
            node = parsed.expression
            if not isinstance(
                node, (exp.Delete, exp.Update, exp.Merge, exp.Insert, exp.TruncateTable)
            ):
                continue
            tables = node.expressions if isinstance(node, exp.TruncateTable) else [node.this]
            for table in tables:
                table = table.this if isinstance(table, exp.Schema) else table
                if table_key(table) == batch:
                    message = (
                        f"{batch} is the batch view, the micro-batch's rows, not a table: "
                        "Spark cannot change it; create a view of the rows to keep "
                        f"(CREATE OR REPLACE TEMPORARY VIEW ... AS SELECT ... FROM {batch} "
                        "WHERE ...) and read that"
                    )
                    found.append(
                        self.violation(context, context.locate_node(parsed, table), message)
                    )
        return found


class MissingSemicolon(Rule):
    """Two statements run together: a `;` is missing between them.

    The model's statements are split at `;`. When one piece does not parse (or parses only as
    an opaque command) but splits into two statements that each parse at a statement keyword
    (`MERGE`, `INSERT`, `CREATE`, ...), the `;` before that keyword is missing.
    """

    spark_rejects = True
    code = "DL015"
    severity = ERROR
    explains = frozenset({"DL001"})  # the render / parse failure it causes

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


def _insert_action_before(sql: str, line: int, col: int) -> int | None:
    """The offset of the last ``INSERT`` keyword before ``line:col`` of ``sql``."""
    lines = sql.split("\n")
    offset = sum(len(text) + 1 for text in lines[: line - 1]) + col - 1
    starts = [m.start() for m in re.finditer(r"\bINSERT\b", sql[:offset], re.IGNORECASE)]
    return starts[-1] if starts else None


def _assigned_non_columns(parsed: ParsedStatement) -> list[exp.Expr]:
    """What an UPDATE's SET or a MERGE's INSERT column list assigns to that is not a column."""
    found = []
    for node in parsed.nodes:
        if isinstance(node, exp.Update):
            targets = [e.left for e in node.expressions if isinstance(e, exp.EQ)]
        elif isinstance(node, exp.Insert) and isinstance(node.parent, exp.When):
            targets = node.this.expressions if isinstance(node.this, exp.Tuple) else []
        elif isinstance(node, exp.Insert) and isinstance(node.this, exp.Schema):
            targets = [e for e in node.this.expressions if not isinstance(e, exp.Identifier)]
        else:
            continue
        found += [t for t in targets if not isinstance(t, exp.Column)]
    return found


def _what(parsed: ParsedStatement) -> str:
    """``batch[1] (MERGE)``: which statement, for messages."""
    return f"{parsed.statement.label} ({parsed.statement.keyword or 'statement'})"
