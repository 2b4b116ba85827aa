"""Lint rules for values of the wrong type: what Spark's analyzer refuses for a value's type in
an expression (``DATATYPE_MISMATCH``), and what Delta refuses to store into a target column.
The types are the coarse kinds of runner.lint.types; a value whose kind is not known is never
judged.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from itertools import chain

from sqlglot import exp

from runner.lint.base import ERROR, Rule, Violation
from runner.lint.context import ModelContext, ParsedStatement
from runner.lint.expressions import table_key
from runner.lint.parameters import arguments, binary_operands
from runner.lint.relations import typed_statements
from runner.lint.types import (
    COMPARISONS,
    COMPLEX,
    Kind,
    Nested,
    TypeScope,
    branch_values,
    data_type_kind,
    describe,
    incompatible,
)

_ARITHMETIC = (exp.Add, exp.Sub, exp.Mul, exp.Div, exp.Mod)
_ORDERING = (exp.Max, exp.Min, exp.Greatest, exp.Least, exp.ArgMax, exp.ArgMin)  # order values
_NOT_NUMBERS = COMPLEX | {"boolean"}  # kinds no arithmetic takes, whatever the other side
# The strings Spark's ANSI cast reads as a boolean (StringUtils.isTrueString / isFalseString)
_BOOLEAN_STRINGS = frozenset({"t", "true", "y", "yes", "1", "f", "false", "n", "no", "0"})
# The words a string cast to a date or timestamp may be instead of a date (Spark's special
# datetime values); any other string that does not start with a year of four digits or more
# (or, for a timestamp, with a time: 'T10:00') is no date
_DATETIME_WORDS = frozenset({"now", "today", "epoch", "yesterday", "tomorrow"})
_DATETIME_START = {
    "date": re.compile(r"[+-]?\d{4}"),
    "timestamp": re.compile(r"[+-]?\d{4}|T\d", re.I),
}
# The casts between kinds that Spark's ANSI mode refuses (Cast.canAnsiCast), whatever the
# precise types of those kinds, with the error class's suffix; an explicit CAST and what Delta
# stores into a column (UPDATE SET, a MERGE's SET and VALUES) both follow it. Each was checked
# against Spark 4.2 with Delta 4.4 (an UPDATE SET of each kind into a column of each kind).
_ANSI_REFUSED = {
    ("timestamp", "boolean"): "CAST_WITH_CONF_SUGGESTION",
    ("date", "boolean"): "CAST_WITH_CONF_SUGGESTION",
    ("boolean", "timestamp"): "CAST_WITH_CONF_SUGGESTION",
    ("boolean", "date"): "CAST_WITHOUT_SUGGESTION",
    ("numeric", "date"): "CAST_WITH_FUNC_SUGGESTION",
    ("date", "numeric"): "CAST_WITH_FUNC_SUGGESTION",
    **{(kind, "binary"): "CAST_WITHOUT_SUGGESTION" for kind in ("boolean", "timestamp", "date")},
    ("numeric", "binary"): "CAST_WITH_CONF_SUGGESTION",  # an integer's; a decimal's: WITHOUT
    **{
        ("binary", kind): "CAST_WITHOUT_SUGGESTION"
        for kind in ("numeric", "boolean", "timestamp", "date")
    },
}


def _text(kind: Kind) -> str:
    return describe(kind) if kind is not None else "UNKNOWN"


def _a(kind: Kind) -> str:
    text = _text(kind)
    return f"{'an' if text[0] in 'AEIOU' else 'a'} {text}"


def invalid_literal_cast(value: exp.Expr, kind: Kind) -> str | None:
    """Why a string literal cannot become ``kind`` (Spark's ANSI cast fails when it folds the
    constant, ``CAST_INVALID_INPUT``), or None when it can or is not a string literal."""
    if not (isinstance(value, exp.Literal) and value.is_string):
        return None
    text = value.this.strip()
    if kind == "numeric":
        try:
            float(text)
        except ValueError:
            return f"the value '{value.this}' of the type STRING cannot be cast to a number"
    if kind == "boolean" and text.lower() not in _BOOLEAN_STRINGS:
        return f"the value '{value.this}' of the type STRING cannot be cast to BOOLEAN"
    start = _DATETIME_START.get(kind or "")
    if start is not None and text.lower() not in _DATETIME_WORDS and not start.match(text):
        return f"the value '{value.this}' of the type STRING cannot be cast to {_text(kind)}"
    return None


def refused_cast(source: Kind, target: Kind) -> str | None:
    """The ``DATATYPE_MISMATCH`` error class Spark's ANSI cast from ``source`` to ``target``
    fails with, or None when it casts (or a kind is not known)."""
    if source in (None, "null") or target is None or source == target:
        return None
    if source in COMPLEX or target in COMPLEX:
        return None if target == "string" else "CAST_WITHOUT_SUGGESTION"
    return _ANSI_REFUSED.get((source, target))


def _cast_refusal(source: Kind, target: Kind) -> str:
    ansi = (
        " with ANSI mode on" if refused_cast(source, target) == "CAST_WITH_CONF_SUGGESTION" else ""
    )
    return f"cannot cast {_text(source)} to {_text(target)}{ansi}"


def _literal(node: exp.Expr) -> exp.Expr:
    return node.unnest() if isinstance(node, exp.Paren) else node


class DataTypeMismatch(Rule):
    """An expression combines values of types Spark cannot combine.

    Spark's analyzer refuses, before reading any row (`DATATYPE_MISMATCH.*`): a comparison of a
    map, array or struct with a value of another type, at any depth (`ARRAY<ARRAY<STRING>>`
    with `ARRAY<STRING>`: `BINARY_OP_DIFF_TYPES`); a comparison of maps, which have no order
    (`INVALID_ORDERING_TYPE`); arithmetic on a boolean, map, array or struct, `try_divide` and
    its kin too (`BINARY_OP_DIFF_TYPES`, `UNEXPECTED_INPUT_TYPE`); a map, array or struct given
    to a built-in function where it takes a scalar (`upper`, `trim`, `substring`, `year`,
    `EXTRACT`, `date_format`, `round`, ...: `UNEXPECTED_INPUT_TYPE`; runner/lint/parameters.py
    lists them); `IN` (a list or a subquery), `CASE`, `IF` or `COALESCE` mixing such a value
    with other types (`DATA_DIFF_TYPES`, `IN_SUBQUERY_DATA_TYPE_MISMATCH`); a cast Spark's
    ANSI mode forbids, `TRY_CAST` too (a timestamp or date to BOOLEAN and a BOOLEAN to a
    timestamp: `CAST_WITH_CONF_SUGGESTION`; a number to a DATE or back:
    `CAST_WITH_FUNC_SUGGESTION`; a map, array or struct to anything but a string, a BINARY to
    anything but a string: `CAST_WITHOUT_SUGGESTION`); a map where Spark orders values
    (`max`, `min`, `max_by`, `min_by`, `greatest`, `least`, `ORDER BY`:
    `INVALID_ORDERING_TYPE`); and a string literal compared with or cast to a number, a
    boolean, a date or a timestamp that it cannot be (`CAST_INVALID_INPUT`, raised when Spark
    folds the constant: `'x'` is no timestamp, `'2024-01-01'` and `'now'` are).
    The types come from the columns the project declares (targets, streams, seeds), the views
    the model creates, literals, casts and the constructors `array()`, `map()`,
    `named_struct()`, `struct()` with the kinds they hold (a view's `s.v` has its field's);
    an expression of a type the linter does not know is not judged.
    """

    spark_rejects = True
    code = "DL035"
    severity = ERROR

    def check(self, context: ModelContext) -> list[Violation]:
        found = []
        for parsed, scope in typed_statements(context):
            if parsed.expression is None:
                continue
            for node, message in chain(_mismatches(parsed, scope), _call_mismatches(parsed, scope)):
                found.append(self.violation(context, context.locate_node(parsed, node), message))
        return found


def _mismatches(parsed: ParsedStatement, scope: TypeScope) -> Iterator[tuple[exp.Expr, str]]:  # noqa: C901, PLR0912 - one case per operator
    for node in parsed.nodes:
        if isinstance(node, _ARITHMETIC):
            yield from _arithmetic(node, node.left, node.right, scope)
        elif isinstance(node, COMPARISONS) and not isinstance(node.parent, exp.Update):
            left, right = scope.kind(node.left), scope.kind(node.right)
            if incompatible(left, right):
                yield (
                    node,
                    (
                        f"[DATATYPE_MISMATCH.BINARY_OP_DIFF_TYPES] {_sql(node)}: the operands have "
                        f"incompatible types ({_text(left)} and {_text(right)})"
                    ),
                )
                continue
            if _orderless(left) or _orderless(right):
                yield (
                    node,
                    (
                        f"[DATATYPE_MISMATCH.INVALID_ORDERING_TYPE] {_sql(node)}: a comparison "
                        "orders its operands, and a MAP has no order"
                    ),
                )
                continue
            for value, other in ((node.left, right), (node.right, left)):
                why = invalid_literal_cast(_literal(value), other)
                if why:
                    yield value, f"[CAST_INVALID_INPUT] {_sql(node)}: {why}"
        elif isinstance(node, exp.In):
            kinds = [scope.kind(node.this), *(scope.kind(e) for e in node.expressions)]
            query = node.args.get("query")
            inner = query.this if isinstance(query, exp.Subquery) else None
            if isinstance(inner, exp.Select) and len(inner.expressions) == 1:
                kinds.append(scope.kind(inner.expressions[0]))
            if _mixed(kinds):
                kind = "IN_SUBQUERY_DATA_TYPE_MISMATCH" if inner else "DATA_DIFF_TYPES"
                yield (
                    node,
                    (
                        f"[DATATYPE_MISMATCH.{kind}] "
                        f"{_sql(node)}: IN's values must have "
                        f"one type, not {', '.join(_text(k) for k in kinds)}"
                    ),
                )
        elif isinstance(node, (exp.Case, exp.If, exp.Coalesce)):
            kinds = [scope.kind(value) for value in branch_values(node)]
            if _mixed(kinds):
                yield (
                    node,
                    (
                        f"[DATATYPE_MISMATCH.DATA_DIFF_TYPES] {_sql(node)}: its results must have "
                        f"one type, not {', '.join(_text(k) for k in kinds)}"
                    ),
                )
        elif isinstance(node, (exp.Neg, exp.Sum, exp.Avg)):
            operand = scope.kind(node.this)
            if operand in _NOT_NUMBERS:
                yield (
                    node,
                    (
                        f"[DATATYPE_MISMATCH.UNEXPECTED_INPUT_TYPE] {_sql(node)}: needs a number, "
                        f"not {_a(operand)}"
                    ),
                )
        elif isinstance(node, exp.Cast):
            yield from _bad_cast(node, scope)
        elif isinstance(node, (*_ORDERING, exp.Ordered)):
            yield from _unordered(node, scope)


def _arithmetic(
    node: exp.Expr, left_value: exp.Expr, right_value: exp.Expr, scope: TypeScope
) -> Iterator[tuple[exp.Expr, str]]:
    left, right = scope.kind(left_value), scope.kind(right_value)
    bad = [k for k in (left, right) if k in _NOT_NUMBERS]
    if bad:
        both = left is not None and right is not None and left != right
        kind = "BINARY_OP_DIFF_TYPES" if both else "UNEXPECTED_INPUT_TYPE"
        yield (
            node,
            (
                f"[DATATYPE_MISMATCH.{kind}] {_sql(node)}: arithmetic on "
                f"{_a(bad[0])} value (the operands: {_text(left)} and {_text(right)})"
            ),
        )


def _call_mismatches(parsed: ParsedStatement, scope: TypeScope) -> Iterator[tuple[exp.Expr, str]]:
    """A map, array or struct given to a built-in function's parameter that takes a scalar
    (runner.lint.parameters), and to ``try_divide`` and its kin (Spark's arithmetic)."""
    inserted: set[int] = set()  # the dialect's own nodes between a call and its argument
    for node in parsed.nodes:
        if id(node) in inserted:
            continue
        operands = binary_operands(node)
        if operands is not None:
            yield from _arithmetic(node, *operands, scope)
            continue
        for value, takes, between in arguments(node):
            inserted.update(id(b) for b in between)
            kind = scope.kind(value)
            if kind in COMPLEX:
                yield (
                    node,
                    (
                        f"[DATATYPE_MISMATCH.UNEXPECTED_INPUT_TYPE] {_sql(node)}: "
                        f"{_sql(value)} is {_a(kind)}, where the function takes {takes}"
                    ),
                )


def _unordered(node: exp.Expr, scope: TypeScope) -> Iterator[tuple[exp.Expr, str]]:
    """A map where Spark must order values: it has no order (``INVALID_ORDERING_TYPE``)."""
    if isinstance(node, (exp.ArgMax, exp.ArgMin)):
        values = [node.expression]  # max_by(x, ordering)
    elif isinstance(node, exp.Ordered):
        if _names_projected_alias(node):
            return  # ORDER BY an output column: its kind is the projection's
        values = [node.this]
    else:
        values = [node.this, *node.expressions]
    if any(scope.kind(value) == "map" for value in values):
        names: dict[type, str] = {
            exp.Ordered: "ORDER BY",
            exp.ArgMax: "max_by()",
            exp.ArgMin: "min_by()",
        }
        what = names.get(type(node)) or f"{type(node).__name__.lower()}()"
        yield (
            node,
            f"[DATATYPE_MISMATCH.INVALID_ORDERING_TYPE] {_sql(node)}: {what} orders its values, "
            "and a MAP has no order",
        )


def _orderless(kind: Kind) -> bool:
    """A map, or an array or struct holding one: Spark can neither order nor compare it."""
    if kind == "map":
        return True
    if not isinstance(kind, Nested):
        return False
    return _orderless(kind.element) or any(_orderless(k) for k in kind.fields.values())


def _names_projected_alias(ordered: exp.Ordered) -> bool:
    order = ordered.parent
    select = order.parent if isinstance(order, exp.Order) else None
    if not isinstance(select, exp.Select) or not isinstance(ordered.this, exp.Column):
        return False
    aliases = {item.alias.lower() for item in select.expressions if isinstance(item, exp.Alias)}
    return ordered.this.name.lower() in aliases


def _mixed(kinds: list[Kind]) -> bool:
    if None in kinds:
        return False
    return any(incompatible(a, b) for i, a in enumerate(kinds) for b in kinds[i + 1 :])


def _bad_cast(node: exp.Cast, scope: TypeScope) -> Iterator[tuple[exp.Expr, str]]:
    source, target = scope.kind(node.this), data_type_kind(node.args.get("to"))
    refused = refused_cast(source, target)
    if refused:
        yield (
            node,
            f"[DATATYPE_MISMATCH.{refused}] {_sql(node)}: {_cast_refusal(source, target)}",
        )
    elif target is not None and not node.args.get("safe"):  # TRY_CAST: NULL, no error
        why = invalid_literal_cast(_literal(node.this), target)
        if why:
            yield node, f"[CAST_INVALID_INPUT] {_sql(node)}: {why}"


def _sql(node: exp.Expr) -> str:
    text = " ".join(node.sql(dialect="spark").split())
    return f'"{text}"' if len(text) < 80 else f'"{text[:77]}..."'


class StoreAssignmentRefused(Rule):
    """A value stored into a target column is of a type Delta cannot cast to the column's.

    Checked in `UPDATE ... SET` and a MERGE's `UPDATE SET` and `INSERT (...) VALUES (...)`; in
    an `INSERT INTO` (its values by position, or into the columns it lists) only a map, array
    or struct into a column of another type, or a value into such a column.
    Delta casts what it stores to the column's type with Spark's ANSI cast, and refuses what
    that cannot cast (`DATATYPE_MISMATCH.*`, the same casts as DL035's): a map, array or
    struct into a column of another type, or a value into such a column that is not one; a
    BOOLEAN into a timestamp or DATE column, a timestamp or DATE into a BOOLEAN one, a number
    into a DATE or back, anything but a string into a BINARY column; and a string literal that
    is no number, boolean, date or timestamp into such a column (`CAST_INVALID_INPUT`).
    What Delta casts (a boolean or a timestamp into a BIGINT, a number into a string or a
    timestamp) is not reported. The columns' types are the target's (its `columns=` or its
    stream's).
    """

    spark_rejects = True
    code = "DL036"
    severity = ERROR

    def check(self, context: ModelContext) -> list[Violation]:
        found = []
        for parsed, scope in typed_statements(context):
            for column, value, table_kinds in _assignments(parsed.expression, scope):
                message = _refused(column, value, table_kinds, scope)
                if message:
                    where = context.locate_node(parsed, value)
                    found.append(self.violation(context, where, message))
            for column, value, table_kinds, named in _inserted(parsed.expression, scope):
                source, target = scope.kind(value), table_kinds.get(column)
                if source in COMPLEX or target in COMPLEX:
                    message = _refused(column, value, table_kinds, scope)
                    if message:
                        where = context.locate_node(parsed, named)
                        found.append(self.violation(context, where, message))
        return found


def _inserted(
    node: exp.Expr | None, scope: TypeScope
) -> Iterator[tuple[str, exp.Expr, dict, exp.Expr]]:
    """(target column, value, the target's column kinds, where Spark names the pair: the
    column in the INSERT's column list, else the value) of each value an INSERT stores, by
    position: its column list's, or the target's columns'."""
    if not isinstance(node, exp.Insert) or node.args.get("by_name") or node.args.get("partition"):
        return
    table = node.this.this if isinstance(node.this, exp.Schema) else node.this
    kinds = scope.relations.get(table_key(table)) if isinstance(table, exp.Table) else None
    if kinds is None:
        return
    listed = node.this.expressions if isinstance(node.this, exp.Schema) else None
    columns = [c.name.lower() for c in listed] if listed is not None else list(kinds)
    query = node.expression
    rows = [query.expressions] if isinstance(query, exp.Select) else []
    if isinstance(query, exp.Values):
        rows = [row.expressions for row in query.expressions if isinstance(row, exp.Tuple)]
    for row in rows:
        if len(row) != len(columns) or any(isinstance(v, exp.Star) or v.is_star for v in row):
            continue
        for position, (column, value) in enumerate(zip(columns, row, strict=True)):
            named = listed[position] if listed is not None else value
            yield column, value.unalias(), dict(kinds), named


Assignment = tuple[str, exp.Expr, dict]


def _assignments(node: exp.Expr | None, scope: TypeScope) -> Iterator[Assignment]:
    """(target column, value, the target's column kinds) of each value the statement stores."""
    if isinstance(node, exp.Update) and isinstance(node.this, exp.Table):
        kinds = scope.relations.get(table_key(node.this))
        if kinds is not None:
            yield from _set_pairs(node.expressions, dict(kinds))
    elif isinstance(node, exp.Merge) and isinstance(node.this, exp.Table):
        kinds = scope.relations.get(table_key(node.this))
        whens = node.args.get("whens")
        if kinds is None or whens is None:
            return
        for when in whens.expressions:
            action = when.args.get("then")
            if isinstance(action, exp.Update):
                yield from _set_pairs(action.expressions, dict(kinds))
            elif isinstance(action, exp.Insert) and isinstance(action.this, exp.Tuple):
                values = action.expression
                items = values.expressions if isinstance(values, exp.Tuple) else []
                columns = action.this.expressions
                if len(items) == len(columns):
                    for column, value in zip(columns, items, strict=True):
                        if isinstance(column, exp.Column):
                            yield column.name.lower(), value, dict(kinds)


def _set_pairs(pairs: list[exp.Expr], kinds: dict) -> Iterator[Assignment]:
    for pair in pairs:
        if isinstance(pair, exp.EQ) and isinstance(pair.left, exp.Column):
            yield pair.left.name.lower(), pair.right, kinds


def _refused(column: str, value: exp.Expr, kinds: dict, scope: TypeScope) -> str | None:
    target = kinds.get(column)
    source = scope.kind(value)
    if target is None or source in (None, "null"):
        return None
    refused = refused_cast(source, target)
    if refused:
        return (
            f"[DATATYPE_MISMATCH.{refused}] {_sql(value)} is of type {_text(source)}; Delta "
            f"cannot store it into {column}, of type {_text(target)} "
            f"({_cast_refusal(source, target)})"
        )
    why = invalid_literal_cast(_literal(value), target)
    if why:
        return f"[CAST_INVALID_INPUT] storing into {column}: {why}"
    return None
