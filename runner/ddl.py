"""Column lists in Spark DDL form (``"order_id STRING, amount DECIMAL(10,2)"``)."""

from __future__ import annotations


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
