"""The one way a model becomes SQL: set-up, expectations, per-batch and maintenance statements.

Streaming, compile, lint and unit tests all call these functions. Pure Python.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from runner.ddl import column_names, split_columns
from runner.errors import ConfigError
from runner.expectations import ExpectationChecks, expectation_checks
from runner.project import Project
from runner.secrets import reveal
from runner.specs.model import ModelSpec
from runner.specs.target import split_table_name
from runner.storage import Location, RemotePath
from runner.templating.batch_facts import BatchFacts, BatchStats
from runner.templating.context import TemplateInputs, template_context
from runner.templating.splitter import SqlStatement, split_statements

DML_KEYWORDS = frozenset({"MERGE", "INSERT", "UPDATE", "DELETE"})


@dataclass(frozen=True)
class CompiledStatement:
    """One statement to run, with the phase it belongs to and where it comes from."""

    phase: str  # 'setup', 'batch' or 'maintenance'
    index: int  # position within its phase, stable across runs
    sql: str
    file: Path
    line: int
    line_map: tuple[int, ...] = ()  # source line of each line of ``sql``, when known

    def source_line_at(self, statement_line: int) -> int:
        """The model line of line ``statement_line`` (1-based) of this statement."""
        if not self.line_map:
            return self.line
        return self.line_map[min(max(statement_line, 1), len(self.line_map)) - 1]

    @property
    def keyword(self) -> str:
        return SqlStatement(self.sql, self.line).keyword

    @property
    def is_dml(self) -> bool:
        """Writes a Delta table, so it must be made idempotent per batch."""
        return self.keyword in DML_KEYWORDS

    @property
    def label(self) -> str:
        return f"{self.phase}[{self.index}]"

    @property
    def executable(self) -> str:
        """The SQL as Spark receives it: values from env_var() in place of their markers
        (``sql`` is what is shown and written, runner/secrets.py)."""
        return reveal(
            self.sql, used_in=f"{self.label} ({self.keyword})", file=self.file, line=self.line
        )


@dataclass(frozen=True)
class TargetSetup:
    """How a model's target table comes to exist in a session.

    ``create`` runs when no Delta table is at ``location``; ``attach`` registers an existing one
    under its name (the catalog lives only as long as the session); ``properties`` are then
    aligned with ``set_properties`` when the table's differ from the model's.
    """

    table: str
    location: Location
    create_schema: CompiledStatement
    create: CompiledStatement
    attach: CompiledStatement
    properties: dict[str, str]


def target_columns(project: Project, model: ModelSpec) -> list[str]:
    """The target's column definitions: the model's ``columns`` or else the stream's schema."""
    ddl = project.target_columns_ddl(model)
    if not ddl:
        raise ConfigError(
            f"the columns of target {model.target_table} are unknown",
            file=model.file,
            line=model.config_line,
            hint="add columns='id STRING, ...' to config() or a schema to the stream",
        )
    return split_columns(ddl)


def compile_setup(
    project: Project, model: ModelSpec, location_root: Path | None = None
) -> TargetSetup:
    """Render the target's DDL through the (overridable) create_target macros.

    The SQL names the table's absolute location, as Spark needs it. ``runner compile`` passes
    ``location_root`` (the project root) to render the location relative to it instead, so the
    compiled files are the same on every machine; ``TargetSetup.location`` stays absolute.
    """
    config = model.config
    location = project.target.table_location(model.target_table)
    shown_location = (
        str(location) if location_root is None else relative_location(location, location_root)
    )
    context = batch_context(project, model, batch_id=0)
    schema, _ = split_table_name(model.target_table)
    this = model.target_table

    def statement(index: int, macro: str, *args: Any, **kwargs: Any) -> CompiledStatement:
        sql = project.templates.render_macro(macro, context, *args, **kwargs).strip()
        return CompiledStatement("setup", index, sql, model.file, model.config_line)

    return TargetSetup(
        table=this,
        location=location,
        create_schema=statement(0, "create_schema", schema),
        create=statement(
            1,
            "create_target",
            this,
            columns=target_columns(project, model),
            location=shown_location,
            partitioned_by=config.partitioned_by,
            properties=config.table_properties,
            cluster_by=config.cluster_by,
        ),
        attach=statement(1, "attach_target", this, location=shown_location),
        properties=dict(config.table_properties),
    )


def relative_location(location: Location, root: Path) -> str:
    """``location`` relative to ``root`` in POSIX form (``target/local/warehouse/s/t``); a
    location on object storage as it is (``s3a://bucket/warehouse/s/t``)."""
    if isinstance(location, RemotePath):
        return str(location)
    return PurePosixPath(Path(os.path.relpath(location, root))).as_posix()


