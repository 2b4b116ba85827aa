"""Lint rules about the columns a model's statements name: each one resolves in the relations the
statement reads or writes, as Spark's analyzer would resolve it, without a JVM; and an INSERT
gives its table as many columns as it has.

What the linter knows of a relation's columns: runner.lint.relations.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from difflib import get_close_matches

from sqlglot import exp

from runner.lint.base import ERROR, Rule, Violation
from runner.lint.context import ModelContext, ParsedStatement
from runner.lint.expressions import (
    BARE_FUNCTIONS,
    created_view,
    is_scope,
    is_view_definition,
    output_name,
    table_key,
)
from runner.lint.relations import (
    Columns,
    Relations,
    declared_tables,
    known_relations,
    projection,
    record_view,
    scoped_ctes,
    scoped_statements,
    select_sources,
)

# (column, the names it could have been, where they were looked for)
Unresolved = Iterator[tuple[exp.Column | exp.Identifier, list[str], str]]


class UnknownColumn(Rule):
    """A column the statement names is not in the relations it reads or writes.

    Spark's analyzer rejects it (`UNRESOLVED_COLUMN`) when the batch runs; lint finds it
    without a JVM, at its line and column, with the closest names ("did you mean"). Checked in
    `SELECT`, `WHERE`, `JOIN ... ON`, `GROUP BY`, `HAVING`, `ORDER BY`, `QUALIFY`, and in a MERGE
    into the model's target: `ON`, `WHEN` conditions, `UPDATE SET`, `INSERT (...) VALUES (...)`,
    and in `UPDATE ... SET ... WHERE` and `DELETE ... WHERE` of a known table, in the column list
    of `INSERT INTO t (a, b)`, and in a subquery (where the outer query's columns count too).
    A qualified column whose qualifier names neither a relation the query reads nor one of
    their columns (a struct's field), as `silver.orders` written where a column belongs, is
    reported too.
    `UPDATE SET *` and `INSERT *` in such a MERGE set every column of the target from the
    source's column of that name: a target column the source lacks is reported at the `*`
    (Delta's `DELTA_MERGE_UNRESOLVED_EXPRESSION`; without schema evolution, a source column the
    target lacks is ignored). The columns come from the batch view (the stream's declared
    schema, `_rescued_data` of file streams, `_change_type`, `_commit_version`,
    `_commit_timestamp` of a Change Data Feed), the temporary views created earlier in the model
    (their projection, macros' included), the model's own target (what its set-up creates it
    with), the other models' targets (read with
    `ref()`: their `columns=`, or their stream's) and the seeds' tables. A relation whose
    columns are not known statically (a table the project does not declare, a stream without a
    schema, a target that gains columns at run time through `schema_drift`,
    `MERGE WITH SCHEMA EVOLUTION`, `ALTER TABLE` or Delta's autoMerge) is never second-guessed.
    """

    # a misspelt GROUP BY column also leaves the projected column ungrouped (DL027)
    explains = frozenset({"DL027"})

    spark_rejects = True
    code = "DL023"
    severity = ERROR

    def check(self, context: ModelContext) -> list[Violation]:
        known = known_relations(context)
        if known is None:
            return []
        found: list[Violation] = []
        for statements in context.batches.values():
            relations = dict(known)
            for parsed in statements:
                unresolved = self._check_statement(context, parsed, relations)
                # a view Spark could not analyze is not created: what reads it is not judged
                record_view(parsed, relations, known=not unresolved)
                found += unresolved
        return found

    def _check_statement(
        self, context: ModelContext, parsed: ParsedStatement, relations: Relations
    ) -> list[Violation]:
        node = parsed.expression
        if node is None or isinstance(node, exp.Command):
            return []
        found = []
        if isinstance(node, exp.Merge):
            # a `*` has no position of its own: the n-th clause of its kind in the SQL text
            seen: dict[str, int] = {}
            for clause, message in _star_actions_unresolved(node, scoped_ctes(node, relations)):
                offsets = [m.start() for m in _STAR_CLAUSES[clause].finditer(parsed.sql)]
                nth = seen[clause] = seen.get(clause, -1) + 1
                at = (
                    context.locate_offset(parsed, offsets[nth], clause.split()[0])
                    if nth < len(offsets)
                    else context.locate_node(parsed, node)
                )
                found.append(self.violation(context, at, message))
        for column, candidates, where in _unresolved(parsed, relations):
            close = get_close_matches(column.name.lower(), candidates, n=3, cutoff=0.6)
            hint = f"; did you mean {', '.join(close)}?" if close else ""
            message = (
                f"[UNRESOLVED_COLUMN] column '{column.sql(dialect='spark')}' is not a column of "
                f"{where} ({', '.join(candidates) or 'no columns'}){hint}"
            )
            found.append(self.violation(context, context.locate_node(parsed, column), message))
        return found


def _unresolved(parsed: ParsedStatement, relations: Relations) -> Unresolved:
    """Columns that resolve in none of the relations their scope reads: (column, the names
    it could have been, where they were looked for)."""
    node = parsed.expression
    if node is None or not any(isinstance(n, exp.Column) for n in parsed.nodes):
        return
    scopes = _columns_by_scope(parsed.nodes)
    relations = scoped_ctes(node, relations)
    if isinstance(node, exp.Merge):
        yield from _merge_unresolved(node, relations, scopes.get(id(node), []))
    if isinstance(node, (exp.Update, exp.Delete)) and isinstance(node.this, exp.Table):
        table = node.this
        columns = relations.get(table_key(table))
        if columns is not None:
            sources = {table.alias_or_name.lower(): columns, table_key(table): columns}
            for column in scopes.get(id(node), []):
                if _unknown_in(column, sources, columns):
                    yield column, sorted(columns), f"the table {table_key(table)}"
    if isinstance(node, exp.Insert) and isinstance(node.this, exp.Schema):
        yield from _insert_list_unresolved(node.this, relations)
    for scope in parsed.nodes:
        if isinstance(scope, exp.Select) and id(scope) in scopes:
            yield from _select_unresolved(scope, relations, scopes[id(scope)])


def _insert_list_unresolved(schema: exp.Schema, relations: Relations) -> Unresolved:
    """The names of ``INSERT INTO t (a, b)``'s column list that ``t`` does not have."""
    table = schema.this
    columns = relations.get(table_key(table)) if isinstance(table, exp.Table) else None
    if columns is None:
        return
    for listed in schema.expressions:
        if isinstance(listed, exp.Identifier) and listed.name.lower() not in columns:
            yield listed, sorted(columns), f"the table {table_key(table)}"


def _unknown_in(
    column: exp.Column, sources: Mapping[str, Columns], columns: tuple[str, ...]
) -> bool:
    """Does ``column`` (of an UPDATE or DELETE of one table) name no column of it?"""
    name, qualifier = column.name.lower(), column.table.lower()
    if column.args.get("db") is not None or (qualifier and qualifier not in sources):
        return False  # a struct field, or a name Spark reports itself
    return name not in columns and name not in BARE_FUNCTIONS


def _columns_by_scope(nodes: tuple[exp.Expr, ...]) -> dict[int, list[exp.Column]]:
    """The columns of each SELECT's or MERGE's own clauses (not of the queries nested in
    them), by ``id`` of the SELECT or MERGE. Columns of a lambda (its parameters) and of a set
    operation's ORDER BY are left out."""
    scopes: dict[int, list[exp.Column]] = {}
    for node in nodes:
        if not isinstance(node, exp.Column) or isinstance(node.this, exp.Star):
            continue
        scope = node.parent
        while scope is not None and not is_scope(scope):
            scope = scope.parent
        if isinstance(scope, (exp.Select, exp.Merge, exp.Update, exp.Delete)):
            scopes.setdefault(id(scope), []).append(node)
    return scopes


def _select_unresolved(
    select: exp.Select, relations: Relations, own: list[exp.Column]
) -> Unresolved:
    relations = dict(relations)
    for parent in _ancestors(select):  # CTEs visible from here
        relations = scoped_ctes(parent, relations)
    relations = scoped_ctes(select, relations)
    sources = select_sources(select, relations)
    if not sources or any(columns is None for columns in sources.values()):
        return  # a relation of unknown columns could hold any name
    if _correlated(select):
        # a subquery may name its outer query's columns: those are candidates too
        outer = _outer_sources(select, relations)
        if outer is None:
            return
        sources = {**outer, **sources}
    aliases = {e.alias.lower() for e in select.expressions if isinstance(e, exp.Alias)}
    every = sorted({c for columns in sources.values() for c in columns or ()})
    where = _where_text(sources)
    for column in own:
        name = column.name.lower()
        qualifier = column.table.lower()
        if not qualifier:
            if name in every or name in aliases or name in BARE_FUNCTIONS:
                continue
            yield column, every, where
        elif column.args.get("db") is not None:
            continue  # db.table.column or a struct field: left to Spark
        elif qualifier in sources:
            columns = list(sources[qualifier] or ())
            if name not in columns:
                yield column, sorted(columns), _where_text({qualifier: sources[qualifier]})
        elif qualifier in every or qualifier in aliases:
            continue  # a struct's field: of a column, or of what this projection names
        else:  # neither a relation this query reads nor a column of one
            yield column, every, where


def _merge_unresolved(merge: exp.Merge, relations: Relations, own: list[exp.Column]) -> Unresolved:
    found = _merge_columns(merge, relations)
    if found is None:
        return
    target, target_columns, using, source_columns = found
    sources = {
        target.alias_or_name.lower(): target_columns,
        using.alias_or_name.lower(): source_columns,
    }
    every = sorted(set(target_columns) | set(source_columns))
    target_text = f"the target {table_key(target)}"
    for column in own:
        name, qualifier = column.name.lower(), column.table.lower()
        if _names_target_column(column):  # UPDATE SET col = ..., INSERT (col, ...)
            if name not in target_columns:
                yield column, sorted(target_columns), target_text
        elif column.args.get("db") is not None:
            continue  # a struct field or a table's full name: left to Spark
        elif qualifier and qualifier in sources:
            if name not in (sources[qualifier] or ()):
                columns = sorted(sources[qualifier] or ())
                yield column, columns, _where_text({qualifier: sources[qualifier]})
        elif not qualifier and name not in every and name not in BARE_FUNCTIONS:
            yield column, every, _where_text(sources)


def _merge_columns(
    merge: exp.Merge, relations: Relations
) -> tuple[exp.Table, tuple[str, ...], exp.Expr, tuple[str, ...]] | None:
    """A MERGE's target and source with their columns; None when either's are not known."""
    target, using = merge.this, merge.args.get("using")
    if not isinstance(target, exp.Table) or using is None:
        return None
    if isinstance(using, exp.Subquery):
        source_columns = projection(using.this, relations)
    elif isinstance(using, exp.Table):
        source_columns = relations.get(table_key(using))
    else:
        return None
    target_columns = relations.get(table_key(target))
    if target_columns is None or source_columns is None:
        return None
    return target, target_columns, using, source_columns


def _star_actions_unresolved(merge: exp.Merge, relations: Relations) -> Iterator[tuple[str, str]]:
    """Each ``UPDATE SET *`` and ``INSERT *`` of a MERGE whose source lacks a target column, in
    the MERGE's order: the clause (a key of ``_STAR_CLAUSES``) and what Delta says of it."""
    found = _merge_columns(merge, relations)
    if found is None:
        return
    target, target_columns, using, source_columns = found
    whens = merge.args.get("whens")
    for when in whens.expressions if whens else []:
        action = when.args.get("then")
        if isinstance(action, exp.Update) and len(action.expressions) == 1:
            star, clause = action.expressions[0], "UPDATE SET *"
        elif isinstance(action, exp.Insert):
            star, clause = action.this, "INSERT *"
        else:
            continue
        if not isinstance(star, exp.Star):
            continue
        present = {c.lower() for c in source_columns}
        missing = [c for c in target_columns if c.lower() not in present]
        if missing:
            source = using.alias_or_name or "the source"
            has = ", ".join(source_columns) or "no columns"
            message = (
                f"[DELTA_MERGE_UNRESOLVED_EXPRESSION] {clause} sets every column of the target "
                f"{table_key(target)} from {source}, which lacks {', '.join(missing)} (it has "
                f"{has}): add the missing columns to the source, or name the columns to set "
                f"({_SPELLED_OUT[clause]})"
            )
            yield clause, message


_STAR_CLAUSES = {
    "UPDATE SET *": re.compile(r"\bUPDATE\s+SET\s+\*", re.IGNORECASE),
    "INSERT *": re.compile(r"\bINSERT\s+\*", re.IGNORECASE),
}
_SPELLED_OUT = {
    "UPDATE SET *": "UPDATE SET t.c = s.c, ...",
    "INSERT *": "INSERT (c, ...) VALUES (s.c, ...)",
}


def _names_target_column(column: exp.Column) -> bool:
    """Is ``column`` the left side of an UPDATE SET or in the column list of an INSERT?"""
    parent = column.parent
    if isinstance(parent, exp.EQ) and parent.left is column:
        return isinstance(parent.parent, exp.Update)
    if isinstance(parent, exp.Tuple) and isinstance(parent.parent, exp.Insert):
        return parent.parent.this is parent
    return False


def _ancestors(node: exp.Expr) -> list[exp.Expr]:
    chain = []
    parent = node.parent
    while parent is not None:
        chain.append(parent)
        parent = parent.parent
    return list(reversed(chain))


def _correlated(select: exp.Select) -> bool:
    """Is ``select`` nested in an expression of another query (where that query's columns are
    visible), rather than in a FROM, JOIN or WITH of its own?"""
    node: exp.Expr | None = select.parent
    child: exp.Expr = select
    while node is not None:
        if isinstance(node, (exp.From, exp.Join, exp.CTE, exp.With)):
            return False
        if isinstance(node, (exp.Select, exp.Update, exp.Delete)):
            return True
        if isinstance(node, exp.Merge):  # its source is not correlated; its clauses may be
            return child is not node.args.get("using")
        child = node
        node = node.parent
    return False


def _outer_sources(select: exp.Select, relations: Relations) -> dict[str, Columns] | None:
    """The relations of the query ``select`` is nested in (itself not nested), when every one
    of their columns is known; None otherwise."""
    node = select.parent
    while node is not None and not isinstance(node, (exp.Select, exp.Update, exp.Delete)):
        if isinstance(node, exp.Merge):
            return None
        node = node.parent
    if isinstance(node, exp.Select) and not _correlated(node):
        sources = select_sources(node, relations)
    elif isinstance(node, (exp.Update, exp.Delete)) and isinstance(node.this, exp.Table):
        columns = relations.get(table_key(node.this))
        sources = {node.this.alias_or_name.lower(): columns, table_key(node.this): columns}
    else:
        return None
    if not sources or any(columns is None for columns in sources.values()):
        return None
    return sources


def _where_text(sources: Mapping[str, Columns]) -> str:
    names = [name or "the subquery" for name in sources]
    return " or ".join(names) if names else "the statement"


class DuplicateViewColumn(Rule):
    """A view's query returns two columns of one name.

    A query may (`SELECT a, a FROM t`), but a view's columns are named, so Spark refuses the
    `CREATE VIEW` (`COLUMN_ALREADY_EXISTS`), and every statement after it that reads the view
    fails too. Names compare case-insensitively; an expression without an alias is named after
    its text, as Spark names it. Alias one of the two, or drop it.
    """

    spark_rejects = True
    code = "DL029"
    severity = ERROR

    def check(self, context: ModelContext) -> list[Violation]:
        found = []
        for parsed, relations in scoped_statements(context):
            node = parsed.expression
            if not (
                is_view_definition(node)
                and isinstance(node.expression, exp.Select)
                and not isinstance(node.this, exp.Schema)
            ):
                continue
            names = projection(node.expression, relations)
            if names is None:
                continue
            seen: set[str] = set()
            for name in names:
                if name in seen:
                    item = _projected(node.expression, name)
                    message = (
                        f"[COLUMN_ALREADY_EXISTS] the view's query returns the column `{name}` "
                        "more than once; Spark refuses the view. Alias or drop one of them"
                    )
                    where = context.locate_node(parsed, item or node.expression)
                    found.append(self.violation(context, where, message))
                    break
                seen.add(name)
        return found


def _projected(select: exp.Select, name: str) -> exp.Expr | None:
    """The projected item that repeats ``name`` (the last one named so; None when ``*`` brought
    the name)."""
    named = [item for item in select.expressions if output_name(item) == name]
    return named[-1] if named else None


class ViewReadBeforeCreated(Rule):
    """A statement reads a temporary view that the model creates only at that statement or
    after it.

    Statements run in order: when this one runs, the view does not exist yet (or, for a view
    that reads itself, is being defined), and Spark's analyzer refuses the statement
    (`TABLE_OR_VIEW_NOT_FOUND`). Create the view before the statement that reads it, or read
    the relation the view was meant to read. A table of the same name in the catalog that the
    project does not declare would be found by Spark: `-- noqa: DL037` then.
    """

    spark_rejects = True
    code = "DL037"
    severity = ERROR

    def check(self, context: ModelContext) -> list[Violation]:
        found = []
        for statements in context.batches.values():
            created = _views_created(statements)
            for index, parsed in enumerate(statements):
                if parsed.expression is None:
                    continue
                later = {name for name, at in created.items() if at >= index}
                if not later:
                    continue
                found += [
                    self.violation(
                        context,
                        context.locate_node(parsed, table),
                        f"[TABLE_OR_VIEW_NOT_FOUND] {table_key(table)} is a view this model "
                        "creates only at this statement or after it: it does not exist yet "
                        "when this statement runs; create it first",
                    )
                    for table in _read_tables(parsed)
                    if table_key(table) in later
                ]
        return found


def _views_created(statements: list[ParsedStatement]) -> dict[str, int]:
    """View name -> index of the first statement that creates it."""
    created: dict[str, int] = {}
    for index, parsed in enumerate(statements):
        name = created_view(parsed.expression)
        if name is not None:
            created.setdefault(table_key(name), index)
    return created


def _read_tables(parsed: ParsedStatement) -> list[exp.Table]:
    """The tables a statement reads (FROM, JOIN, USING), CTE names left out."""
    ctes = {node.alias_or_name.lower() for node in parsed.nodes if isinstance(node, exp.CTE)}
    found = []
    for table in parsed.nodes:
        if not isinstance(table, exp.Table):
            continue
        parent = table.parent
        if not isinstance(parent, (exp.From, exp.Join, exp.Merge)):
            continue
        if isinstance(parent, exp.Merge) and parent.args.get("using") is not table:
            continue
        if table_key(table) and table_key(table) not in ctes:
            found.append(table)
    return found


class RelationQualifiedByRelation(Rule):
    """A statement names a relation inside a table or a view: `{{ batch }}.scratch`,
    `{{ this }}.history`.

    A table or a view holds columns, not relations, so Spark finds no such name: a view's
    name where a database belongs gives `TABLE_OR_VIEW_NOT_FOUND` (there is no database of
    that name), a table's `database.name` where a database belongs gives
    `REQUIRES_SINGLE_PART_NAMESPACE` (Spark's session catalog has one-part databases). Name the
    relation by its own database: `silver.scratch`. The names checked are the model's batch
    view, the views it creates and the tables the project declares (targets, seeds); a catalog
    configured in the target's `spark_conf` (`spark.sql.catalog.<name>`) may begin a
    three-part name. A database the project does not declare that has a view's name would be
    found by Spark: `-- noqa: DL040` then.
    """

    spark_rejects = True
    code = "DL040"
    severity = ERROR

    def check(self, context: ModelContext) -> list[Violation]:
        model = context.model
        if model is None:
            return []
        tables = set(declared_tables(context.project)) | {model.target_table.lower()}
        databases = {name.rsplit(".", 1)[0] for name in tables if "." in name}
        views = {model.batch_view.lower()}
        for statements in context.batches.values():
            views |= set(_views_created(statements))
        catalogs = _catalogs(context)
        found = []
        for parsed in context.statements():
            for table in parsed.nodes:
                if not isinstance(table, exp.Table):
                    continue
                parts = table_key(table).split(".")
                qualifier = ".".join(parts[:-1])
                if len(parts) > 3 or parts[0] in catalogs or qualifier in databases:
                    continue
                if qualifier in views and len(parts) == 2:
                    kind, error = "a view", "TABLE_OR_VIEW_NOT_FOUND"
                elif qualifier in tables and len(parts) == 3:
                    kind, error = "a table", "REQUIRES_SINGLE_PART_NAMESPACE"
                else:
                    continue
                message = (
                    f"[{error}] {table_key(table)} names a relation inside {qualifier}, which "
                    f"is {kind}, not a database: name the relation by its own database"
                )
                found.append(self.violation(context, context.locate_node(parsed, table), message))
        return found


def _catalogs(context: ModelContext) -> set[str]:
    """The catalogs a three-part name may begin with: Spark's session catalog and those the
    target configures (``spark.sql.catalog.<name>``)."""
    prefix = "spark.sql.catalog."
    configured = context.project.target.spark_conf
    return {"spark_catalog"} | {
        key[len(prefix) :].lower()
        for key in configured
        if key.startswith(prefix) and "." not in key[len(prefix) :]
    }


class InsertColumnCount(Rule):
    """An `INSERT` gives a table more or fewer columns than it has, or than it names.

    `INSERT INTO t SELECT ...` writes by position: the query must give exactly one value per
    column of `t`; with a column list, `INSERT INTO t (a, b) ...`, one per listed column. Spark
    (and Delta) refuse the statement otherwise (`INSERT_COLUMN_ARITY_MISMATCH`,
    `DELTA_INSERT_COLUMN_ARITY_MISMATCH`); by position, more values than columns passed Spark's
    analysis in the differential test and are not reported. Checked where the table's columns
    are known (the
    model's target, the other models' targets, seeds) and the query's width is too (no `*` of
    an unknown relation). A target whose schema evolves is left alone.
    """

    spark_rejects = True
    code = "DL025"
    severity = ERROR

    def check(self, context: ModelContext) -> list[Violation]:
        found = []
        for parsed, relations in scoped_statements(context):
            node = parsed.expression
            if not isinstance(node, exp.Insert) or node.expression is None:
                continue
            table = node.this.this if isinstance(node.this, exp.Schema) else node.this
            if not isinstance(table, exp.Table):
                continue
            listed = node.this.expressions if isinstance(node.this, exp.Schema) else None
            columns = relations.get(table_key(table))
            expected = len(listed) if listed else (len(columns) if columns is not None else None)
            width = _width(node.expression, relations)
            if expected is None or width is None or width == expected:
                continue
            if width > expected and not listed:
                continue  # by position, extra values passed Spark's analysis (differential test)
            what = "listed columns" if listed else f"columns of {table_key(table)}"
            more = "too many" if width > expected else "not enough"
            message = (
                f"[INSERT_COLUMN_ARITY_MISMATCH] {more} data columns: the query gives {width} "
                f"value(s) for {expected} {what}; Spark refuses the INSERT"
            )
            where = context.locate_node(parsed, node.expression)
            found.append(self.violation(context, where, message))
        return found


def _width(query: exp.Expr, relations: Relations) -> int | None:
    """How many columns ``query`` returns, or None when not known statically."""
    if isinstance(query, exp.Subquery):
        return _width(query.this, relations)
    if isinstance(query, exp.SetOperation):
        return _width(query.left, relations)
    if isinstance(query, exp.Values):
        rows = query.expressions
        return len(rows[0].expressions) if rows and isinstance(rows[0], exp.Tuple) else None
    if not isinstance(query, exp.Select):
        return None
    if any(
        isinstance(item, exp.Star)
        or (isinstance(item, exp.Column) and isinstance(item.this, exp.Star))
        for item in query.expressions
    ):
        names = projection(query, relations)
        return len(names) if names is not None else None
    return len(query.expressions)
