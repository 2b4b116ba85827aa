"""`runner lint --analyze`, the Spark half: run each model's statements through Spark's analyzer
against empty stand-ins of its batch view and of every target.

Stand-ins
    Each target is an empty Delta table created by the model's own set-up DDL (columns,
    partitioning, table properties such as the Change Data Feed), but at a location in a scratch
    directory, and registered under the target's name. Each model's batch view is an empty
    temporary view with its stream's columns, in a session of its own (``newSession``), so one
    model's views are not visible to another. The scratch directory is deleted afterwards and the
    names are unregistered (a name that was registered before, to an external table, is
    registered again). The session started for ``--analyze`` is local with an in-memory catalog
    and a scratch warehouse, so a project whose target uses a cluster or a metastore is analyzed
    without touching either.

How each statement is analyzed (``runner.lint.analyze`` decides the mode from its parse tree)
    ``RUN``: temporary views and ``SET`` / ``USE`` are executed. Spark analyzes a view's query
    when the view is created, and the statements after it read the view.
    ``EXPLAIN``: DML is EXPLAINed, never executed. In Spark 4.2 with Delta 4.4, EXPLAIN of a MERGE
    runs Delta's MERGE resolution in full (assignments, ``UPDATE SET *`` / ``INSERT *``, the
    types in ``ON`` and in the assignments), as EXPLAIN of INSERT, UPDATE and DELETE does; this
    was checked against unresolved names and type mismatches in each clause. It does not run
    every check of a ``USING (query)`` source, which Spark runs with the MERGE (a column neither
    grouped nor aggregated passes EXPLAIN), so that query is EXPLAINed on its own too.
    EXPLAIN does not raise on an analysis error: it prints "Error occurred during query
    planning:" and the error, which is read from its output. Executing the MERGE on the empty
    tables would analyze it as a run does and change nothing real, but the first Delta MERGE in
    a JVM is far slower than an EXPLAIN of it.
    ``EXPLAIN_OR_RUN``: a statement that writes only a stand-in target. When Spark cannot
    EXPLAIN it (Delta's OPTIMIZE and VACUUM; EXPLAIN of MERGE ... WITH SCHEMA EVOLUTION does not
    parse), it is executed on the empty table instead, which is quick and validates it (e.g.

A model's analysis stops at its first failing statement: the later ones would mostly fail because
of it (a view that was not created). A syntax error sqlglot already reported (DL001) is not
reported again.
"""

from __future__ import annotations

import logging
import re
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, replace
from pathlib import Path

from py4j.protocol import Py4JError
from pyspark.errors import ParseException, PySparkException
from pyspark.logger import PySparkLogger
from pyspark.sql import SparkSession

from runner.error_text import error_text, first_line
from runner.errors import RunnerError
from runner.lint.analyze import (
    EXPLAIN,
    EXPLAIN_OR_RUN,
    RUN,
    AnalysisFinding,
    ModelPlan,
    PlannedStatement,
)
from runner.logs import logger_level
from runner.model_sql import compile_setup
from runner.project import Project
from runner.secrets import reveal
from runner.spark.session.builder import build_session
from runner.specs.model import ModelSpec
from runner.specs.target import split_table_name

ANALYSIS_MASTER = "local[2]"
EXPLAIN_FAILED = "Error occurred during query planning:"
_POSITION = re.compile(r"[;(]?\s*\(?line (\d+),? pos (\d+)\)?;?")
# Names Spark could not resolve: `s`.`state` (UNRESOLVED_COLUMN), "Cannot resolve s.state in"
# (Delta's MERGE) and "The table or view `x` cannot be found".
_UNRESOLVED = (
    re.compile(r"with name (`[^ ]+`) cannot be resolved"),
    re.compile(r"Cannot resolve (\S+) in \w+ clause"),
    re.compile(r"The table or view (`[^ ]+`) cannot be found"),
)
_EXPLAIN_PREFIX = "EXPLAIN "


class _StatementFailed(Exception):
    def __init__(self, text: str, *, parse_error: bool = False) -> None:
        super().__init__(text)
        self.text = text
        self.parse_error = parse_error


def analyze_project(
    project: Project, plans: list[ModelPlan], spark: SparkSession | None = None
) -> list[AnalysisFinding]:
    """Analyze every planned model in one Spark application; returns what Spark rejected.

    ``spark`` defaults to a local session with an in-memory catalog (see the module docstring);
    tests pass their shared session.
    """
    if not plans:
        return []
    scratch = Path(tempfile.mkdtemp(prefix="runner-analyze-"))
    try:
        spark = spark or analysis_session(project, scratch)
        findings: list[AnalysisFinding] = []
        with _quiet_query_context_logger(), _stand_in_targets(spark, project, scratch) as failed:
            for plan in plans:
                if plan.model.name in failed:
                    findings += failed[plan.model.name]
                else:
                    findings += analyze_model(spark.newSession(), plan)
        return findings
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


