"""Check text values against declared Spark SQL types, in Python, before Spark sees them.

Seeds (CSV) and unit-test rows (YAML or CSV) are validated here so a bad value is reported with
its file, line and column. A valid value is returned as text in a form Spark's ``CAST`` reads
back unchanged (the Spark side casts the text columns to the declared types), so Python never
converts timestamps through its local time zone.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, datetime
from decimal import Decimal, InvalidOperation
from typing import Any

from runner.ddl import split_columns

_INT_RANGES = {
    "TINYINT": 2**7,
    "BYTE": 2**7,
    "SMALLINT": 2**15,
    "SHORT": 2**15,
    "INT": 2**31,
    "INTEGER": 2**31,
    "BIGINT": 2**63,
    "LONG": 2**63,
}
_TEXT_TYPES = ("STRING", "VARCHAR", "CHAR")
_FLOAT_TYPES = ("FLOAT", "DOUBLE", "REAL")
_DECIMAL = re.compile(r"(?:DECIMAL|DEC|NUMERIC)\s*(?:\(\s*(\d+)\s*(?:,\s*(\d+)\s*)?\))?")
_INTEGER = re.compile(r"[+-]?\d+")
_BOOLEANS = {"true": "true", "false": "false"}
SUPPORTED_TYPES = (
    "STRING, VARCHAR(n), CHAR(n), TINYINT, SMALLINT, INT, BIGINT, DECIMAL(p,s), FLOAT, DOUBLE, "
    "BOOLEAN, DATE, TIMESTAMP, TIMESTAMP_NTZ"
)


@dataclass(frozen=True)
class Column:
    """A declared column: its name and its Spark SQL type, as written (``DECIMAL(10,2)``)."""

    name: str
    type: str

    @property
    def base_type(self) -> str:
        return re.split(r"[\s(<]", self.type.upper(), maxsplit=1)[0]


def parse_columns(ddl: str) -> list[Column]:
    """``"id STRING, amount DECIMAL(10,2)"`` -> columns. Raises ValueError on an unsupported type
    (seeds and test rows hold flat values only)."""
    columns = []
    for definition in split_columns(ddl):
        parts = definition.split(None, 1)
        if len(parts) != 2:
            raise ValueError(f"column {definition!r} has no type")
        name, kind = parts[0].strip("`"), parts[1].strip()
        kind = re.sub(r"\s+(NOT\s+NULL|COMMENT\s+.*)$", "", kind, flags=re.IGNORECASE)
        column = Column(name, kind)
        if not _is_supported(column):
            raise ValueError(f"column '{name}': type {kind} is not supported ({SUPPORTED_TYPES})")
        columns.append(column)
    return columns


def _is_supported(column: Column) -> bool:
    base = column.base_type
    return (
        base in _INT_RANGES
        or base in _TEXT_TYPES
        or base in _FLOAT_TYPES
        or base in ("BOOLEAN", "DATE", "TIMESTAMP", "TIMESTAMP_NTZ", "TIMESTAMP_LTZ")
        or _DECIMAL.fullmatch(column.type.upper()) is not None
    )


def as_text(value: Any) -> str | None:
    """A YAML or CSV value as text: None stays None, YAML dates and booleans are spelled as Spark
    reads them, an empty CSV field is NULL."""
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, datetime):
        return value.isoformat(sep=" ")
    if isinstance(value, date):
        return value.isoformat()
    text = str(value)
    return None if text == "" else text


def check_value(value: Any, column: Column) -> str | None:
    """``value`` as text Spark casts to ``column.type``; ValueError says why it does not fit."""
    text = as_text(value)
    if text is None:
        return None
    base = column.base_type
    if base in _TEXT_TYPES:
        return text
    stripped = text.strip()
    try:
        if base in _INT_RANGES:
            return _check_integer(stripped, _INT_RANGES[base])
        if base in _FLOAT_TYPES:
            return repr(float(stripped))
        if base == "BOOLEAN":
            return _BOOLEANS[stripped.lower()]
        if base == "DATE":
            return date.fromisoformat(stripped).isoformat()
        if base.startswith("TIMESTAMP"):
            return _check_timestamp(stripped)
        return _check_decimal(stripped, column.type.upper())
    except (ValueError, KeyError, InvalidOperation, ArithmeticError):
        raise ValueError(f"{text!r} is not a {column.type.upper()}") from None


def _check_integer(text: str, bound: int) -> str:
    if not _INTEGER.fullmatch(text) or not -bound <= int(text) < bound:
        raise ValueError(text)
    return str(int(text))


def _check_timestamp(text: str) -> str:
    # An offset, when given, is kept: Spark converts it to the session time zone.
    return datetime.fromisoformat(text).isoformat(sep=" ")


def _check_decimal(text: str, kind: str) -> str:
    match = _DECIMAL.fullmatch(kind)
    if match is None:
        raise ValueError(kind)
    precision = int(match.group(1) or 10)
    scale = int(match.group(2) or 0)
    number = Decimal(text)
    if not number.is_finite():
        raise ValueError(text)
    exponent = number.normalize().as_tuple().exponent  # 10.50 has one fraction digit
    fraction_digits = max(0, -exponent) if isinstance(exponent, int) else 0
    integer_digits = len(str(abs(int(number)))) if abs(number) >= 1 else 0
    if fraction_digits > scale or integer_digits > precision - scale:
        raise ValueError(text)
    return format(number, "f")
