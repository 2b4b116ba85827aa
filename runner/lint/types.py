"""The types of the values a statement computes, as far as the linter knows them without a JVM:
enough to see what Spark's analyzer refuses for its type (a map compared with a string, a
boolean added to a number, an array stored into a BIGINT column).

A type here is a coarse *kind*, the level at which Spark's ANSI type coercion decides whether
two values can meet: ``numeric``, ``string``, ``boolean``, ``timestamp``, ``date``, ``binary``,
``array``, ``map``, ``struct``, ``null``; None when not known. A map, array or struct kind
may know the kinds it holds (``Nested``: an array's elements, a map's keys and values, a
struct's fields), so that ``s.v`` has its field's kind and ``ARRAY<ARRAY<STRING>>`` is told
from ``ARRAY<STRING>``. Column kinds come from the DDL
the project declares (the target's ``columns=``, the stream's schema, the seeds') and from the
views the model creates (their projection's kinds); literal kinds from the literal; function
kinds from the constructors (``array()``, ``map()``, ``named_struct()``, ``struct()``) and
casts below. Anything else is None, and a rule never
reports a None.
"""

from __future__ import annotations

from collections.abc import Mapping

from sqlglot import exp

from runner.ddl import split_columns
from runner.lint.expressions import change_feed_table, is_scope, output_name, table_key
from runner.specs.stream import CDF_COLUMNS

Kind = str | None
Kinds = Mapping[str, Kind]  # lower-cased column name -> its kind
TypedRelations = dict[str, Kinds | None]  # lower-cased relation name -> its columns' kinds

COMPLEX = frozenset({"array", "map", "struct"})


class Nested(str):
    """A map, array or struct kind with the kinds it holds: ``element`` (an array's elements, a
    map's values), ``key`` (a map's keys), ``fields`` (a struct's, by lower-cased name, in
    order). It equals its plain kind (``Nested("array", ...) == "array"``): code that only asks
    for the kind needs nothing more."""

    element: Kind
    key: Kind
    fields: Mapping[str, Kind]

    def __new__(
        cls,
        kind: str,
        *,
        element: Kind = None,
        key: Kind = None,
        fields: Mapping[str, Kind] | None = None,
    ) -> Nested:
        nested = super().__new__(cls, kind)
        nested.element, nested.key, nested.fields = element, key, dict(fields or {})
        return nested


def describe(kind: Kind) -> str:
    """``ARRAY<ARRAY<STRING>>``, ``MAP<STRING, NUMERIC>``, ``STRUCT<v: MAP<...>>``, ``NUMERIC``;
    what a kind holds that is not known is ``?``."""
    if kind is None:
        return "?"
    if not isinstance(kind, Nested):
        return kind.upper()
    if kind == "array":
        return f"ARRAY<{describe(kind.element)}>"
    if kind == "map":
        return f"MAP<{describe(kind.key)}, {describe(kind.element)}>"
    fields = ", ".join(f"{name}: {describe(k)}" for name, k in kind.fields.items())
    return f"STRUCT<{fields}>"


def common_kind(kinds: list[Kind]) -> Kind:
    """The one kind of ``kinds`` (NULLs aside), with what it holds when every one holds the
    same; None when they differ or one is not known."""
    known = [k for k in kinds if k != "null"]
    if not known or any(k is None or k != known[0] for k in known):
        return None
    first = known[0]
    if all(not incompatible(first, k) and _same_shape(first, k) for k in known[1:]):
        return first
    return str(first)  # the kind, without what it holds


def _same_shape(left: Kind, right: Kind) -> bool:
    if not (isinstance(left, Nested) and isinstance(right, Nested)):
        return not isinstance(left, Nested) and not isinstance(right, Nested) and left == right
    return (
        _same_shape(left.element, right.element)
        and _same_shape(left.key, right.key)
        and list(left.fields) == list(right.fields)
        and all(_same_shape(left.fields[f], right.fields[f]) for f in left.fields)
    )


