"""Lint rules for what Spark's and Delta's analysis refuses before reading any data: MERGE
clauses without their condition, OPTIMIZE ... WHERE on a column that is not a partition column,
unknown functions and wrong argument counts (GROUP BY's rules are in grouping.py). Each message
names Spark's (or Delta's) error class, as ``runner lint --analyze`` would report it. (INSERT
column counts, which need the relations' columns, are with the column rules.)
"""

from __future__ import annotations

import re
from difflib import get_close_matches

from sqlglot import exp
from sqlglot.tokens import TokenType

from runner.lint.base import ERROR, Rule, Violation
from runner.lint.calls import calls
from runner.lint.context import Location, ModelContext, ParsedStatement
from runner.lint.expressions import optimized_table
from runner.lint.spark_functions import ARITIES, ARITY_PROBED_UP_TO, FUNCTIONS
from runner.sql.dialect import Delta, Optimize

_CLAUSE_KINDS = {
    (True, False): ("MATCHED", "NON_LAST_MATCHED_CLAUSE_OMIT_CONDITION"),
    (False, False): ("NOT MATCHED", "NON_LAST_NOT_MATCHED_BY_TARGET_CLAUSE_OMIT_CONDITION"),
    (False, True): (
        "NOT MATCHED BY SOURCE",
        "NON_LAST_NOT_MATCHED_BY_SOURCE_CLAUSE_OMIT_CONDITION",
    ),
}


class MergeClauseOmitsCondition(Rule):
    """A MERGE's `WHEN [NOT] MATCHED` clause without a condition is not the last of its kind.

    Spark evaluates the clauses of one kind in order and takes the first whose condition
    holds, so a clause without a condition would make every later one of its kind unreachable:
    Spark's parser refuses the statement (`NON_LAST_MATCHED_CLAUSE_OMIT_CONDITION`, and its
    `NOT_MATCHED_BY_TARGET` / `NOT_MATCHED_BY_SOURCE` twins). Give the clause a condition, or
    move it last among its kind.
    """

    spark_rejects = True
    code = "DL024"
    severity = ERROR

    def check(self, context: ModelContext) -> list[Violation]:
        found = []
        for parsed, merge in context.expressions(exp.Merge):
            whens = merge.args.get("whens")
            clauses = whens.expressions if whens is not None else []
            for index, when in enumerate(clauses):
                kind = (bool(when.args.get("matched")), bool(when.args.get("source")))
                later = [w for w in clauses[index + 1 :] if _kind(w) == kind]
                if when.args.get("condition") is not None or not later:
                    continue
                name, error_class = _CLAUSE_KINDS[kind]
                where = _clause_location(context, parsed, index)
                message = (
                    f"[{error_class}] WHEN {name} without a condition is followed by another "
                    f"WHEN {name} clause, which it makes unreachable; Spark refuses the MERGE. "
                    "Give it a condition or make it the last of its kind"
                )
                found.append(self.violation(context, where, message))
        return found


def _clause_location(context: ModelContext, parsed: ParsedStatement, index: int) -> Location:
    """Where the ``index``-th WHEN clause of the MERGE starts (sqlglot keeps no position for a
    clause; its WHEN keyword is the ``index``-th outside strings and comments)."""
    starts = [t.start for t in Delta().tokenize(parsed.sql) if t.token_type == TokenType.WHEN]
    clauses = [s for s in starts if _starts_clause(parsed.sql, s)]
    if index < len(clauses):
        return context.locate_offset(parsed, clauses[index], "WHEN")
    return context.locate_line(parsed.statement.line)


def _starts_clause(sql: str, start: int) -> bool:
    """A MERGE clause's WHEN (not a CASE's): followed by [NOT] MATCHED."""
    return re.match(r"WHEN\s+(NOT\s+)?MATCHED\b", sql[start:], re.IGNORECASE) is not None


def _kind(when: exp.Expr) -> tuple[bool, bool]:
    return bool(when.args.get("matched")), bool(when.args.get("source"))


class OptimizeWhereNotPartition(Rule):
    """`OPTIMIZE ... WHERE` names a column that is not a partition column of the table.

    Delta compacts whole partitions, so its `WHERE` may only filter on partition columns
    (`config(partitioned_by=...)`); any other column is refused when the OPTIMIZE runs
    (`DELTA_NON_PARTITION_COLUMN_REFERENCE`), after the batch's MERGE has committed.
    """

    spark_rejects = True
    code = "DL026"
    severity = ERROR

    def check(self, context: ModelContext) -> list[Violation]:
        by_target = context.project.models_by_target
        found = []
        for parsed, optimize in context.expressions(Optimize):
            model = by_target.get(optimized_table(optimize))
            where = optimize.args.get("where")
            if model is None or where is None:
                continue
            partitions = {c.lower() for c in model.config.partitioned_by}
            for column in where.find_all(exp.Column):
                if column.name.lower() in partitions:
                    continue
                listed = ", ".join(model.config.partitioned_by) or "none: it is not partitioned"
                message = (
                    f"[DELTA_NON_PARTITION_COLUMN_REFERENCE] OPTIMIZE {model.target_table} "
                    f"WHERE names {column.name}, which is not a partition column (partition "
                    f"columns: {listed}); Delta refuses it"
                )
                found.append(
                    self.violation(context, _where_column(context, parsed, column), message)
                )
        return found