# The stand-ins are empty, and the statements Spark cannot EXPLAIN (OPTIMIZE, VACUUM) run on
# them: one partition does each job. Delta computes a new snapshot's state with 50 partitions
# by default, and VACUUM lists a table's directories with Spark's partition-discovery
# parallelism, 10,000 tasks by default: most of an empty VACUUM's time.
_EMPTY_TABLES_CONF = {
    "spark.databricks.delta.snapshotPartitions": "1",
    "spark.sql.shuffle.partitions": "1",
    "spark.sql.sources.parallelPartitionDiscovery.parallelism": "1",
}


def analysis_session(project: Project, scratch: Path) -> SparkSession:
    """A local session for analysis only: in-memory catalog, warehouse in ``scratch``, jobs
    sized for the empty stand-ins."""
    target = replace(
        project.target,
        master=ANALYSIS_MASTER,
        warehouse=scratch / "warehouse",
        checkpoint_root=scratch / "checkpoints",
        spark_conf={
            **project.target.spark_conf,
            **_EMPTY_TABLES_CONF,
            "spark.sql.catalogImplementation": "in-memory",
        },
        catalog=None,  # never the shared catalog: analysis registers scratch tables
    )
    return build_session(target, app_name=f"runner-lint-analyze:{project.name}")


def analyze_model(session: SparkSession, plan: ModelPlan) -> list[AnalysisFinding]:
    """The model's statements in order on ``session``; stops at the first failure."""
    model = plan.model
    if plan.batch_columns is None:
        return [
            AnalysisFinding(
                model,
                None,
                f"not analyzed: stream '{model.config.stream}' has no static schema, so the "
                f"batch view {model.batch_view} has no columns to stand in with",
                code="DL101",
            )
        ]
    try:
        session.createDataFrame([], plan.batch_columns).createOrReplaceTempView(model.batch_view)
    except (PySparkException, Py4JError) as exc:
        message = f"batch view {model.batch_view}: {_one_sentence(error_text(exc))}"
        return [AnalysisFinding(model, None, message)]
    for planned in plan.statements:
        try:
            _analyze_statement(session, planned)
        except _StatementFailed as failed:
            if failed.parse_error and planned.parsed.error is not None:
                return []  # the same syntax error as DL001's
            return [_finding(model, planned, failed)]
    return []


def _analyze_statement(session: SparkSession, planned: PlannedStatement) -> None:
    if planned.mode == RUN:
        _sql(session, planned.sql)
        return
    try:
        _explain(session, planned.sql)
    except _StatementFailed as failed:
        if not failed.parse_error:
            raise
        # The statement, or only EXPLAIN around it, does not parse.
        if planned.mode == EXPLAIN_OR_RUN:
            _sql(session, planned.sql)
        elif planned.mode == EXPLAIN and _parses(session, planned.sql):
            return  # valid, but Spark cannot EXPLAIN it and it writes a real table: not run
        else:
            raise
    else:
        source = planned.merge_source  # tokenizes the statement: once
        if source is not None:
            _explain(session, source)


def _explain(session: SparkSession, sql: str) -> None:
    rows = _sql(session, _EXPLAIN_PREFIX + sql)
    output = "\n".join(str(row[0]) for row in rows)
    if output.lstrip().startswith(EXPLAIN_FAILED):
        text = output.lstrip()[len(EXPLAIN_FAILED) :].strip()
        raise _StatementFailed(_shift_position(text, len(_EXPLAIN_PREFIX)))


def _sql(session: SparkSession, sql: str) -> list:
    try:
        return session.sql(reveal(sql, used_in="lint --analyze")).collect()
    except ParseException as exc:
        raise _StatementFailed(error_text(exc), parse_error=True) from None
    except (PySparkException, Py4JError) as exc:
        text = error_text(exc)
        raise _StatementFailed(text, parse_error="PARSE_SYNTAX_ERROR" in text) from None


def _parses(session: SparkSession, sql: str) -> bool:
    """Whether Spark's parser (with Delta's extension) accepts ``sql``, without running it."""
    try:
        session._jsparkSession.sessionState().sqlParser().parsePlan(sql)
    except Exception:  # noqa: BLE001 - any failure here means "cannot tell": report the error
        return False
    return True


