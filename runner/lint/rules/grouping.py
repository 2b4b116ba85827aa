"""Lint rules about GROUP BY as Spark's analyzer resolves it: what a grouped or aggregated
query may project, and a `*` next to a position."""

from __future__ import annotations

import re

from sqlglot import exp

from runner.lint.base import ERROR, Rule, Violation
from runner.lint.context import Location, ModelContext, ParsedStatement
from runner.lint.expressions import BARE_FUNCTIONS
from runner.lint.spark_functions import AGGREGATES


class ColumnNotGrouped(Rule):
    """A query aggregates, but projects a column that is neither grouped nor aggregated.

    With `GROUP BY`, every column the projection names outside an aggregate must be one of the
    grouping expressions (a column grouped only through an expression of it, as `status` with
    `GROUP BY upper(status)`, is not): Spark refuses the query (`MISSING_AGGREGATION`), since
    one output row stands for many input rows. With an aggregate such as `count(*)` and no
    `GROUP BY` at all, Spark refuses it as `MISSING_GROUP_BY`, at the query. Group by the
    column, aggregate it (`max(col)`, `any_value(col)`), or use a window function (`... OVER
    (PARTITION BY ...)`), which keeps every row.
    """

    spark_rejects = True
    code = "DL027"
    severity = ERROR

    def check(self, context: ModelContext) -> list[Violation]:
        found = []
        for parsed, select in context.expressions(exp.Select):
            missing = _not_grouped(select)
            if missing and select.args.get("group") is None:
                names = ", ".join(dict.fromkeys(c.sql(dialect="spark") for c in missing))
                message = (
                    f"[MISSING_GROUP_BY] the query aggregates without GROUP BY but projects "
                    f"{names}: add GROUP BY, aggregate them (e.g. any_value({missing[0].name})), "
                    "or use a window function"
                )
                found.append(
                    self.violation(context, _select_keyword(context, parsed, select), message)
                )
                continue
            for column in missing:
                message = (
                    f"[MISSING_AGGREGATION] {column.sql(dialect='spark')} is projected next to an "
                    "aggregate but is not in GROUP BY; group by it, aggregate it (e.g. "
                    f"any_value({column.name})), or use a window function"
                )
                found.append(self.violation(context, context.locate_node(parsed, column), message))
        return found


def _select_keyword(context: ModelContext, parsed: ParsedStatement, select: exp.Select) -> Location:
    """Where ``select``'s SELECT keyword is (Spark places a query's errors there): the last
    SELECT before its first projected item."""
    first = context.locate_node(parsed, select.expressions[0])
    starts = [n.meta["start"] for n in select.expressions[0].walk() if "start" in n.meta]
    if not starts:
        return first
    keywords = list(re.finditer(r"\bselect\b", parsed.sql[: min(starts)], re.IGNORECASE))
    if not keywords:
        return first
    return context.locate_offset(parsed, keywords[-1].start(), "SELECT")


def _is_aggregate(node: exp.Expr) -> bool:
    if isinstance(node, exp.AggFunc):
        return True
    return isinstance(node, exp.Anonymous) and node.name.lower() in AGGREGATES


def _own_nodes(node: exp.Expr, *, skip: type | tuple[type, ...]) -> list[exp.Expr]:
    """The nodes under ``node`` (itself included) not inside a subquery, a window function, a
    lambda or a node of type ``skip``."""
    found = []
    stack = [node]
    while stack:
        current = stack.pop()
        found.append(current)
        if current is not node and isinstance(
            current, (exp.Query, exp.Subquery, exp.Window, exp.Lambda, *_tuple(skip))
        ):
            continue
        stack.extend(current.iter_expressions())
    return found


def _tuple(kinds: type | tuple[type, ...]) -> tuple[type, ...]:
    return kinds if isinstance(kinds, tuple) else (kinds,)


