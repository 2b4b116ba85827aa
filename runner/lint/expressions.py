"""Questions the rules ask of sqlglot expressions: where does a MERGE read from, is that source
unique on a key, which views does it read, is it guarded on the sequence column, which selects
are final projections.

Pure functions over expressions; names compare case-insensitively, as Spark's do by default.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import TypeGuard

from sqlglot import exp
from sqlglot.errors import ParseError, TokenError

from runner.lint.context import ParsedStatement
from runner.sql.dialect import Delta, Optimize, parse_statement

Views = dict[str, exp.Expr]  # lower-cased view / CTE name -> its query

_MAX_DEPTH = 20  # views reading views; a cycle is a user error Spark reports itself


# Names Spark resolves without a relation (functions written without parentheses)
BARE_FUNCTIONS = frozenset(
    {"current_date", "current_timestamp", "current_user", "current_catalog",
     "current_database", "current_schema", "user", "session_user", "localtimestamp"}
)  # fmt: skip


def table_key(table: exp.Expr) -> str:
    """``silver.orders`` for a table node (lower-cased), ``''`` for a table function."""
    if not isinstance(table, exp.Table) or not isinstance(table.this, exp.Identifier):
        return ""
    return ".".join(part.name for part in table.parts).lower()


def change_feed_table(item: exp.Expr) -> str | None:
    """The table (its key, as ``table_key``'s) whose Change Data Feed a FROM item
    ``table_changes('<table>', ...)`` reads, or None for any other item."""
    call = item.this if isinstance(item, exp.Table) else None
    if not isinstance(call, exp.Anonymous) or call.name.lower() != "table_changes":
        return None
    first = call.expressions[0] if call.expressions else None
    if not (isinstance(first, exp.Literal) and first.is_string):
        return None
    return ".".join(part.strip().strip("`") for part in first.name.split(".")).lower()


def is_view_definition(node: exp.Expr | None) -> TypeGuard[exp.Create]:
    """A ``CREATE [OR REPLACE] [TEMPORARY] VIEW`` statement."""
    return isinstance(node, exp.Create) and str(node.args.get("kind", "")).upper() == "VIEW"


def created_view(node: exp.Expr | None) -> exp.Table | None:
    """The name of the view ``node`` creates (with or without a column list), None when it
    creates none."""
    if not is_view_definition(node):
        return None
    name = node.this.this if isinstance(node.this, exp.Schema) else node.this
    return name if isinstance(name, exp.Table) else None


def temp_views(statements: list[ParsedStatement]) -> Views:
    """Views created by ``CREATE [OR REPLACE] [TEMPORARY] VIEW`` statements, by name."""
    views: Views = {}
    for parsed in statements:
        node, name = parsed.expression, created_view(parsed.expression)
        if is_view_definition(node) and name is not None and node.expression is not None:
            views[table_key(name)] = node.expression
    return views


# Where a column's scope ends, going up the tree
_SCOPE_KINDS = (exp.Select, exp.Merge, exp.Update, exp.Delete, exp.SetOperation, exp.Lambda)


def is_scope(node: exp.Expr) -> bool:
    """Does a column's scope end at ``node``? Not at a MERGE's WHEN ... THEN UPDATE / DELETE,
    whose columns are the MERGE's."""
    if isinstance(node, (exp.Update, exp.Delete)) and isinstance(node.parent, exp.When):
        return False
    return isinstance(node, _SCOPE_KINDS)


def output_name(item: exp.Expr) -> str | None:
    """The name Spark gives a projected expression: its alias, the column's name, or (for an
    expression without an alias) a name made of its text, which no reference will match.
    None for ``*`` and for what Spark names otherwise (a struct field, an element)."""
    if isinstance(item, (exp.Star, exp.Dot, exp.Bracket)):
        return None
    if isinstance(item, exp.Column):
        return None if isinstance(item.this, exp.Star) else item.name.lower()
    if isinstance(item, exp.Alias):
        return item.alias.lower()
    if isinstance(item, exp.Cast) and isinstance(item.this, exp.Column):
        return output_name(item.this)  # Spark names `CAST(c AS t)` after the column c
    return item.sql(dialect="spark").lower()


def with_ctes(views: Views, node: exp.Expr) -> Views:
    """``views`` plus the CTEs declared on ``node`` (a query or a MERGE)."""
    with_ = node.args.get("with_") or node.args.get("with")
    if not isinstance(with_, exp.With):
        return views
    extended = dict(views)
    for cte in with_.expressions:
        extended[cte.alias_or_name.lower()] = cte.this
    return extended


@dataclass(frozen=True)
class MergeSource:
    """What a MERGE's USING reads: ``name`` for a table or view, ``query`` when known."""

    node: exp.Expr | None
    alias: str
    name: str
    query: exp.Expr | None


def merge_source(merge: exp.Merge, views: Views) -> MergeSource:
    using = merge.args.get("using")
    alias = using.alias_or_name.lower() if using is not None else ""
    if isinstance(using, exp.Subquery):
        return MergeSource(using, alias, "", using.this)
    name = table_key(using) if using is not None else ""
    return MergeSource(using, alias, name, views.get(name))


def target_names(merge: exp.Merge) -> set[str]:
    """Names that qualify a target column in the MERGE: its alias and its table name."""
    target = merge.this
    names = {target.alias_or_name.lower()} if target is not None else set()
    if isinstance(target, exp.Table):
        names |= {target.name.lower(), table_key(target)}
    return names


def conjuncts(condition: exp.Expr | None) -> list[exp.Expr]:
    """The top-level AND terms of a condition (parentheses removed)."""
    if condition is None:
        return []
    condition = condition.unnest()
    if isinstance(condition, exp.And):
        return conjuncts(condition.left) + conjuncts(condition.right)
    return [condition]


def equality_pairs(condition: exp.Expr | None) -> list[tuple[exp.Column, exp.Column]]:
    """``(left, right)`` column pairs of the top-level ``=`` / ``<=>`` terms."""
    pairs = []
    for term in conjuncts(condition):
        if isinstance(term, (exp.EQ, exp.NullSafeEQ)):
            left, right = term.left.unnest(), term.right.unnest()
            if isinstance(left, exp.Column) and isinstance(right, exp.Column):
                pairs.append((left, right))
    return pairs


# -- uniqueness ----------------------------------------------------------------------------


def unique_on(
    query: exp.Expr | None, keys: set[str], views: Views, batch_view: str, depth: int = 0
) -> bool | None:
    """Is ``query`` proven to return at most one row per ``keys``?

    True when it keeps ``ROW_NUMBER() OVER (PARTITION BY <keys>) = 1`` (in WHERE over a
    subquery, or in QUALIFY), GROUPs BY the keys, or only filters / projects a relation that
    is. False when it reads the raw batch view or a set operation without that. None when it
    reads a table the linter knows nothing about. A join is assumed not to add rows.
    """
    if query is None or depth > _MAX_DEPTH:
        return None
    if isinstance(query, exp.Subquery):
        return unique_on(query.this, keys, views, batch_view, depth + 1)
    if isinstance(query, exp.SetOperation):
        return False
    if not isinstance(query, exp.Select):
        return None
    views = with_ctes(views, query)
    group = query.args.get("group")
    if group is not None and _names_within(group.expressions, keys):
        return True
    qualify = query.args.get("qualify")
    if qualify is not None and _keeps_first_row(qualify.this, keys, {}):
        return True
    source = query.args.get("from_") or query.args.get("from")
    relation = source.this if isinstance(source, exp.From) else None
    inner = _relation_query(relation, views)
    where = query.args.get("where")
    if where is not None and isinstance(inner, exp.Select):
        numbered = {
            select.alias.lower(): select.this
            for select in inner.expressions
            if isinstance(select, exp.Alias) and isinstance(select.this, exp.Window)
        }
        if _keeps_first_row(where.this, keys, numbered):
            return True
    if isinstance(relation, exp.Table) and table_key(relation) == batch_view.lower():
        return False
    if inner is None:
        return None
    return unique_on(inner, keys, views, batch_view, depth + 1)


def _relation_query(relation: exp.Expr | None, views: Views) -> exp.Expr | None:
    if isinstance(relation, exp.Subquery):
        return relation.this
    if isinstance(relation, exp.Table):
        return views.get(table_key(relation))
    return None


def _keeps_first_row(condition: exp.Expr, keys: set[str], numbered: Mapping[str, exp.Expr]) -> bool:
    """A top-level term ``rn = 1`` (or ``rn <= 1`` / ``rn < 2``) where ``rn`` is
    ``ROW_NUMBER() OVER (PARTITION BY <subset of keys> ...)`` (inline, or an alias of the
    subquery's projection given in ``numbered``)."""
    for term in conjuncts(condition):
        if not isinstance(term, (exp.EQ, exp.LTE, exp.LT)):
            continue
        for side, other in ((term.left, term.right), (term.right, term.left)):
            limit = {exp.EQ: "1", exp.LTE: "1", exp.LT: "2"}[type(term)]
            if not (isinstance(other, exp.Literal) and other.name == limit):
                continue
            window = numbered.get(side.name.lower()) if isinstance(side, exp.Column) else side
            if (
                isinstance(window, exp.Window)
                and isinstance(window.this, exp.RowNumber)
                and _names_within(window.args.get("partition_by") or [], keys)
            ):
                return True
    return False


def _names_within(expressions: list[exp.Expr], keys: set[str]) -> bool:
    """Non-empty, all plain columns, and every column name is one of ``keys``."""
    names = [e.name.lower() for e in expressions if isinstance(e, exp.Column)]
    return bool(names) and len(names) == len(expressions) and set(names) <= keys


# -- what a query reads --------------------------------------------------------------------


def reachable_queries(query: exp.Expr | None, views: Views) -> Iterator[tuple[str, exp.Expr]]:
    """``query`` and, transitively, the views and CTEs it reads: ``(view name or '', query)``."""
    seen: set[int] = set()
    pending: list[tuple[str, exp.Expr | None, Views]] = [("", query, views)]
    while pending:
        name, node, scope = pending.pop()
        if node is None or id(node) in seen or len(seen) > _MAX_DEPTH * 10:
            continue
        seen.add(id(node))
        yield name, node
        scope = with_ctes(scope, node)
        for table in node.find_all(exp.Table):
            key = table_key(table)
            if key in scope:
                pending.append((key, scope[key], scope))


def final_selects(node: exp.Expr | None) -> list[exp.Select]:
    """The selects whose projection is the result of ``node`` (both sides of a UNION)."""
    if isinstance(node, exp.Subquery):
        return final_selects(node.this)
    if isinstance(node, exp.SetOperation):
        return final_selects(node.left) + final_selects(node.right)
    return [node] if isinstance(node, exp.Select) else []


def statement_results(node: exp.Expr | None) -> list[exp.Expr]:
    """The queries whose rows a statement keeps: a view's or CTAS's query, an INSERT's, a
    MERGE's source subquery, or the statement itself when it is a query."""
    if isinstance(node, exp.Query):
        return [node]
    if isinstance(node, (exp.Create, exp.Insert)) and isinstance(node.expression, exp.Query):
        return [node.expression]
    if isinstance(node, exp.Merge) and isinstance(node.args.get("using"), exp.Subquery):
        return [node.args["using"].this]
    return []


def optimized_table(node: Optimize) -> str:
    return table_key(node.this) if isinstance(node.this, exp.Table) else ""


# -- the sequence guard of a MERGE ----------------------------------------------------------


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


# -- statements run together ---------------------------------------------------------------

_STATEMENT_STARTS = frozenset(
    {"ALTER", "CREATE", "DELETE", "DESCRIBE", "DROP", "INSERT", "MERGE", "OPTIMIZE", "RESTORE",
     "SELECT", "TRUNCATE", "UPDATE", "VACUUM", "WITH"}
)  # fmt: skip


def run_together_at(sql: str) -> int | None:
    """The offset of the statement keyword where ``sql`` splits into two statements that each
    parse (a missing ``;``), or None. Only keywords outside parentheses are tried."""
    try:
        tokens = Delta().tokenize(sql)
    except TokenError:
        return None
    depth = 0
    for index, token in enumerate(tokens):
        if token.text == "(":
            depth += 1
        elif token.text == ")":
            depth -= 1
        elif index and depth == 0 and token.text.upper() in _STATEMENT_STARTS:
            try:
                parse_statement(sql[: token.start])
                parse_statement(sql[token.start :])
            except ParseError:
                continue
            return token.start
    return None