def _shift_position(text: str, prefix: int) -> str:
    """Positions on line 1 of ``EXPLAIN <sql>`` are ``prefix`` characters right of the SQL's."""

    def shift(match: re.Match[str]) -> str:
        line, pos = int(match.group(1)), int(match.group(2))
        if line == 1:
            pos = max(pos - prefix, 0)
        return match.group(0).replace(f"pos {match.group(2)}", f"pos {pos}")

    return re.sub(r"line (\d+),? pos (\d+)", shift, text)


def _finding(
    model: ModelSpec, planned: PlannedStatement, failed: _StatementFailed
) -> AnalysisFinding:
    text = failed.text
    line = col = None
    position = re.search(r"line (\d+),? pos (\d+)", text)
    if position:
        line, col = int(position.group(1)), int(position.group(2)) + 1
    token = ""
    for pattern in _UNRESOLVED:
        match = pattern.search(text)
        if match:
            token = match.group(1).replace("`", "")
            break
    what = f"{planned.parsed.statement.label} ({planned.parsed.statement.keyword or 'statement'})"
    return AnalysisFinding(
        model,
        planned,
        f"Spark rejects {what}: {_one_sentence(text)}",
        line=line,
        col=col,
        token=token,
    )


def _one_sentence(text: str) -> str:
    """The first line of Spark's message as one sentence, without the position it names (the
    finding carries it) or the plan the analyzer appends."""
    first = first_line(text) or "error"
    first = _POSITION.sub("", first.split("; line ")[0]).strip()
    return first.rstrip(";.") + "."


# -- stand-in targets ----------------------------------------------------------------------


@dataclass(frozen=True)
class _Registration:
    table: str
    location: str  # of an external table that held the name before; restored afterwards


@contextmanager
def _stand_in_targets(
    spark: SparkSession, project: Project, scratch: Path
) -> Iterator[dict[str, list[AnalysisFinding]]]:
    """Register an empty Delta table for every target, at a location in ``scratch``.

    Yields model name -> findings for models whose stand-in could not be made (their set-up DDL
    fails, or the name belongs to a managed table in this session, which is left alone).
    """
    scratch_project = replace(
        project, target=replace(project.target, warehouse=scratch / "targets")
    )
    failed: dict[str, list[AnalysisFinding]] = {}
    created: list[str] = []
    previous: list[_Registration] = []
    schemas: list[str] = []
    try:
        for model in project.models.values():
            problem = _make_stand_in(
                spark, scratch_project, model, scratch, created, previous, schemas
            )
            if problem is not None:
                failed[model.name] = [AnalysisFinding(model, None, problem)] if problem else []
        yield failed
    finally:
        for table in created:
            spark.sql(f"DROP TABLE IF EXISTS {table}")
        for registration in previous:
            spark.sql(
                f"CREATE TABLE IF NOT EXISTS {registration.table} USING DELTA "
                f"LOCATION '{registration.location}'"
            )
        for schema in schemas:
            spark.sql(f"DROP SCHEMA IF EXISTS {schema}")


def _make_stand_in(
    spark: SparkSession,
    scratch_project: Project,
    model: ModelSpec,
    scratch: Path,
    created: list[str],
    previous: list[_Registration],
    schemas: list[str],
) -> str | None:
    table = model.target_table
    if table in created:
        return None  # two models write one target
    schema, _ = split_table_name(table)
    try:
        setup = compile_setup(scratch_project, model)
    except RunnerError:
        return ""  # the set-up does not render: DL010 reports it; the model is not analyzed
    if not spark.catalog.databaseExists(schema):
        spark.sql(f"CREATE SCHEMA {schema} LOCATION '{scratch / 'schemas' / schema}'")
        schemas.append(schema)
    if spark.catalog.tableExists(table):
        details = {
            row["col_name"]: row["data_type"]
            for row in spark.sql(f"DESCRIBE TABLE EXTENDED {table}").collect()
        }
        if details.get("Type", "").upper() != "EXTERNAL":
            return f"not analyzed: {table} is a managed table in this session; it is left alone"
        previous.append(_Registration(table, details.get("Location", "")))
        spark.sql(f"DROP TABLE {table}")  # an external table's name only; its data stays
    try:
        spark.sql(setup.create.executable).collect()
    except (PySparkException, Py4JError) as exc:
        return f"Spark rejects the set-up DDL of {table}: {_one_sentence(error_text(exc))}"
    created.append(table)
    return None


def _quiet_query_context_logger() -> AbstractContextManager[None]:
    """pyspark logs every SQL error with its query context, Java stack and all, on stderr; the
    errors here are findings, reported by the linter."""
    return logger_level(PySparkLogger.getLogger("SQLQueryContextLogger"), logging.CRITICAL)
