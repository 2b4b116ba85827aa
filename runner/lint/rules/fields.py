"""Lint rules about the fields of struct values."""

from __future__ import annotations

from sqlglot import exp

from runner.lint.base import ERROR, Rule, Violation
from runner.lint.context import ModelContext
from runner.lint.expressions import is_scope, is_view_definition, output_name, table_key
from runner.lint.relations import typed_statements
from runner.lint.types import TypeScope

# view name -> its struct column -> the names of the struct's fields (lower-cased)
StructFields = dict[str, dict[str, frozenset[str]]]


class StructFieldNotFound(Rule):
    """A struct column's field that the struct does not have (`s.v` of `named_struct('w', x)`).

    Spark's analyzer refuses it (`FIELD_NOT_FOUND`). The fields known are those of the structs
    a view the model creates builds with `named_struct()` or `struct()`; a struct of another
    origin (a table's column, a function's result) is not judged. Name one of the struct's
    fields, or add the field where the struct is built.
    """

    spark_rejects = True
    code = "DL042"
    severity = ERROR

    def check(self, context: ModelContext) -> list[Violation]:
        found = []
        structs: dict[int | None, StructFields] = {}
        for parsed, scope in typed_statements(context):
            views = structs.setdefault(parsed.batch_id, {})
            if parsed.expression is None:
                continue
            for column in parsed.expression.find_all(exp.Column):
                fields = _struct_of(column, scope, views)
                if fields is None or column.name.lower() in fields:
                    continue
                known = ", ".join(sorted(fields)) or "none"
                message = (
                    f"[FIELD_NOT_FOUND] the struct {column.table} has no field {column.name} "
                    f"(its fields: {known})"
                )
                found.append(self.violation(context, context.locate_node(parsed, column), message))
            _record_view(parsed.expression, views)
        return found


def _struct_of(column: exp.Column, scope: TypeScope, views: StructFields) -> frozenset[str] | None:
    """The fields of the struct ``column`` (``s.field``) reads, where they are known: ``s`` is
    a column of one relation of the column's scope, a view the model built it in."""
    if column.args.get("db") is not None or not column.table or isinstance(column.this, exp.Star):
        return None
    node = column.parent
    while node is not None and not is_scope(node):
        node = node.parent
    if node is None:
        return None
    sources = scope.sources(node)
    struct = column.table.lower()
    if struct in sources or any(kinds is None for kinds in sources.values()):
        return None  # a relation's column, or a relation of unknown columns
    holders = {id(kinds): kinds for kinds in sources.values() if kinds and struct in kinds}
    if len(holders) != 1:
        return None
    (holder,) = holders.values()
    for name, kinds in sources.items():
        if kinds is holder and struct in views.get(name, {}):
            return views[name][struct]
    return None


def _record_view(node: exp.Expr, views: StructFields) -> None:
    """The struct columns of the view ``node`` creates, if it creates one."""
    if not is_view_definition(node):
        return
    if not isinstance(node.this, exp.Table) or not isinstance(node.expression, exp.Select):
        return
    structs = {}
    for item in node.expression.expressions:
        name, value = output_name(item), item.unalias()
        fields = _fields(value) if isinstance(value, exp.Struct) else None
        if name is not None and fields is not None:
            structs[name] = fields
    views[table_key(node.this)] = structs


def _fields(struct: exp.Struct) -> frozenset[str] | None:
    """The field names of ``named_struct('a', x, ...)`` / ``struct(x AS a, ...)``."""
    names = []
    for argument in struct.expressions:
        if not (isinstance(argument, exp.PropertyEQ) and isinstance(argument.this, exp.Identifier)):
            return None
        names.append(argument.this.name.lower())
    return frozenset(names)
