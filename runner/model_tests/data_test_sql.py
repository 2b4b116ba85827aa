"""A data test as SQL: the query returning its failing rows, rendered through the project's
``test_<kind>`` macro (runner/macros/data_tests.sql; a project macro of that name replaces one).
Pure Python: runner/spark/testing/data_tests.py runs the query."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from runner.model_sql import batch_context
from runner.project import Project
from runner.specs.data_tests import AGE, DataTestSpec


def data_test_sql(project: Project, test: DataTestSpec, now: datetime) -> str:
    """The query returning ``test``'s failing rows, rendered through the ``test_<kind>`` macro.

    ``now`` (UTC, naive) is the reference time of freshness tests; ``runner test`` takes it once,
    when it starts, so every freshness test of a run uses the same instant.
    """
    model = project.models[test.model]
    context = batch_context(project, model, batch_id=0)
    relation = model.target_table
    p = test.params
    args: dict[str, tuple[Any, ...]] = {
        "unique": (relation, test.column),
        "not_null": (relation, test.column),
        "accepted_values": (relation, test.column, [sql_literal(v) for v in p.get("values", [])]),
        "relationships": (relation, test.column, test.reads[-1].table, p.get("field")),
        "expression_is_true": (relation, p.get("expression")),
        "freshness": (relation, p.get("column"), _age(p.get("max_age")), timestamp_literal(now)),
    }
    return project.templates.render_macro(f"test_{test.kind}", context, *args[test.kind]).strip()


def _age(max_age: Any) -> str:
    match = AGE.fullmatch(str(max_age).strip())
    return f"{match.group(1)} {match.group(2).upper()}S" if match else str(max_age)


def sql_literal(value: Any) -> str:
    """A YAML value as a SQL literal: strings quoted (quotes doubled), numbers and booleans
    as they are."""
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, int | float):
        return str(value)
    return "'" + str(value).replace("\\", "\\\\").replace("'", "\\'") + "'"


def timestamp_literal(moment: datetime) -> str:
    return f"TIMESTAMP '{moment.strftime('%Y-%m-%d %H:%M:%S')}'"
