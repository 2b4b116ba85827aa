"""Where a model unit test writes: a scratch copy of the project whose target is a table of its
own, so the user's tables and their names in the catalog are never touched.

A catalog can be shared (a Hive metastore, a local server's session catalog, a Connect server):
another job may read or write ``silver.orders`` by name while ``runner test`` runs. So a unit
test never borrows the target's name. It renders the model with ``{{ this }}`` naming a scratch
table in a schema of its own (``runner_unit_<token>_silver.orders``), under a scratch warehouse
and checkpoint root, with no shared catalog: the event log and the target stay found by path.
A model that names its own target directly, instead of through ``{{ this }}``, would write the
real table from a unit test; it is refused before anything runs (``names_target_directly``).
"""

from __future__ import annotations

import dataclasses
import re
import uuid

from runner.errors import ConfigError
from runner.model_sql import CompiledStatement
from runner.project import Project
from runner.specs.model import ModelSpec
from runner.specs.target import split_table_name
from runner.storage import Location
from runner.templating.splitter import strip_comments

SCHEMA_PREFIX = "runner_unit_"


@dataclasses.dataclass(frozen=True)
class Scratch:
    """A unit test's own project, model and table; ``root`` holds its warehouse and
    checkpoints (removed afterwards), ``schema`` its catalog schema (dropped afterwards)."""

    project: Project
    model: ModelSpec
    root: Location
    schema: str

    @property
    def table(self) -> str:
        return self.model.target_table


def scratch_for(project: Project, model: ModelSpec, root: Location) -> Scratch:
    """The scratch copy of ``project`` for a unit test of ``model``, its files under ``root``."""
    schema, name = split_table_name(model.target_table)
    scratch_schema = f"{SCHEMA_PREFIX}{uuid.uuid4().hex[:12]}_{schema}"
    config = dataclasses.replace(model.config, target=f"{scratch_schema}.{name}")
    scratch_model = dataclasses.replace(model, config=config)
    target = dataclasses.replace(
        project.target,
        warehouse=root / "warehouse",
        checkpoint_root=root / "checkpoints",
        catalog=None,  # nothing of a test is registered where other jobs look
    )
    scratch_project = dataclasses.replace(
        project, target=target, models={**project.models, model.name: scratch_model}
    )
    return Scratch(scratch_project, scratch_model, root, scratch_schema)


def names_target_directly(
    statements: list[CompiledStatement], model: ModelSpec, real_table: str
) -> None:
    """ConfigError when a statement rendered for a scratch target still names the real one
    (``real_table``): written out instead of ``{{ this }}``, a unit test would write it."""
    schema, name = split_table_name(real_table)
    part = r"`?{}`?"
    # not inside a longer name, nor a string literal of exactly the name
    pattern = re.compile(
        rf"(?<![\w.`'\"]){part.format(re.escape(schema))}\.{part.format(re.escape(name))}"
        rf"(?![\w`'\"])",
        re.IGNORECASE,
    )
    for statement in statements:
        code = strip_comments(statement.sql)
        for offset, text in enumerate(code.splitlines(), start=1):
            if pattern.search(text):
                raise ConfigError(
                    f"names its target {real_table} directly; a unit test would write the "
                    "real table, so it does not run",
                    file=model.file,
                    line=statement.source_line_at(offset),
                    hint=f"write {{{{ this }}}} where the model means its target ({real_table})",
                )
