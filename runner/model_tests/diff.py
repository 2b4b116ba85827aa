"""Row diffs between expected and actual rows, keyed by the model's unique key. Pure Python.

Rows are tuples of text values (as Spark casts them to STRING), so a diff never trips over
Decimal('10.0') against Decimal('10.00') or time zones.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from rich.table import Table
from rich.text import Text

Row = tuple[str | None, ...]


@dataclass(frozen=True)
class RowDiff:
    """Expected rows that are missing, actual rows nobody expected, and rows whose key matches
    but whose other values differ (expected, actual)."""

    columns: tuple[str, ...]
    key: tuple[str, ...] = ()
    missing: list[Row] = field(default_factory=list)
    unexpected: list[Row] = field(default_factory=list)
    changed: list[tuple[Row, Row]] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not (self.missing or self.unexpected or self.changed)

    def summary(self) -> str:
        """``1 changed, 1 missing, 0 unexpected`` (or ``rows match``)."""
        if self.ok:
            return "rows match"
        return (
            f"{len(self.changed)} changed, {len(self.missing)} missing, "
            f"{len(self.unexpected)} unexpected"
        )


def diff_rows(
    expected: list[Row], actual: list[Row], columns: list[str], key: list[str] | None = None
) -> RowDiff:
    """Compare as multisets; rows left over on both sides with the same key are 'changed'.

    ``key`` columns not among ``columns`` are ignored (without a key, nothing pairs up).
    """
    missing = list((Counter(expected) - Counter(actual)).elements())
    unexpected = list((Counter(actual) - Counter(expected)).elements())
    positions = [columns.index(k) for k in key or [] if k in columns]
    changed: list[tuple[Row, Row]] = []
    if positions:
        by_key = _unique_by_key(unexpected, positions)
        for row in list(missing):
            match = by_key.pop(_key(row, positions), None)
            if match is not None:
                changed.append((row, match))
                missing.remove(row)
                unexpected.remove(match)
    order = positions or list(range(len(columns)))
    return RowDiff(
        columns=tuple(columns),
        key=tuple(columns[p] for p in positions),
        missing=sorted(missing, key=lambda r: _sort_key(r, order)),
        unexpected=sorted(unexpected, key=lambda r: _sort_key(r, order)),
        changed=sorted(changed, key=lambda pair: _sort_key(pair[0], order)),
    )


def _key(row: Row, positions: list[int]) -> Row:
    return tuple(row[p] for p in positions)


def _unique_by_key(rows: list[Row], positions: list[int]) -> dict[Row, Row]:
    counts = Counter(_key(r, positions) for r in rows)
    return {_key(r, positions): r for r in rows if counts[_key(r, positions)] == 1}


def _sort_key(row: Row, order: list[int]) -> tuple[str, ...]:
    return tuple("" if row[p] is None else str(row[p]) for p in order)


def diff_table(diff: RowDiff, title: str) -> Table:
    """The diff as a table: ``-`` an expected row, ``+`` an actual one; a changed row shows
    both, its differing cells in bold."""
    table = Table(
        title=title, title_justify="left", caption="- expected   + actual", caption_justify="left"
    )
    table.add_column("")
    for column in diff.columns:
        table.add_column(f"{column} (key)" if column in diff.key else column)
    rows: list[tuple[tuple[str, ...], str, Row, Row | None]]
    rows = [(k, "-", r, None) for k, r in _keyed(diff.missing, diff)]
    rows += [(k, "+", r, None) for k, r in _keyed(diff.unexpected, diff)]
    for expected, actual in diff.changed:
        rows.append((_sort_key(expected, _order(diff)), "-", expected, actual))
        rows.append((_sort_key(expected, _order(diff)), "+", actual, expected))
    for _, marker, row, other in sorted(rows, key=lambda item: (item[0], item[1] == "+")):
        style = "red" if marker == "-" else "green"
        cells = [
            Text(_show(v), style=f"bold {style}" if other is not None and v != other[i] else style)
            for i, v in enumerate(row)
        ]
        table.add_row(Text(marker, style=style), *cells)
    return table


def _order(diff: RowDiff) -> list[int]:
    return [diff.columns.index(k) for k in diff.key] or list(range(len(diff.columns)))


def _keyed(rows: list[Row], diff: RowDiff) -> list[tuple[tuple[str, ...], Row]]:
    return [(_sort_key(r, _order(diff)), r) for r in rows]


def _show(value: str | None) -> str:
    return "NULL" if value is None else value
