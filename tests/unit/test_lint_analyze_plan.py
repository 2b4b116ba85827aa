"""`runner lint --analyze`, its pure half (runner/lint/analyze.py): what goes to Spark."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from runner.lint.analyze import plan_analysis
from runner.lint.engine import build_context
from runner.project import load

MODEL = """\
{{ config(stream='orders', target='silver.m', unique_key='order_id') }}

CREATE OR REPLACE TEMPORARY VIEW latest AS SELECT * FROM {{ batch }};

MERGE INTO {{ this }} AS t
USING (
  SELECT customer_id, order_id, max(updated_at) AS updated_at
  FROM {{ batch }} -- a ')' in a comment
  WHERE status NOT IN (SELECT ')' FROM latest)
  GROUP BY order_id
) AS s
ON t.order_id = s.order_id
WHEN MATCHED THEN UPDATE SET t.updated_at = s.updated_at;

MERGE INTO {{ this }} AS t
USING latest AS s
ON t.order_id = s.order_id
WHEN MATCHED THEN DELETE;
"""


def test_a_merge_source_query_is_analyzed_on_its_own_at_the_statements_positions(
    project_factory: Callable[..., Path],
) -> None:
    """EXPLAIN of a MERGE leaves some checks of its source to the run (MISSING_AGGREGATION):
    the source query goes to Spark alone, blanked before it so Spark's line:pos are the
    statement's."""
    project = load(project_factory({"m": MODEL}))
    plan = plan_analysis(build_context(project, project.models["m"].file))
    assert plan is not None
    view, subquery_merge, view_merge = plan.statements

    source = subquery_merge.merge_source
    assert source is not None
    statement_lines = subquery_merge.sql.split("\n")
    source_lines = source.split("\n")
    assert source_lines[0].strip() == "" and source_lines[1].strip() == ""  # MERGE INTO, USING (
    # verbatim on the same lines, up to the closing parenthesis (not a ')' in a string)
    assert source_lines[2:-1] == statement_lines[2 : len(source_lines) - 1]
    assert source_lines[-2:] == ["  GROUP BY order_id", ""]
    assert "ON t.order_id" not in source
    assert len(source_lines[1]) == len(statement_lines[1])  # columns kept: blanks, not removed
    assert view_merge.merge_source is None  # a view: Spark checked its query when creating it
    assert view.merge_source is None