def _where_column(context: ModelContext, parsed: ParsedStatement, column: exp.Column) -> Location:
    """The column's place after OPTIMIZE's WHERE (the dialect keeps no position for it)."""
    where = re.search(r"\bWHERE\b", parsed.sql, re.IGNORECASE)
    start = where.end() if where else 0
    name = re.compile(rf"(?<![\w.`]){re.escape(column.name)}(?![\w`])", re.IGNORECASE)
    hit = name.search(parsed.sql, start)
    if hit is None:
        return context.locate_node(parsed, column)
    return context.locate_offset(parsed, hit.start(), column.name)


class UnknownFunction(Rule):
    """A function the statement calls is not one of Spark's built-in functions.

    Spark's analyzer refuses it (`UNRESOLVED_ROUTINE`). The built-in functions are listed in
    `runner/lint/spark_functions.py`, generated from the pinned Spark's function registry. A
    function qualified with a schema (`db.fn(...)`), a persistent function of the catalog, is
    left to Spark; a UDF registered at run time is not known to the linter (`-- noqa: DL028`).
    """

    spark_rejects = True
    code = "DL028"
    severity = ERROR

    def check(self, context: ModelContext) -> list[Violation]:
        found = []
        for parsed, call in context.expressions(exp.Anonymous):
            name = call.name.lower()
            if name in FUNCTIONS or not name or "." in name:
                continue
            close = get_close_matches(name, sorted(FUNCTIONS), n=3, cutoff=0.75)
            hint = f"; did you mean {', '.join(close)}?" if close else ""
            message = f"[UNRESOLVED_ROUTINE] {call.name}() is not a Spark built-in function{hint}"
            found.append(self.violation(context, context.locate_node(parsed, call), message))
        return found


class WrongArgumentCount(Rule):
    """A built-in function is called with a number of arguments Spark does not take.

    Spark's analyzer refuses it (`WRONG_NUM_ARGS`): `max(a, b)` (use `greatest`),
    `current_timestamp(x)`, `substring(s)`, and a table function in a `FROM` alike
    (`range()`; Delta's `table_changes('t')`: `INCORRECT_NUMBER_OF_ARGUMENTS`). The counts each
    function takes were probed from the pinned Spark (`runner/lint/spark_functions.py`). Calls
    written in special syntax
    (`CAST(x AS t)`, `EXTRACT(YEAR FROM d)`, `TRIM(BOTH ' ' FROM s)`, a unit first as in
    `timestampadd(HOUR, 1, ts)`), with named arguments, or inside a statement that does not
    parse are left to Spark.
    """

    spark_rejects = True
    code = "DL038"
    severity = ERROR

    def check(self, context: ModelContext) -> list[Violation]:
        found = []
        for parsed in context.statements():
            if parsed.expression is None:
                continue  # DL001 reports it
            for call in calls(parsed.sql):
                takes = ARITIES.get(call.name)
                if takes is None or _takes(takes, call.arguments):
                    continue
                name = parsed.sql[call.offset : call.offset + len(call.name)]
                error = _COUNT_ERRORS.get(call.name, "WRONG_NUM_ARGS")
                message = f"[{error}] {name}() takes {_counts(takes)}, not {call.arguments}"
                at = context.locate_offset(parsed, call.offset, name)
                found.append(self.violation(context, at, message))
        return found


# Delta's table functions name a wrong argument count otherwise than Spark's functions do
_COUNT_ERRORS = dict.fromkeys(
    ("table_changes", "table_changes_by_path"), "INCORRECT_NUMBER_OF_ARGUMENTS"
)


def _takes(takes: tuple[tuple[int, ...], bool], count: int) -> bool:
    accepted, more = takes
    return count in accepted or (more and count > ARITY_PROBED_UP_TO)


def _counts(takes: tuple[tuple[int, ...], bool]) -> str:
    """``(1, 2), False`` -> "1 or 2 arguments"; ``(2, 3, 4, 5, 6), True`` -> "2 or more
    arguments"; ``(0,), False`` -> "no arguments"."""
    accepted, more = takes
    if more:
        first = next(n for n in range(ARITY_PROBED_UP_TO + 1) if n in accepted)
        if all(n in accepted for n in range(first, ARITY_PROBED_UP_TO + 1)):
            return f"{first} or more arguments"
    if accepted == (0,):
        return "no arguments"
    listed = [str(n) for n in accepted]
    text = listed[0] if len(listed) == 1 else f"{', '.join(listed[:-1])} or {listed[-1]}"
    return f"{text} argument{'s' if listed != ['1'] else ''}" + (" or more" if more else "")