def incompatible(left: Kind, right: Kind) -> bool:
    """Whether Spark finds no common type for two values: a map, array or struct against a
    value of another kind, at any depth (``ARRAY<ARRAY<STRING>>`` against ``ARRAY<STRING>``);
    Spark's coercion reconciles scalar kinds, and compares structs field by field."""
    if left in (None, "null") or right in (None, "null"):
        return False
    if left != right:
        return left in COMPLEX or right in COMPLEX
    if not (isinstance(left, Nested) and isinstance(right, Nested)):
        return False
    if incompatible(left.element, right.element) or incompatible(left.key, right.key):
        return True
    if list(left.fields) != list(right.fields):
        return False  # structs of other fields: not judged here
    return any(incompatible(left.fields[f], right.fields[f]) for f in left.fields)


_DDL_KINDS = {
    **dict.fromkeys(
        ("TINYINT", "BYTE", "SMALLINT", "SHORT", "INT", "INTEGER", "BIGINT", "LONG"), "numeric"
    ),
    **dict.fromkeys(("FLOAT", "REAL", "DOUBLE", "DECIMAL", "DEC", "NUMERIC"), "numeric"),
    **dict.fromkeys(("STRING", "CHAR", "CHARACTER", "VARCHAR"), "string"),
    **dict.fromkeys(("TIMESTAMP", "TIMESTAMP_NTZ", "TIMESTAMP_LTZ"), "timestamp"),
    "DATE": "date",
    "BOOLEAN": "boolean",
    "BINARY": "binary",
    "ARRAY": "array",
    "MAP": "map",
    "STRUCT": "struct",
}
_NUMERIC = exp.DataType.NUMERIC_TYPES
_TEXT = exp.DataType.TEXT_TYPES
_TIMESTAMPS = {
    exp.DType.TIMESTAMP,
    exp.DType.TIMESTAMPNTZ,
    exp.DType.TIMESTAMPLTZ,
    exp.DType.TIMESTAMPTZ,
}
_ARITHMETIC = (exp.Add, exp.Sub, exp.Mul, exp.Div, exp.Mod)
COMPARISONS = (exp.EQ, exp.NEQ, exp.GT, exp.GTE, exp.LT, exp.LTE, exp.NullSafeEQ)
_PREDICATES = (*COMPARISONS, exp.And, exp.Or, exp.Not, exp.In, exp.Is, exp.Like, exp.Between)


def ddl_kinds(ddl: str | None) -> dict[str, Kind] | None:
    """Column name -> kind of a DDL column list (``"id STRING, n BIGINT"``)."""
    if not ddl:
        return None
    kinds: dict[str, Kind] = {}
    for column in split_columns(ddl):
        if column.startswith("`"):
            end = column.index("`", 1)
            name, rest = column[1:end], column[end + 1 :]
        else:
            name, _, rest = column.partition(" ")
        word = rest.strip().split("<", 1)[0].split("(", 1)[0].split(None, 1)
        kinds[name.lower()] = _DDL_KINDS.get(word[0].upper()) if word else None
    return kinds


# the columns table_changes() adds to the table's (Delta's Change Data Feed)
CDF_KINDS: Kinds = ddl_kinds(CDF_COLUMNS) or {}


def data_type_kind(data_type: exp.Expr | None) -> Kind:  # noqa: PLR0911 - one case per kind
    if not isinstance(data_type, exp.DataType):
        return None
    kind = data_type.this
    inner = data_type.expressions
    if kind == exp.DType.ARRAY and len(inner) == 1:
        return Nested("array", element=data_type_kind(inner[0]))
    if kind == exp.DType.MAP and len(inner) == 2:  # noqa: PLR2004 - a key and a value
        return Nested("map", key=data_type_kind(inner[0]), element=data_type_kind(inner[1]))
    if kind == exp.DType.STRUCT and all(isinstance(f, exp.ColumnDef) for f in inner):
        fields = {f.name.lower(): data_type_kind(f.args.get("kind")) for f in inner}
        return Nested("struct", fields=fields)
    if kind in _NUMERIC:
        return "numeric"
    if kind in _TEXT:
        return "string"
    if kind in _TIMESTAMPS:
        return "timestamp"
    return {
        exp.DType.DATE: "date",
        exp.DType.BOOLEAN: "boolean",
        exp.DType.BINARY: "binary",
        exp.DType.ARRAY: "array",
        exp.DType.MAP: "map",
        exp.DType.STRUCT: "struct",
    }.get(kind)


