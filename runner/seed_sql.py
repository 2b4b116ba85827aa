"""The statements that register a seed's Delta table, rendered from the same (overridable)
macros as a model's target. Pure Python: runner/spark/testing/seeds.py runs them."""

from __future__ import annotations

from runner.model_sql import CompiledStatement
from runner.project import Project
from runner.specs.model import ModelConfig
from runner.specs.seeds import SeedSpec
from runner.specs.target import split_table_name
from runner.templating.batch_facts import BatchStats
from runner.templating.context import TemplateInputs, template_context


def seed_statements(project: Project, seed: SeedSpec) -> tuple[CompiledStatement, ...]:
    """``CREATE SCHEMA`` and the registration of the seed's Delta table under its name, from
    the same (overridable) macros as a model's target."""
    schema, _ = split_table_name(seed.table)
    location = project.target.table_location(seed.table)
    names = [c.name for c in seed.columns]
    inputs = TemplateInputs(
        model_name=seed.name,
        config=ModelConfig(target=seed.table),
        this=seed.table,
        batch_id=0,
        batch_view=f"{seed.name}__seed",
        batch_columns=names,
        target_columns=names,
        batch_stats=BatchStats(None, measured=None),
        project_vars=project.vars,
        target_name=project.target.name,
        ref=project.ref,
    )
    context = template_context(inputs)
    render = project.templates.render_macro
    return (
        CompiledStatement(
            "setup", 0, render("create_schema", context, schema).strip(), seed.file, seed.line
        ),
        CompiledStatement(
            "setup",
            1,
            render("attach_target", context, seed.table, location=str(location)).strip(),
            seed.file,
            seed.line,
        ),
    )
