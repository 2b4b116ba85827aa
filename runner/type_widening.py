"""Which column type changes Delta's type widening applies without rewriting the table.

The rules of Delta Lake 4.0 (docs.delta.io, "Delta type widening"): byte -> short, int, long,
decimal, double; short -> int, long, decimal, double; int -> long, decimal, double; long ->
decimal; float -> double; decimal(p, s) -> decimal(p + k1, s + k2) with k1 >= k2 >= 0 (an
integer type as decimal(3,0), (5,0), (10,0), (20,0)); date -> timestamp_ntz. The table needs
``'delta.enableTypeWidening' = 'true'``. Pure Python.
"""

from __future__ import annotations

import re

ALIASES = {
    "TINYINT": "BYTE",
    "SMALLINT": "SHORT",
    "INTEGER": "INT",
    "BIGINT": "LONG",
    "REAL": "FLOAT",
    "DEC": "DECIMAL",
    "NUMERIC": "DECIMAL",
}
WIDER: dict[str, frozenset[str]] = {
    "BYTE": frozenset({"SHORT", "INT", "LONG", "DECIMAL", "DOUBLE"}),
    "SHORT": frozenset({"INT", "LONG", "DECIMAL", "DOUBLE"}),
    "INT": frozenset({"LONG", "DECIMAL", "DOUBLE"}),
    "LONG": frozenset({"DECIMAL"}),
    "FLOAT": frozenset({"DOUBLE"}),
    "DATE": frozenset({"TIMESTAMP_NTZ"}),
}
INTEGER_PRECISION = {"BYTE": 3, "SHORT": 5, "INT": 10, "LONG": 20}
_TYPE = re.compile(r"^\s*([A-Za-z_]+)\s*(?:\(\s*(\d+)\s*(?:,\s*(-?\d+)\s*)?\))?")


def parse_type(text: str) -> tuple[str, tuple[int, int] | None]:
    """``'DECIMAL(10,2) NOT NULL'`` -> ``('DECIMAL', (10, 2))``; ``'bigint'`` -> ``('LONG', None)``.
    A bare DECIMAL is decimal(10,0), as in Spark."""
    found = _TYPE.match(text)
    if found is None:
        return text.strip().upper(), None
    name = ALIASES.get(found.group(1).upper(), found.group(1).upper())
    if name == "DECIMAL":
        precision = int(found.group(2) or 10)
        return name, (precision, int(found.group(3) or 0))
    return name, None


def widens(old: str, new: str) -> bool:
    """Whether changing a column from type ``old`` to ``new`` is one Delta's type widening
    applies (the same type is not a widening)."""
    old_name, old_args = parse_type(old)
    new_name, new_args = parse_type(new)
    if new_name == "DECIMAL" and new_args is not None:
        if old_name == "DECIMAL" and old_args is not None:
            start = old_args
        elif old_name in INTEGER_PRECISION:
            start = (INTEGER_PRECISION[old_name], 0)
        else:
            return False
        k1, k2 = new_args[0] - start[0], new_args[1] - start[1]
        same = old_name == "DECIMAL" and (k1, k2) == (0, 0)
        return k1 >= k2 >= 0 and not same
    return new_name in WIDER.get(old_name, frozenset())
