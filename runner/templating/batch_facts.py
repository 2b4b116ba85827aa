"""What the runner measured on a micro-batch before rendering it, and how templates read it.

The Spark half (``runner/spark/batch/facts.py``) measures a batch: its real columns, the target
table's real columns, and, for the model's ``prune_by`` columns, min / max / null count (and the
distinct values of a partition column). The templating layer turns those into SQL literals, so
a MERGE can carry ``t.order_id BETWEEN 'o1' AND 'o7'`` in its ON clause: a literal predicate on
the target is what lets Delta skip files (a subquery there would not).

``runner compile`` and ``runner lint`` have no batch: ``batch_stats`` then renders named
parameter markers (``:order_id__min``) in the same place, so reviewers see the shape and the
linter can parse it. Pure Python.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime
from decimal import Decimal
from typing import Any

from runner.errors import TemplateRaise

# A partition column with at most this many distinct values in a batch is pruned with IN (...);
# above it, or for any other column, with BETWEEN min AND max.
MAX_IN_VALUES = 100


@dataclass(frozen=True)
class TypedLiteral:
    """A value kept in Spark's own text form: ``TIMESTAMP '2024-01-01 12:00:00'``.

    Timestamps are measured as text in the session's time zone, so the literal means the same
    instant to Spark whatever the Python process's time zone is.
    """

    type_name: str
    text: str


@dataclass(frozen=True)
class ColumnStats:
    """One column of one batch: its range, whether it holds NULLs, its distinct values when few."""

    min: Any
    max: Any
    null_count: int = 0
    values: tuple[Any, ...] | None = None  # distinct non-null values, for partition columns


@dataclass(frozen=True)
class BatchFacts:
    """The batch as measured by the Spark half; ``None`` fields mean "not measured"."""

    columns: tuple[str, ...] | None = None
    target_columns: tuple[str, ...] | None = None
    stats: Mapping[str, ColumnStats] = field(default_factory=dict)


def sql_literal(value: Any) -> str:
    """``value`` as a Spark SQL literal of the same type."""
    if value is None:
        return "NULL"
    if isinstance(value, TypedLiteral):
        return f"{value.type_name} {sql_literal(value.text)}"
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value) or math.isinf(value):
            return f"CAST('{value}' AS DOUBLE)"
        return f"CAST({value!r} AS DOUBLE)"
    if isinstance(value, Decimal):
        return f"{value}BD"
    if isinstance(value, datetime):
        return f"TIMESTAMP '{value.isoformat(sep=' ')}'"
    if isinstance(value, date):
        return f"DATE '{value.isoformat()}'"
    if isinstance(value, str):
        return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"
    raise TemplateRaise(f"batch_stats: cannot write a literal of type {type(value).__name__}")


class BatchStats:
    """``batch_stats`` in a template: literal predicates that bound a batch's columns.

    ``batch_stats.predicate('order_id', 't')`` renders ``t.order_id BETWEEN 'o1' AND 'o7'``
    (``IN (...)`` for a partition column; ``OR t.order_id IS NULL`` when the batch holds NULLs;
    ``FALSE`` for an empty batch, which matches nothing and has nothing to insert).
    """

    def __init__(
        self,
        stats: Mapping[str, ColumnStats] | None,
        measured: Sequence[str] | None,
        partition_columns: Sequence[str] = (),
    ) -> None:
        self._stats = {k.lower(): v for k, v in stats.items()} if stats is not None else None
        # None (parse mode): any column may be asked for; the output is not used
        self._measured = None if measured is None else [c.lower() for c in measured]
        self._partitions = {c.lower() for c in partition_columns}

    @property
    def known(self) -> bool:
        """True inside a running batch; False in ``runner compile`` / ``runner lint``."""
        return self._stats is not None

    def column(self, name: str) -> ColumnStats | None:
        """The measured stats of ``name`` (None at compile time)."""
        self._check(name)
        return None if self._stats is None else self._stats[name.lower()]

    def predicate(self, column: str, alias: str = "t") -> str:
        """A literal predicate true for every target row a batch row of ``column`` can match."""
        self._check(column)
        ref = f"{alias}.{column}" if alias else column
        if self._stats is None:  # compile / lint: show where the batch's literals go
            marker = column.strip("`").lower()
            if column.lower() in self._partitions:
                return f"{ref} IN (:{marker}__values)"
            return f"{ref} BETWEEN :{marker}__min AND :{marker}__max"
        stats = self._stats[column.lower()]
        terms = []
        if stats.values is not None and len(stats.values) <= MAX_IN_VALUES and stats.values:
            terms.append(f"{ref} IN ({', '.join(sql_literal(v) for v in stats.values)})")
        elif stats.min is not None:
            terms.append(f"{ref} BETWEEN {sql_literal(stats.min)} AND {sql_literal(stats.max)}")
        if stats.null_count:
            terms.append(f"{ref} IS NULL")
        if not terms:
            return "FALSE"
        return terms[0] if len(terms) == 1 else "(" + " OR ".join(terms) + ")"

    def _check(self, column: str) -> None:
        if self._measured is not None and column.lower() not in self._measured:
            raise TemplateRaise(
                f"batch_stats: column '{column}' is not measured; list it in "
                f"config(prune_by=[...]) (measured: {', '.join(self._measured or []) or 'none'})"
            )