def _not_grouped(select: exp.Select) -> list[exp.Column]:
    group = select.args.get("group")
    if group is not None and (group.args.get("all") or not group.expressions):
        return []  # GROUP BY ALL groups by every non-aggregate; GROUPING SETS etc. left out
    items = select.expressions
    if group is None and not any(
        _is_aggregate(node) and not isinstance(node.parent, exp.Window)
        for item in items
        for node in _own_nodes(item, skip=())
    ):
        return []  # neither grouped nor aggregated: the common case, decided first
    if any(
        isinstance(item, exp.Star)
        or (isinstance(item, exp.Column) and isinstance(item.this, exp.Star))
        for item in items
    ):
        return []
    grouped = set()
    names = set()  # of the columns in any grouping expression
    plain = set()  # of the columns grouped by themselves
    aliases = {i.alias.lower(): i.this for i in items if isinstance(i, exp.Alias)}
    for expression in group.expressions if group is not None else []:
        if _is_position(expression):
            position = int(expression.name) - 1
            if 0 <= position < len(items):
                expression = items[position].unalias()
        elif isinstance(expression, exp.Column) and not expression.table:
            expression = aliases.get(expression.name.lower(), expression)
        grouped.add(expression.sql(dialect="spark").lower())
        for column in expression.find_all(exp.Column):
            names.add(column.name.lower())
        if isinstance(expression.unnest(), exp.Column):
            plain.add(expression.unnest().name.lower())
    missing = []
    for item in items:
        inner = item.unalias()
        if inner.sql(dialect="spark").lower() in grouped:
            continue
        if isinstance(inner.unnest(), exp.Column) and group is not None:
            bare = inner.unnest()
            name = bare.name.lower()
            if name not in plain | BARE_FUNCTIONS and not isinstance(bare.this, exp.Star):
                missing.append(bare)  # grouped, if at all, only through an expression of it
            continue
        for node in _own_nodes(inner, skip=(exp.AggFunc, exp.Anonymous)):
            if isinstance(node, exp.Anonymous) and node.name.lower() in AGGREGATES:
                continue
            if (
                isinstance(node, exp.Column)
                and not _under_aggregate(node, inner)
                and node.name.lower() not in names | BARE_FUNCTIONS
                and not isinstance(node.this, exp.Star)
            ):
                missing.append(node)
    return missing


def _under_aggregate(node: exp.Expr, top: exp.Expr) -> bool:
    parent = node.parent
    while parent is not None and parent is not top.parent:
        if _is_aggregate(parent) or isinstance(parent, (exp.Window, exp.Lambda)):
            return True
        parent = parent.parent
    return False


class StarWithGroupByPosition(Rule):
    """A `*` in the select list of a query grouped by a position (`GROUP BY 1`).

    Spark's analyzer refuses it (`STAR_GROUP_BY_POS`): a position names an item of the select
    list, which a `*` has not expanded yet. That holds for `*` and `t.*` anywhere in the list,
    inside a call too (`struct(*)`, `count(*, 1)`), but not for `count(*)`, which Spark's
    parser reads as `count(1)`. Name the columns, or group by them by name.
    """

    spark_rejects = True
    code = "DL041"
    severity = ERROR

    def check(self, context: ModelContext) -> list[Violation]:
        found = []
        for parsed, select in context.expressions(exp.Select):
            group = select.args.get("group")
            if group is None or not any(_is_position(e) for e in group.expressions):
                continue
            for star in _stars(select):
                message = (
                    f"[STAR_GROUP_BY_POS] {star.sql(dialect='spark')} is in the select list of a "
                    "query grouped by a position (GROUP BY 1); name the columns, or group by "
                    "them by name"
                )
                found.append(self.violation(context, context.locate_node(parsed, star), message))
        return found


def _is_position(expression: exp.Expr) -> bool:
    """An integer literal, which Spark's `spark.sql.groupByOrdinal` (on by default) reads as
    a position of the select list."""
    return isinstance(expression, exp.Literal) and expression.is_int


def _stars(select: exp.Select) -> list[exp.Expr]:
    """The `*` and `t.*` of ``select``'s list (not of a subquery's), but `count(*)`'s."""
    found: list[exp.Expr] = []
    for item in select.expressions:
        for star in item.find_all(exp.Star):
            if star.find_ancestor(exp.Query) is not select:
                continue
            parent = star.parent
            if isinstance(parent, exp.Count) and not parent.expressions:
                continue  # count(*) is count(1); count(DISTINCT *) is a Distinct's star
            found.append(parent if isinstance(parent, exp.Column) else star)
    return found
