"""Lint rules about GROUP BY as Spark's analyzer resolves it."""

from __future__ import annotations

from sqlglot import exp

from runner.lint.base import ERROR, Rule, Violation
from runner.lint.context import ModelContext


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
