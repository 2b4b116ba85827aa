"""What the parameters of Spark's built-in scalar functions take, where a map, array or struct
is refused: Spark's analyzer checks each argument against the function's input types
(``ExpectsInputTypes``) and has no implicit cast from a complex type to a scalar one, so
``upper(map('k', s))`` or ``year(array(ts))`` fails with
``DATATYPE_MISMATCH.UNEXPECTED_INPUT_TYPE``. Functions that take complex values somewhere
(``concat``, ``reverse``, ``size``, ``coalesce``, ...) are not listed.

The Delta dialect parses many calls into nodes of its own (``date_format`` into ``TimeToStr``,
``year(x)`` into ``Year(TsOrDsToDate(x))``): where each argument ends up is found once, by
parsing a sample call of each function with placeholders, so the table below is written in
Spark's names and argument order.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import cache

from sqlglot import exp

from runner.sql.dialect import parse_statement

_STRING, _BYTES = "a STRING", "a STRING or BINARY"
_NUMBER, _INT = "a number", "an INT"
_DATE, _TIMESTAMP = "a DATE", "a TIMESTAMP"

# Spark's name -> what each parameter takes, in Spark's order (the input types of Spark 4's
# expression of that name)
TAKES: dict[str, tuple[str, ...]] = {
    **dict.fromkeys(("upper", "ucase", "lower", "lcase", "initcap", "ascii"), (_STRING,)),
    **dict.fromkeys(("trim", "ltrim", "rtrim", "btrim"), (_STRING, _STRING)),
    **dict.fromkeys(("substring", "substr"), (_BYTES, _INT, _INT)),
    **dict.fromkeys(("left", "right"), (_BYTES, _INT)),
    **dict.fromkeys(("lpad", "rpad"), (_BYTES, _INT, _BYTES)),
    **dict.fromkeys(("startswith", "endswith", "contains"), (_BYTES, _BYTES)),
    "replace": (_STRING, _STRING, _STRING),
    "translate": (_STRING, _STRING, _STRING),
    "regexp_replace": (_STRING, _STRING, _STRING, _INT),
    "regexp_extract": (_STRING, _STRING, _INT),
    "split": (_STRING, _STRING, _INT),
    "instr": (_STRING, _STRING),
    "locate": (_STRING, _STRING, _INT),
    "repeat": (_STRING, _INT),
    **dict.fromkeys(
        (
            "year",
            "month",
            "day",
            "dayofmonth",
            "dayofweek",
            "dayofyear",
            "weekday",
            "weekofyear",
            "quarter",
            "last_day",
        ),
        (_DATE,),
    ),
    **dict.fromkeys(("hour", "minute", "second"), (_TIMESTAMP,)),
    "date_format": (_TIMESTAMP, _STRING),
    **dict.fromkeys(("date_add", "date_sub", "add_months"), (_DATE, _INT)),
    "datediff": (_DATE, _DATE),
    "months_between": (_TIMESTAMP, _TIMESTAMP, "a BOOLEAN"),
    "from_unixtime": ("a BIGINT", _STRING),
    **dict.fromkeys(
        ("abs", "sqrt", "exp", "ln", "log10", "log2", "ceil", "ceiling", "floor", "sign"),
        (_NUMBER,),
    ),
    **dict.fromkeys(("round", "bround"), (_NUMBER, _INT)),
    **dict.fromkeys(("pow", "power", "pmod"), (_NUMBER, _NUMBER)),
}
# special syntax: a sample call and the parameter each placeholder stands for
_SAMPLES = {"extract": ("extract(YEAR FROM a1)", ("", "a DATE, a TIMESTAMP or an INTERVAL"))}
# the functions Spark rewrites into an arithmetic operator (its errors are the operator's)
ARITHMETIC = ("try_add", "try_subtract", "try_multiply", "try_divide", "try_mod")

Path = tuple[tuple[str, int | None], ...]  # arg names (and list positions) down to an argument
Signature = dict[Path, str]  # where an argument is -> what it takes


def arguments(node: exp.Expr) -> Iterator[tuple[exp.Expr, str, list[exp.Expr]]]:
    """Each argument of a call of a listed function with what its parameter takes, and the
    nodes the dialect put between the call and it (they are no calls of the user's)."""
    for path, takes in signatures().get(_key(node), {}).items():
        between: list[exp.Expr] = []
        value: exp.Expr | None = node
        for name, index in path:
            if value is not node and value is not None:
                between.append(value)
            found = value.args.get(name) if value is not None else None
            if index is not None:
                found = found[index] if isinstance(found, list) and index < len(found) else None
            value = found if isinstance(found, exp.Expr) else None
        if value is not None:
            yield value, takes, between


def binary_operands(node: exp.Expr) -> tuple[exp.Expr, exp.Expr] | None:
    """The two operands of a ``try_add``-like call (``try_divide(a, 2)``), else None."""
    name = _key(node)
    if name in ARITHMETIC or name in _arithmetic_classes():
        if isinstance(node, exp.Anonymous) and len(node.expressions) == 2:  # noqa: PLR2004
            return node.expressions[0], node.expressions[1]
        if isinstance(node.this, exp.Expr) and isinstance(node.expression, exp.Expr):
            return node.this, node.expression
    return None


def _parsed_call(sample: str) -> exp.Expr:
    return parse_statement(f"SELECT {sample}").expressions[0]


def _key(node: exp.Expr) -> type | str:
    return node.name.lower() if isinstance(node, exp.Anonymous) else type(node)


@cache
def _arithmetic_classes() -> frozenset[type | str]:
    return frozenset(_key(_parsed_call(f"{name}(a0, a1)")) for name in ARITHMETIC)


@cache
def signatures() -> dict[type | str, Signature]:
    """The node type (or an unknown function's name) of each listed function -> where its
    arguments are and what each takes. Two names parsed into one node type (``substr``,
    ``substring``) share an entry."""
    found: dict[type | str, Signature] = {}
    samples = {
        name: (f"{name}({', '.join(f'a{i}' for i in range(len(takes)))})", takes)
        for name, takes in TAKES.items()
    }
    for sample, takes in [*samples.values(), *_SAMPLES.values()]:
        call = _parsed_call(sample)
        signature = found.setdefault(_key(call), {})
        for position, what in enumerate(takes):
            path = _path_to(call, f"a{position}")
            if what and path is not None:
                signature.setdefault(path, what)
    return found


def _path_to(call: exp.Expr, placeholder: str) -> Path | None:
    for column in call.find_all(exp.Column):
        if column.name != placeholder or column.table:
            continue
        path: list[tuple[str, int | None]] = []
        node: exp.Expr = column
        while node is not call and node.parent is not None:
            parent, key = node.parent, node.arg_key
            if key is None:
                return None
            listed = parent.args.get(key)
            index = None
            if isinstance(listed, list):
                index = next(i for i, item in enumerate(listed) if item is node)
            path.append((key, index))
            node = parent
        return tuple(reversed(path))
    return None