class TypeScope:
    """Kinds of the expressions of one statement, its columns looked up in ``relations``."""

    def __init__(self, relations: TypedRelations) -> None:
        self.relations = relations
        self._sources: dict[int, dict[str, Kinds | None]] = {}

    def kind(self, node: exp.Expr | None) -> Kind:  # noqa: C901, PLR0911, PLR0912 - one case per node type
        if node is None:
            return None
        if isinstance(node, exp.Paren):
            return self.kind(node.this)
        if isinstance(node, exp.Alias):
            return self.kind(node.this)
        if isinstance(node, exp.Literal):
            return "string" if node.is_string else "numeric"
        if isinstance(node, exp.Boolean):
            return "boolean"
        if isinstance(node, exp.Null):
            return "null"
        if isinstance(node, exp.Column):
            return self.column_kind(node)
        if isinstance(node, exp.Dot) and isinstance(node.expression, exp.Identifier):
            return _field(self.kind(node.this), [node.expression.name.lower()])
        if isinstance(node, exp.Cast):
            return data_type_kind(node.args.get("to"))
        if isinstance(node, exp.Array):
            return Nested("array", element=common_kind([self.kind(e) for e in node.expressions]))
        if isinstance(node, exp.VarMap):
            keys, values = (node.args.get(k) for k in ("keys", "values"))
            return Nested(
                "map",
                key=common_kind([self.kind(e) for e in getattr(keys, "expressions", [None])]),
                element=common_kind([self.kind(e) for e in getattr(values, "expressions", [None])]),
            )
        if isinstance(node, exp.Map):
            return "map"
        if isinstance(node, exp.Struct):
            return self._struct_kind(node)
        if isinstance(node, (exp.CurrentTimestamp,)):
            return "timestamp"
        if isinstance(node, exp.CurrentDate):
            return "date"
        if isinstance(node, exp.Count):
            return "numeric"
        if isinstance(node, _PREDICATES):
            return "boolean"
        if isinstance(node, _ARITHMETIC):
            left, right = self.kind(node.left), self.kind(node.right)
            return "numeric" if left == right == "numeric" else None
        if isinstance(node, exp.Neg):
            return "numeric" if self.kind(node.this) == "numeric" else None
        if isinstance(node, (exp.Sum, exp.Avg)):
            return "numeric" if self.kind(node.this) == "numeric" else None
        if isinstance(node, (exp.Max, exp.Min, exp.AnyValue, exp.First, exp.Last)):
            return self.kind(node.this)
        if isinstance(node, (exp.Case, exp.If, exp.Coalesce)):
            kinds = {self.kind(value) for value in branch_values(node)} - {"null"}
            return kinds.pop() if len(kinds) == 1 else None
        return None

    def _struct_kind(self, node: exp.Struct) -> Kind:
        """``named_struct('v', x)`` and ``struct(x AS v)``: a struct of their fields' kinds."""
        items = node.expressions
        if not all(isinstance(i, exp.PropertyEQ) for i in items):
            return "struct"
        fields = {i.name.lower(): self.kind(i.expression) for i in items}
        return Nested("struct", fields=fields) if len(fields) == len(items) else "struct"

    def column_kind(self, column: exp.Column) -> Kind:
        """A column's kind, or a struct field's (``s.v``, ``t.s.v``): as Spark resolves a
        dotted name, its first part a relation's name if one is so named, else a column's."""
        if isinstance(column.this, exp.Star):
            return None
        sources = self._scope_sources(column)
        if sources is None:
            return None
        parts = [part.name.lower() for part in column.parts]
        if len(parts) > 1 and parts[0] in sources:
            kinds = sources[parts[0]]
            kind = kinds.get(parts[1]) if kinds is not None else None
            return _field(kind, parts[2:])
        if len(parts) > 1 and "" in sources:
            return None  # the first part may name a relation of unknown name
        return _field(_unqualified(sources, parts[0]), parts[1:])

    def _scope_sources(self, column: exp.Column) -> dict[str, Kinds | None] | None:
        scope = column.parent
        while scope is not None and not is_scope(scope):
            scope = scope.parent
        if scope is None:
            return None
        cached = self._sources.get(id(scope))
        if cached is None:
            cached = self._sources[id(scope)] = self.sources(scope)
        return cached

    def sources(self, scope: exp.Expr) -> dict[str, Kinds | None]:
        """The relations ``scope`` (a SELECT, MERGE, UPDATE or DELETE) reads, by qualifier."""
        items: list[exp.Expr | None] = []
        if isinstance(scope, exp.Select):
            from_ = scope.args.get("from_") or scope.args.get("from")
            items = [from_.this] if isinstance(from_, exp.From) else []
            items += [join.this for join in scope.args.get("joins") or []]
            if scope.args.get("laterals"):
                return {"": None}
        elif isinstance(scope, exp.Merge):
            items = [scope.this, scope.args.get("using")]
        elif isinstance(scope, (exp.Update, exp.Delete)):
            items = [scope.this]
        found: dict[str, Kinds | None] = {}
        for item in items:
            if isinstance(item, exp.Table) and isinstance(item.this, exp.Identifier):
                kinds = self.relations.get(table_key(item))
                found[item.alias_or_name.lower()] = kinds
                found.setdefault(table_key(item), kinds)
            elif isinstance(item, exp.Subquery):
                found[item.alias_or_name.lower()] = self.projection_kinds(item.this)
            elif item is not None and (feed := change_feed_table(item)) is not None:
                kinds = self.relations.get(feed)
                kinds = None if kinds is None else {**kinds, **CDF_KINDS}
                found[item.alias.lower() or feed.rsplit(".", 1)[-1]] = kinds
                found.setdefault(feed, kinds)
            else:
                found[""] = None
        return found

    def projection_kinds(self, query: exp.Expr | None) -> dict[str, Kind] | None:
        """Output column name -> kind of a query; None when a name is not known statically."""
        if isinstance(query, exp.Subquery):
            return self.projection_kinds(query.this)
        if not isinstance(query, exp.Select) or query.args.get("with_") or query.args.get("with"):
            return None
        kinds: dict[str, Kind] = {}
        for item in query.expressions:
            star = _star_qualifier(item)
            if star is not None:
                sources = self.sources(query)
                chosen = [sources.get(star)] if star else list(sources.values())
                if not chosen or any(c is None for c in chosen):
                    return None
                for columns in chosen:
                    for column, kind in (columns or {}).items():
                        kinds.setdefault(column, kind)
                continue
            name = output_name(item)
            if name is None:
                return None
            kinds.setdefault(name, self.kind(item))
        return kinds


