"""Lint rules about the columns a model's statements name: each one resolves in the relations the
statement reads or writes, as Spark's analyzer would resolve it, without a JVM; and an INSERT
gives its table as many columns as it has.

What the linter knows of a relation's columns (``Relations``): the batch view (the stream's
declared schema with what the runner adds: ``_rescued_data`` of file streams, the Change Data
Feed's columns), each temporary view the model created before (its projection, so what a
built-in macro returns too), the model's own target (what its set-up creates it with), the
other models' targets and the seeds' tables (``declared_tables``). A
relation it knows nothing of (a table the project does not declare, a table function) makes it
say nothing about the columns it could hold: no finding is better than a wrong one.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from difflib import get_close_matches

from sqlglot import exp

from runner.errors import RunnerError
from runner.lint.base import ERROR, Rule, Violation
from runner.lint.context import ModelContext, ParsedStatement
from runner.lint.expressions import is_scope, output_name, table_key
from runner.lint.types import Kind, Kinds, TypedRelations, TypeScope, data_type_kind, ddl_kinds
from runner.project import Project
from runner.specs.seeds import load_seeds

Columns = tuple[str, ...] | None  # lower-cased names in order; None: not known
Relations = dict[str, Columns]  # lower-cased relation name -> its columns
# (column, the names it could have been, where they were looked for)
Unresolved = Iterator[tuple[exp.Column, list[str], str]]

# Names Spark resolves without a relation (functions written without parentheses)
_BARE_FUNCTIONS = frozenset(
    {"current_date", "current_timestamp", "current_user", "current_catalog",
     "current_database", "current_schema", "user", "session_user", "localtimestamp"}
)  # fmt: skip


class UnknownColumn(Rule):
    """A column the statement names is not in the relations it reads or writes.

    Spark's analyzer rejects it (`UNRESOLVED_COLUMN`) when the batch runs; lint finds it
    without a JVM, at its line and column, with the closest names ("did you mean"). Checked in
    `SELECT`, `WHERE`, `JOIN ... ON`, `GROUP BY`, `HAVING`, `ORDER BY`, `QUALIFY`, and in a MERGE
    into the model's target: `ON`, `WHEN` conditions, `UPDATE SET`, `INSERT (...) VALUES (...)`,
    and in `UPDATE ... SET ... WHERE` and `DELETE ... WHERE` of a known table.
    The columns come from the batch view (the stream's declared schema, `_rescued_data` of file
    streams, `_change_type`, `_commit_version`, `_commit_timestamp` of a Change Data Feed), the
    temporary views created earlier in the model (their projection, macros' included), the
    model's own target (what its set-up creates it with), the other models' targets (read with
    `ref()`: their `columns=`, or their stream's) and the seeds' tables. A relation whose
    columns are not known statically (a table the project does not declare, a stream without a
    schema, a target that gains columns at run time through `schema_drift`,
    `MERGE WITH SCHEMA EVOLUTION`, `ALTER TABLE` or Delta's autoMerge) is never second-guessed.
    """

    # Spark's analyzer rejects the same column with --analyze; a misspelt GROUP BY column
    # also leaves the projected column ungrouped (DL027)
    explains = frozenset({"DL100", "DL027"})

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
                _record_view(parsed, relations, known=not unresolved)
                found += unresolved
        return found

    def _check_statement(
        self, context: ModelContext, parsed: ParsedStatement, relations: Relations
    ) -> list[Violation]:
        node = parsed.expression
        if node is None or isinstance(node, exp.Command):
            return []
        found = []
        for column, candidates, where in _unresolved(parsed, relations):
            close = get_close_matches(column.name.lower(), candidates, n=3, cutoff=0.6)
            hint = f"; did you mean {', '.join(close)}?" if close else ""
            message = (
                f"[UNRESOLVED_COLUMN] column '{column.sql(dialect='spark')}' is not a column of "
                f"{where} ({', '.join(candidates) or 'no columns'}){hint}"
            )
            found.append(self.violation(context, context.locate_node(parsed, column), message))
        return found


def known_relations(context: ModelContext) -> Relations | None:
    """The relations a model's first statement sees, with their columns: the project's
    declared tables, the batch view and the model's target. None when the model did not load
    or has schema drift (batch and target then gain columns at run time)."""
    model = context.model
    if model is None or model.config.schema_drift is not None:
        return None
    project = context.project
    known: Relations = dict(declared_tables(project))
    stream_columns = project.stream_column_names(model.config.stream)
    if stream_columns is not None:
        known[model.batch_view.lower()] = _names(stream_columns)
    target = _created_columns(context.setup)
    evolves = _evolves_schema(context) or _auto_merge(project)
    known[model.target_table.lower()] = None if evolves else target
    return known


def scoped_statements(context: ModelContext) -> Iterator[tuple[ParsedStatement, Relations]]:
    """Each batch statement with the relations it sees (``known_relations`` and the views the
    statements before it created)."""
    known = known_relations(context)
    if known is None:
        return
    for statements in context.batches.values():
        relations = dict(known)
        for parsed in statements:
            yield parsed, relations
            _record_view(parsed, relations, known=True)


def typed_statements(context: ModelContext) -> Iterator[tuple[ParsedStatement, TypeScope]]:
    """Each batch statement with the kinds of the columns it sees (see ``scoped_statements``;
    runner.lint.types): the declared DDL's, the target's set-up's, the views' projections'."""
    known = known_relations(context)
    if known is None or context.model is None:
        return
    declared = dict(_declared_kinds(context.project))
    declared[context.model.target_table.lower()] = _created_kinds(context.setup)
    stream = context.project.streams.get(str(context.model.config.stream))
    if stream is not None:
        declared[context.model.batch_view.lower()] = (
            ddl_kinds(context.project.stream_columns_ddl(stream)) or {}
        )
    for statements in context.batches.values():
        names = dict(known)
        kinds: TypedRelations = {
            name: _with_kinds(columns, declared.get(name)) for name, columns in known.items()
        }
        for parsed in statements:
            scope = TypeScope(kinds)
            yield parsed, scope
            view = _record_view(parsed, names, known=True)
            if view is not None:
                kinds[view] = _view_kinds(parsed.expression, names[view], scope)


def _with_kinds(columns: Columns, kinds: Kinds | None) -> Kinds | None:
    if columns is None:
        return None
    return {name: (kinds or {}).get(name) for name in columns}


def _view_kinds(node: exp.Expr | None, columns: Columns, scope: TypeScope) -> Kinds | None:
    if columns is None or not isinstance(node, exp.Create):
        return None
    query = node.expression
    selects = [query] if isinstance(query, exp.Select) else []
    items = selects[0].expressions if selects else []
    if len(items) != len(columns):
        return {name: None for name in columns}
    found: dict[str, Kind] = {}
    for name, item in zip(columns, items, strict=True):
        found.setdefault(name, scope.kind(item))
    return found


def _created_kinds(setup: list[ParsedStatement]) -> Kinds | None:
    for parsed in setup:
        node = parsed.expression
        if isinstance(node, exp.Create) and isinstance(node.this, exp.Schema):
            defs = [d for d in node.this.expressions if isinstance(d, exp.ColumnDef)]
            if defs:
                return {d.name.lower(): data_type_kind(d.args.get("kind")) for d in defs}
    return None


_KINDS: dict[int, tuple[Project, dict[str, Kinds | None]]] = {}


def _declared_kinds(project: Project) -> dict[str, Kinds | None]:
    """The kinds of the declared tables' columns (``declared_tables``), by table."""
    cached = _KINDS.get(id(project))
    if cached is not None and cached[0] is project:
        return cached[1]
    tables: dict[str, Kinds | None] = {}
    for model in project.models.values():
        tables.setdefault(model.target_table.lower(), ddl_kinds(project.target_columns_ddl(model)))
    try:
        seeds = load_seeds(project)
    except RunnerError:
        seeds = {}
    for seed in seeds.values():
        tables.setdefault(
            seed.table.lower(), ddl_kinds(", ".join(f"{c.name} {c.type}" for c in seed.columns))
        )
    _KINDS.clear()
    _KINDS[id(project)] = (project, tables)
    return tables


# one project's declared tables, computed once per lint run (and per process)
_DECLARED: dict[int, tuple[Project, Relations]] = {}
_EVOLVES = re.compile(r"\bSCHEMA\s+EVOLUTION\b|\bALTER\s+TABLE\b", re.IGNORECASE)


def declared_tables(project: Project) -> Relations:
    """The tables whose columns the project declares: every model's target (its `columns=`,
    or its stream's columns, as the built-in `create_target` creates it) and every seed's
    table. A target is unknown (None) when it may gain columns at run time (`schema_drift`,
    `MERGE WITH SCHEMA EVOLUTION`, `ALTER TABLE`, Delta's autoMerge), when the project
    overrides `create_target`, or when its writers disagree on its columns."""
    cached = _DECLARED.get(id(project))
    if cached is not None and cached[0] is project:
        return cached[1]
    tables: Relations = {}
    create = project.templates.macro_names.get("create_target")
    overridden = create is not None and create.resolve().is_relative_to(project.root)
    for model in project.models.values():
        columns: Columns = None
        changing = model.config.schema_drift is not None or _EVOLVES.search(model.source)
        if not (overridden or changing or _auto_merge(project)):
            try:
                columns = _names(project.target_column_names(model))
            except RunnerError:
                columns = None
        table = model.target_table.lower()
        tables[table] = columns if tables.get(table, columns) == columns else None
    try:
        seeds = load_seeds(project)
    except RunnerError:  # a broken seeds/*.yml is `runner seed`'s to report
        seeds = {}
    for seed in seeds.values():
        tables.setdefault(seed.table.lower(), tuple(c.name.lower() for c in seed.columns))
    _DECLARED.clear()
    _DECLARED[id(project)] = (project, tables)
    return tables


def _auto_merge(project: Project) -> bool:
    """Delta's automatic schema evolution, on for the session: MERGE and INSERT add columns."""
    return any(
        "automerge" in key.lower() and str(value).strip().lower() == "true"
        for key, value in project.target.spark_conf.items()
    )


def _names(columns: list[str]) -> tuple[str, ...]:
    return tuple(c.strip("`").lower() for c in columns)


def _created_columns(setup: list[ParsedStatement]) -> Columns:
    """The columns of the target as its set-up ``CREATE TABLE`` declares them."""
    for parsed in setup:
        node = parsed.expression
        if isinstance(node, exp.Create) and isinstance(node.this, exp.Schema):
            defs = [d for d in node.this.expressions if isinstance(d, exp.ColumnDef)]
            if defs:
                return tuple(d.name.lower() for d in defs)
    return None


def _evolves_schema(context: ModelContext) -> bool:
    """Statements that add columns to the target: MERGE WITH SCHEMA EVOLUTION, ALTER TABLE."""
    return any(
        (isinstance(p.expression, exp.Merge) and p.expression.args.get("schema_evolution"))
        or isinstance(p.expression, exp.Alter)
        for p in context.statements()
    )


def _record_view(parsed: ParsedStatement, relations: Relations, *, known: bool) -> str | None:
    """A ``CREATE [TEMPORARY] VIEW name AS query``: ``name`` now has the query's columns.
    Returns the view's name, if the statement created one."""
    node = parsed.expression
    if not (isinstance(node, exp.Create) and str(node.args.get("kind", "")).upper() == "VIEW"):
        return None
    name = node.this.this if isinstance(node.this, exp.Schema) else node.this
    if not isinstance(name, exp.Table):
        return None
    columns = projection(node.expression, relations) if node.expression is not None else None
    if isinstance(node.this, exp.Schema):  # CREATE VIEW v (a, b) AS ...
        columns = tuple(e.name.lower() for e in node.this.expressions)
    relations[table_key(name)] = columns if known else None
    return table_key(name)


# -- scopes ----------------------------------------------------------------------------------


def projection(query: exp.Expr | None, relations: Relations) -> Columns:
    """The column names a query returns, or None when one is not known statically."""
    if isinstance(query, exp.Subquery):
        return projection(query.this, relations)
    if isinstance(query, exp.SetOperation):
        return projection(query.left, relations)
    if not isinstance(query, exp.Select):
        return None
    relations = _with_ctes(query, relations)
    sources = _sources(query, relations)
    names: list[str] = []
    for item in query.expressions:
        if isinstance(item, exp.Star) or (
            isinstance(item, exp.Column) and isinstance(item.this, exp.Star)
        ):
            qualifier = item.table.lower() if isinstance(item, exp.Column) else ""
            star = _star_columns(sources, qualifier)
            if star is None:
                return None
            names += star
        else:
            name = output_name(item)  # an expression without alias: named after its text
            if name is None:
                return None
            names.append(name)
    return tuple(names)


def _star_columns(sources: dict[str, Columns], qualifier: str) -> list[str] | None:
    chosen = [sources.get(qualifier)] if qualifier else list(sources.values())
    if not chosen or any(c is None for c in chosen):
        return None
    return [name for columns in chosen for name in columns or ()]


def _with_ctes(node: exp.Expr, relations: Relations) -> Relations:
    with_ = node.args.get("with_") or node.args.get("with")
    if not isinstance(with_, exp.With):
        return relations
    scoped = dict(relations)
    for cte in with_.expressions:
        scoped[cte.alias_or_name.lower()] = projection(cte.this, scoped)
    return scoped


def _sources(select: exp.Select, relations: Relations) -> dict[str, Columns]:
    """The relations a SELECT reads, by the name that qualifies their columns (alias or
    table name). A source of unknown columns maps to None; a LATERAL VIEW or a table function
    adds an unnamed unknown source."""
    sources: dict[str, Columns] = {}
    from_ = select.args.get("from_") or select.args.get("from")
    items = [from_.this] if isinstance(from_, exp.From) else []
    items += [join.this for join in select.args.get("joins") or []]
    for item in items:
        if isinstance(item, exp.Table) and isinstance(item.this, exp.Identifier):
            columns = relations.get(table_key(item))
            sources[item.alias_or_name.lower()] = columns
            if not item.alias:
                sources[table_key(item)] = columns
        elif isinstance(item, exp.Subquery):
            sources[item.alias_or_name.lower()] = projection(item.this, relations)
        else:
            sources[""] = None
    if select.args.get("laterals"):
        sources[""] = None
    return sources


def _unresolved(parsed: ParsedStatement, relations: Relations) -> Unresolved:
    """Columns that resolve in none of the relations their scope reads: (column, the names
    it could have been, where they were looked for)."""
    node = parsed.expression
    if node is None or not any(isinstance(n, exp.Column) for n in parsed.nodes):
        return
    scopes = _columns_by_scope(parsed.nodes)
    relations = _with_ctes(node, relations)
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
    for scope in parsed.nodes:
        if isinstance(scope, exp.Select) and id(scope) in scopes:
            yield from _select_unresolved(scope, relations, scopes[id(scope)])


def _unknown_in(
    column: exp.Column, sources: Mapping[str, Columns], columns: tuple[str, ...]
) -> bool:
    """Does ``column`` (of an UPDATE or DELETE of one table) name no column of it?"""
    name, qualifier = column.name.lower(), column.table.lower()
    if column.args.get("db") is not None or (qualifier and qualifier not in sources):
        return False  # a struct field, or a name Spark reports itself
    return name not in columns and name not in _BARE_FUNCTIONS


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
        relations = _with_ctes(parent, relations)
    relations = _with_ctes(select, relations)
    sources = _sources(select, relations)
    if not sources or any(columns is None for columns in sources.values()):
        return  # a relation of unknown columns could hold any name
    if _correlated(select):
        return  # a subquery may name its outer query's columns
    aliases = {e.alias.lower() for e in select.expressions if isinstance(e, exp.Alias)}
    every = sorted({c for columns in sources.values() for c in columns or ()})
    where = _where_text(sources)
    for column in own:
        name = column.name.lower()
        qualifier = column.table.lower()
        if not qualifier:
            if name in every or name in aliases or name in _BARE_FUNCTIONS:
                continue
            yield column, every, where
        elif column.args.get("db") is not None:
            continue  # db.table.column or a struct field: left to Spark
        elif qualifier in sources:
            columns = list(sources[qualifier] or ())
            if name not in columns:
                yield column, sorted(columns), _where_text({qualifier: sources[qualifier]})
        elif qualifier in every:
            continue  # struct.field
        # an unknown qualifier: a table name Spark reports itself


def _merge_unresolved(merge: exp.Merge, relations: Relations, own: list[exp.Column]) -> Unresolved:
    target = merge.this
    using = merge.args.get("using")
    if not isinstance(target, exp.Table) or using is None:
        return
    target_columns = relations.get(table_key(target))
    if isinstance(using, exp.Subquery):
        source_columns = projection(using.this, relations)
    elif isinstance(using, exp.Table):
        source_columns = relations.get(table_key(using))
    else:
        return
    if target_columns is None or source_columns is None:
        return
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
        elif not qualifier and name not in every and name not in _BARE_FUNCTIONS:
            yield column, every, _where_text(sources)


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
                isinstance(node, exp.Create)
                and str(node.args.get("kind", "")).upper() == "VIEW"
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