def set_properties_statement(
    project: Project, model: ModelSpec, properties: dict[str, str]
) -> CompiledStatement:
    """ALTER TABLE ... SET TBLPROPERTIES for properties an existing target lacks."""
    context = batch_context(project, model, batch_id=0)
    sql = project.templates.render_macro(
        "set_table_properties", context, model.target_table, properties
    ).strip()
    return CompiledStatement("setup", 2, sql, model.file, model.config_line)


def batch_context(
    project: Project, model: ModelSpec, batch_id: int, facts: BatchFacts | None = None
) -> dict[str, Any]:
    """The template context of ``model`` for micro-batch ``batch_id``.

    ``facts`` (from a running batch) replace what is known statically: the batch's real
    columns, the target table's real columns, and the ranges ``batch_stats`` renders.
    """
    stream_ddl = project.stream_columns_ddl(project.stream_of(model))
    facts = facts or BatchFacts()
    columns = column_names(stream_ddl) if stream_ddl else []
    declared_target = project.target_column_names(model)
    inputs = TemplateInputs(
        model_name=model.name,
        config=model.config,
        this=model.target_table,
        batch_id=batch_id,
        batch_view=model.batch_view,
        batch_columns=facts.columns if facts.columns is not None else columns,
        target_columns=(
            facts.target_columns if facts.target_columns is not None else declared_target
        ),
        batch_stats=BatchStats(
            facts.stats if facts.columns is not None else None,
            model.config.prune_by,
            model.config.partitioned_by,
        ),
        project_vars=project.vars,
        target_name=project.target.name,
        ref=project.ref,
    )
    return template_context(inputs)


def compile_expectations(
    project: Project, model: ModelSpec, batch_id: int
) -> ExpectationChecks | None:
    """The SQL that checks batch ``batch_id`` against the model's expectations (None when it
    declares none), over the stream's declared columns; at run time the Spark half builds the
    same statements over the batch's real columns."""
    if not model.config.expectations:
        return None
    ddl = project.stream_columns_ddl(project.stream_of(model))
    return expectation_checks(
        model.config.expectations,
        model_name=model.name,
        stream=model.config.stream or "",
        batch_view=model.batch_view,
        batch_id=batch_id,
        columns=column_names(ddl) if ddl else [],
        unique_keys=model.config.unique_keys,
    )


def maintenance_due(model: ModelSpec, batch_id: int) -> bool:
    """OPTIMIZE runs after every ``optimize_every``-th batch (batch ids count from 0)."""
    every = model.config.optimize_every
    return every is not None and every > 0 and (batch_id + 1) % every == 0


def compile_batch(
    project: Project, model: ModelSpec, batch_id: int, facts: BatchFacts | None = None
) -> list[CompiledStatement]:
    """The statements of one micro-batch, in order: the model's, then maintenance when due.
    ``facts`` is what the Spark half measured on the batch (see ``batch_context``)."""
    context = batch_context(project, model, batch_id, facts)
    rendered = project.templates.render(project.template_name(model), context)
    statements = []
    for index, stmt in enumerate(split_statements(rendered.text)):
        line_map = tuple(
            rendered.source_line(stmt.line + offset) for offset in range(stmt.sql.count("\n") + 1)
        )
        code_line = rendered.source_line(_code_line(stmt.sql, stmt.line))
        statements.append(
            CompiledStatement("batch", index, stmt.sql, model.file, code_line, line_map)
        )
    if maintenance_due(model, batch_id):
        statements.extend(compile_maintenance(project, model, batch_id))
    return statements


def compile_maintenance(
    project: Project, model: ModelSpec, batch_id: int
) -> list[CompiledStatement]:
    """The maintenance statements (OPTIMIZE) of ``model``, whether or not they are due for
    ``batch_id``; empty when the model sets no ``optimize_every``. See ``maintenance_due``."""
    if not model.config.optimize_every:
        return []
    context = batch_context(project, model, batch_id)
    sql = project.templates.render_macro(
        "optimize", context, model.target_table, zorder_by=model.config.zorder_by
    ).strip()
    return [CompiledStatement("maintenance", 0, sql, model.file, model.config_line)]


def _code_line(sql: str, line: int) -> int:
    """Line of the first non-comment line of a statement (leading comments skipped)."""
    for offset, text in enumerate(sql.split("\n")):
        stripped = text.strip()
        if stripped and not stripped.startswith("--"):
            return line + offset
    return line


def check_values_are_set(project: Project, models: list[ModelSpec]) -> None:
    """Reveal now, and discard, every value from env_var() that running ``models`` hands Spark:
    the Spark conf, each stream's options, each target's set-up and a batch's statements. So a
    variable that is not set stops ``run`` / ``stream`` before Spark starts (exit 2), naming it
    and its line, instead of after the JVM has started (runner/secrets.py)."""
    project.target.revealed_conf()
    for model in models:
        project.stream_of(model).reader_options()
        setup = compile_setup(project, model)
        for statement in (setup.create, *compile_batch(project, model, 0)):
            _ = statement.executable