def _unqualified(sources: Mapping[str, Kinds | None], name: str) -> Kind:
    # one relation is there under its alias and its name: count it once
    hits = list({id(k): k for k in sources.values() if k is None or name in k}.values())
    if len(hits) != 1 or hits[0] is None:
        return None  # ambiguous, unknown, or possibly in a relation of unknown columns
    return hits[0][name]


def _field(kind: Kind, path: list[str]) -> Kind:
    """The kind of the field ``path`` names in a struct of kind ``kind``."""
    for name in path:
        if not isinstance(kind, Nested) or kind != "struct":
            return None
        kind = kind.fields.get(name)
    return kind


def _star_qualifier(item: exp.Expr) -> str | None:
    """``''`` for ``*``, ``t`` for ``t.*``, None for anything else (or a ``* EXCEPT``)."""
    if isinstance(item, exp.Star):
        return None if item.args.get("except_") or item.args.get("except") else ""
    if isinstance(item, exp.Column) and isinstance(item.this, exp.Star):
        return None if item.this.args.get("except_") else item.table.lower()
    return None


def branch_values(node: exp.Expr) -> list[exp.Expr]:
    """The values a CASE / IF / COALESCE can return."""
    if isinstance(node, exp.Case):
        values = [branch.args.get("true") for branch in node.args.get("ifs") or []]
        return [v for v in [*values, node.args.get("default")] if v is not None]
    if isinstance(node, exp.If):
        return [v for v in (node.args.get("true"), node.args.get("false")) if v is not None]
    if isinstance(node, exp.Coalesce):
        return [node.this, *node.expressions]
    return []
