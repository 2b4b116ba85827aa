"""What a model's statements can read, and the columns (names and kinds) of each relation.

What the linter knows of a relation's columns (``Relations``): the batch view (the stream's
declared schema with what the runner adds: ``_rescued_data`` of file streams, the Change Data
Feed's columns), each temporary view the model created before (its projection, so what a
built-in macro returns too), the model's own target (what its set-up creates it with), the
other models' targets and the seeds' tables (``declared_tables``). A relation it knows nothing
of (a table the project does not declare, a table function) is None: the rules then say nothing
about the columns it could hold, since no finding is better than a wrong one. The kinds of the
columns (runner.lint.types) come from the same DDL and views (``typed_statements``).
"""

from __future__ import annotations

import re
from collections import ChainMap
from collections.abc import Iterator, Mapping

from sqlglot import exp

from runner.errors import RunnerError
from runner.lint.context import ModelContext, ParsedStatement
from runner.lint.expressions import change_feed_table, created_view, output_name, table_key
from runner.lint.types import CDF_KINDS, Kind, Kinds, TypeScope, data_type_kind, ddl_kinds
from runner.project import Project
from runner.specs.seeds import load_seeds

Columns = tuple[str, ...] | None  # lower-cased names in order; None: not known
Relations = dict[str, Columns]  # lower-cased relation name -> its columns


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
            record_view(parsed, relations, known=True)


# the typed statements of the model the rules last asked about (they run model by model)
_TYPED: list[tuple[ModelContext, list[tuple[ParsedStatement, TypeScope]]]] = []


def typed_statements(context: ModelContext) -> list[tuple[ParsedStatement, TypeScope]]:
    """Each batch statement with the kinds of the columns it sees (see ``scoped_statements``;
    runner.lint.types): the declared DDL's, the target's set-up's, the views' projections'."""
    if _TYPED and _TYPED[0][0] is context:
        return _TYPED[0][1]
    found = list(_typed_statements(context))
    _TYPED[:] = [(context, found)]
    return found


def _typed_statements(context: ModelContext) -> Iterator[tuple[ParsedStatement, TypeScope]]:
    known = known_relations(context)
    if known is None or context.model is None:
        return
    local: dict[str, Kinds | None] = {
        context.model.target_table.lower(): _created_kinds(context.setup)
    }
    stream = context.project.streams.get(str(context.model.config.stream))
    if stream is not None:
        local[context.model.batch_view.lower()] = (
            ddl_kinds(context.project.stream_columns_ddl(stream)) or {}
        )
    declared = ChainMap(local, _declared_kinds(context.project))
    for statements in context.batches.values():
        names = dict(known)
        views: dict[str, Kinds | None] = {}
        for parsed in statements:
            scope = TypeScope(_RelationKinds(known, declared, views))
            yield parsed, scope
            view = record_view(parsed, names, known=True)
            if view is not None:
                views[view] = _view_kinds(parsed.expression, names[view], scope)


class _RelationKinds(dict[str, "Kinds | None"]):
    """The kinds of the relations a statement sees: the views created before it, and the
    others made on first use (a statement reads two or three of a project's many tables)."""

    def __init__(
        self, known: Relations, declared: Mapping[str, Kinds | None], views: dict[str, Kinds | None]
    ) -> None:
        super().__init__(views)
        self._known = known
        self._declared = declared

    def get(self, name: str, default: Kinds | None = None) -> Kinds | None:  # type: ignore[override]
        if name in self:
            return self[name]
        if name not in self._known:
            return default
        found = self[name] = _with_kinds(self._known[name], self._declared.get(name))
        return found


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


def record_view(parsed: ParsedStatement, relations: Relations, *, known: bool) -> str | None:
    """A ``CREATE [TEMPORARY] VIEW name AS query``: ``name`` now has the query's columns.
    Returns the view's name, if the statement created one."""
    node = parsed.expression
    name = created_view(node)
    if name is None or not isinstance(node, exp.Create):
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
    relations = scoped_ctes(query, relations)
    sources = select_sources(query, relations)
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


def scoped_ctes(node: exp.Expr, relations: Relations) -> Relations:
    with_ = node.args.get("with_") or node.args.get("with")
    if not isinstance(with_, exp.With):
        return relations
    scoped = dict(relations)
    for cte in with_.expressions:
        scoped[cte.alias_or_name.lower()] = projection(cte.this, scoped)
    return scoped


def select_sources(select: exp.Select, relations: Relations) -> dict[str, Columns]:
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
        elif (feed := change_feed_table(item)) is not None:
            columns = relations.get(feed)
            columns = None if columns is None else (*columns, *CDF_KINDS)
            sources[item.alias.lower() or feed.rsplit(".", 1)[-1]] = columns
            if not item.alias:
                sources[feed] = columns
        else:
            sources[""] = None
    if select.args.get("laterals"):
        sources[""] = None
    return sources
