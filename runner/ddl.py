"""Column lists in Spark DDL form (``"order_id STRING, amount DECIMAL(10,2)"``)."""

from __future__ import annotations

import difflib
import re


def split_columns(ddl: str) -> list[str]:
    """Split a DDL column list at top-level commas: ``DECIMAL(10,2)`` and ``STRUCT<a, b>`` stay
    whole. Returns each column definition stripped."""
    columns: list[str] = []
    depth = 0
    quote: str | None = None
    current: list[str] = []
    for ch in ddl:
        if quote:
            if ch == quote:
                quote = None
        elif ch in "`'\"":
            quote = ch
        elif ch in "(<":
            depth += 1
        elif ch in ")>":
            depth -= 1
        elif ch == "," and depth == 0:
            columns.append("".join(current).strip())
            current = []
            continue
        current.append(ch)
    tail = "".join(current).strip()
    if tail:
        columns.append(tail)
    return [c for c in columns if c]


def column_names(ddl: str) -> list[str]:
    """The column names of a DDL column list, in order (backticks kept where present)."""
    names = []
    for column in split_columns(ddl):
        if column.startswith("`"):
            names.append(column[: column.index("`", 1) + 1])
        else:
            names.append(column.split(None, 1)[0])
    return names


# -- types ---------------------------------------------------------------------------------

# Spark SQL's data type names (DataTypeAstBuilder), with how many numeric arguments each takes.
# DECIMAL's precision and scale are checked below; ARRAY, MAP, STRUCT and INTERVAL have syntax
# of their own.
_TYPE_ARGUMENTS: dict[str, tuple[int, int]] = {
    **dict.fromkeys(("BOOLEAN", "TINYINT", "BYTE", "SMALLINT", "SHORT", "INT"), (0, 0)),
    **dict.fromkeys(("INTEGER", "BIGINT", "LONG", "FLOAT", "REAL", "DOUBLE"), (0, 0)),
    **dict.fromkeys(("DATE", "TIMESTAMP", "TIMESTAMP_NTZ", "TIMESTAMP_LTZ"), (0, 0)),
    **dict.fromkeys(("STRING", "BINARY", "VOID", "VARIANT"), (0, 0)),
    **dict.fromkeys(("DECIMAL", "DEC", "NUMERIC"), (0, 2)),
    **dict.fromkeys(("CHAR", "CHARACTER", "VARCHAR"), (1, 1)),
    "TIME": (0, 1),
}
SPARK_TYPES = (*_TYPE_ARGUMENTS, "INTERVAL", "ARRAY", "MAP", "STRUCT")
_INTERVAL_UNITS = ("YEAR", "MONTH", "DAY", "HOUR", "MINUTE", "SECOND")
_COLUMN_CLAUSES = ("NOT", "COMMENT", "DEFAULT", "GENERATED", "COLLATE")
_TOKEN = re.compile(r"\s*(`(?:[^`]|``)*`|'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"|\w+|\S)")


class DdlTypeError(ValueError):
    """A column list names a type Spark does not have, or misuses one."""


def check_column_types(ddl: str) -> None:
    """Check every column type of a DDL column list against Spark's types, without a JVM:
    names (``BIGINTT`` is not one), DECIMAL precision 1-38 and scale 0-precision, CHAR and
    VARCHAR lengths, ``ARRAY<t>``, ``MAP<k, v>``, ``STRUCT<name: t, ...>`` to any depth.
    Raises DdlTypeError naming the column and the type."""
    for column in split_columns(ddl):
        tokens = _TOKEN.findall(column)
        name = tokens[0] if tokens else column
        parser = _TypeParser(tokens[1:], name)
        parser.type()
        parser.clauses()


class _TypeParser:
    """Recursive descent over one column's tokens (after its name)."""

    def __init__(self, tokens: list[str], column: str) -> None:
        self.tokens = tokens
        self.position = 0
        self.column = column

    def peek(self) -> str:
        return self.tokens[self.position] if self.position < len(self.tokens) else ""

    def take(self, expected: str | None = None) -> str:
        token = self.peek()
        if expected is not None and token.upper() != expected:
            found = f"'{token}'" if token else "the end"
            self.fail(f"expected '{expected}', found {found}")
        self.position += 1
        return token

    def fail(self, message: str) -> None:
        raise DdlTypeError(f"column {self.column}: {message}")

    def type(self) -> None:
        word = self.take()
        upper = word.upper()
        if upper == "ARRAY":
            self.take("<")
            self.type()
            self.take(">")
        elif upper == "MAP":
            self.take("<")
            self.type()
            self.take(",")
            self.type()
            self.take(">")
        elif upper == "STRUCT":
            self.struct_fields()
        elif upper == "INTERVAL":
            self.interval()
        elif upper in _TYPE_ARGUMENTS:
            self.arguments(upper)
        else:
            close = difflib.get_close_matches(upper, SPARK_TYPES, n=1)
            guess = f" (did you mean {close[0]}?)" if close else ""
            self.fail(f"unknown type '{word or '(none)'}'{guess}")

    def struct_fields(self) -> None:
        self.take("<")
        while self.peek() != ">":
            self.take()  # the field's name
            if self.peek() == ":":
                self.take()
            self.type()
            self.clauses(until=(",", ">"))
            if self.peek() != ",":
                break
            self.take()
        self.take(">")

    def arguments(self, name: str) -> None:
        low, high = _TYPE_ARGUMENTS[name]
        values: list[int] = []
        if self.peek() == "(":
            self.take()
            while True:
                token = self.take()
                if not token.isdigit():
                    self.fail(f"{name} takes whole numbers in parentheses, found '{token}'")
                values.append(int(token))
                if self.peek() != ",":
                    break
                self.take()
            self.take(")")
        if not low <= len(values) <= high:
            if high == 0:
                wanted = "no arguments"
            else:
                wanted = f"{low} argument" if low == high else f"{low} to {high} arguments"
            self.fail(f"{name} takes {wanted}, got {len(values)}")
        if name in ("DECIMAL", "DEC", "NUMERIC") and values:
            precision, scale = values[0], values[1] if len(values) > 1 else 0
            if not 1 <= precision <= 38 or scale > precision:
                self.fail(
                    f"{name}({', '.join(map(str, values))}): precision must be 1 to 38 and "
                    "scale at most the precision"
                )
        if name in ("CHAR", "CHARACTER", "VARCHAR") and values[0] < 1:
            self.fail(f"{name} length must be positive")

    def interval(self) -> None:
        if self.peek().upper() in _INTERVAL_UNITS:
            self.take()
            if self.peek().upper() == "TO":
                self.take()
                if self.take().upper() not in _INTERVAL_UNITS:
                    self.fail(f"INTERVAL ... TO takes one of {', '.join(_INTERVAL_UNITS)}")

    def clauses(self, until: tuple[str, ...] = ()) -> None:
        """What may follow a type: NOT NULL, COMMENT '...', DEFAULT ..., COLLATE name."""
        token = self.peek()
        if not token or token in until:
            return
        if token.upper() not in _COLUMN_CLAUSES:
            self.fail(f"unexpected '{token}' after the type")
        while self.peek() and self.peek() not in until:
            if self.peek() in ("<", "("):
                self.skip_brackets()
            else:
                self.take()

    def skip_brackets(self) -> None:
        depth = 0
        while self.peek():
            token = self.take()
            depth += token in ("<", "(")
            depth -= token in (">", ")")
            if depth == 0:
                return
