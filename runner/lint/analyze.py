"""`runner lint --analyze`, the pure half: which statements go to Spark's analyzer and how, and
how Spark's answers become findings (DL100, DL101) at the model's ``file:line:col``.

The Spark half (``runner/spark/analyze.py``) receives these plans, builds the empty stand-ins and
returns :class:`AnalysisFinding`s; nothing here imports pyspark.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from sqlglot import exp
from sqlglot.tokens import TokenType

from runner.lint.base import Violation
from runner.lint.context import Location, ModelContext, ParsedStatement
from runner.lint.rules.analysis import AnalysisSkipped, SparkAnalysisError
from runner.project import Project
from runner.specs.model import ModelSpec
from runner.specs.target import split_table_name
from runner.sql.dialect import Delta, Optimize, Vacuum

# How a statement is analyzed (see runner/spark/analyze.py for why).
RUN = "run"  # executed: temporary views and session settings later statements depend on
EXPLAIN = "explain"  # EXPLAIN only: analyzed, never executed
EXPLAIN_OR_RUN = "explain_or_run"  # writes only a stand-in: executed when EXPLAIN cannot wrap it


@dataclass(frozen=True)
class PlannedStatement:
    """One statement to analyze, in the order the model runs them."""

    parsed: ParsedStatement
    mode: str

    @property
    def sql(self) -> str:
        return self.parsed.sql

    @property
    def merge_source(self) -> str | None:
        """A MERGE's ``USING (query)`` alone, or None for any other statement.

        EXPLAIN of a MERGE resolves its clauses but not every check of its source query: Delta
        keeps the source aside and Spark checks it when the MERGE runs (a column neither
        grouped nor aggregated, ``MISSING_AGGREGATION``, passes EXPLAIN and fails the run). So
        the source query is EXPLAINed on its own too. Everything before it is blanked, newlines
        kept, so that Spark's line and position in it are the statement's.
        """
        if not isinstance(self.parsed.expression, exp.Merge):
            return None
        sql = self.sql
        tokens = Delta().tokenize(sql)
        kinds = [token.token_type for token in tokens]
        if TokenType.USING not in kinds:
            return None
        opening = kinds.index(TokenType.USING) + 1
        if kinds[opening : opening + 1] != [TokenType.L_PAREN]:
            return None  # a table or a view: nothing of its own to check
        depth = 0
        for token in tokens[opening:]:
            depth += {TokenType.L_PAREN: 1, TokenType.R_PAREN: -1}.get(token.token_type, 0)
            if depth == 0:
                start, end = tokens[opening].start, token.start
                return re.sub(r"[^\n]", " ", sql[: start + 1]) + sql[start + 1 : end]
        return None


@dataclass(frozen=True)
class ModelPlan:
    """What to analyze of one model: its batch view's columns and its statements."""

    model: ModelSpec
    batch_columns: str | None  # DDL of the batch view; None when the stream has no static schema
    statements: tuple[PlannedStatement, ...]


@dataclass(frozen=True)
class AnalysisFinding:
    """Spark's verdict on one statement (or why a model was not analyzed)."""

    model: ModelSpec
    statement: PlannedStatement | None  # None: about the model (its stand-ins, or skipped)
    message: str
    code: str = "DL100"
    line: int | None = None  # Spark's line within the statement (1-based), when it named one
    col: int | None = None
    token: str = ""  # the unresolved name, to find on the source line


Analyzer = Callable[[Project, list[ModelPlan]], list[AnalysisFinding]]


def batch_columns_ddl(project: Project, model: ModelSpec) -> str | None:
    """The columns of the model's batch view as DDL, or None when not known statically."""
    return project.stream_columns_ddl(project.stream_of(model))


def plan_analysis(context: ModelContext) -> ModelPlan | None:
    """The statements of the first batch, then the maintenance statements of the others."""
    if context.model is None or not context.batches:
        return None  # did not load or render: DL007 / DL010 say so
    first, *others = sorted(context.batches)
    parsed = list(context.batches[first])
    for batch_id in others:
        parsed += [p for p in context.batches[batch_id] if p.statement.phase == "maintenance"]
    stand_ins = {
        ".".join(split_table_name(m.target_table)).lower() for m in context.project.models.values()
    }
    statements = tuple(PlannedStatement(p, _mode(p, stand_ins)) for p in parsed)
    columns = batch_columns_ddl(context.project, context.model)
    return ModelPlan(context.model, columns, statements)


def _mode(parsed: ParsedStatement, stand_ins: set[str]) -> str:
    expression = parsed.expression
    temporary = expression is not None and expression.find(exp.TemporaryProperty) is not None
    if isinstance(expression, exp.Create) and expression.kind == "VIEW" and temporary:
        return RUN
    if isinstance(expression, (exp.Set, exp.Use)):
        return RUN
    if isinstance(expression, (exp.Merge, exp.Insert, exp.Update, exp.Delete, Optimize, Vacuum)):
        table = expression.this.find(exp.Table) if expression.this is not None else None
        if table is not None and _table_name(table) in stand_ins:
            return EXPLAIN_OR_RUN
    return EXPLAIN


def _table_name(table: exp.Table) -> str:
    return f"{table.db or 'default'}.{table.name}".lower()


def analysis_violations(
    contexts: list[ModelContext], findings: list[AnalysisFinding]
) -> dict[Path, list[Violation]]:
    """Each finding as a violation located in its model's source, by model file."""
    by_model = {c.model.name: c for c in contexts if c.model is not None}
    violations: dict[Path, list[Violation]] = {}
    for finding in findings:
        context = by_model.get(finding.model.name)
        if context is None:
            continue
        rule = SparkAnalysisError if finding.code == SparkAnalysisError.code else AnalysisSkipped
        where = _locate(context, finding)
        violations.setdefault(context.file, []).append(
            rule.violation(context, where, finding.message)
        )
    return violations


def _locate(context: ModelContext, finding: AnalysisFinding) -> Location:
    if finding.statement is None:
        model = context.model
        return context.locate_line(model.config_line if model else 1)
    parsed = finding.statement.parsed
    if finding.token:
        # Spark does not always point at the bad name (Delta's MERGE errors name the statement's
        # start); when the name occurs once in the statement, that occurrence is the place.
        hits = [
            m.start()
            for m in re.finditer(
                rf"(?<![\w.`]){re.escape(finding.token)}(?![\w`])", parsed.sql, re.IGNORECASE
            )
        ]
        at_start = finding.line in (None, 1) and finding.col in (None, 1)
        if len(hits) == 1 and (at_start or finding.line is None):
            return context.locate_offset(parsed, hits[0], finding.token)
    if finding.line is not None:
        return context.locate_statement_position(
            parsed, finding.line, finding.col or 1, finding.token
        )
    return context.locate_line(parsed.statement.line, finding.token)
