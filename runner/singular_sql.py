"""Loading the singular data tests of ``tests/*.sql`` (runner/specs/singular.py): each file
rendered as a template with the names a model has outside a batch, and the models and seeds it
reads found. Pure Python."""

from __future__ import annotations

from pathlib import Path

from runner.errors import ConfigError, TemplateRaise
from runner.project import Project
from runner.specs.layout import project_folder
from runner.specs.model import ModelConfig
from runner.specs.seeds import SeedSpec
from runner.specs.singular import SingularTestSpec, named_tables
from runner.templating.batch_facts import BatchStats
from runner.templating.context import Relation, TemplateInputs, template_context


def load_singular_tests(project: Project, seeds: dict[str, SeedSpec]) -> list[SingularTestSpec]:
    """Every ``tests/*.sql`` of the project, by file name."""
    folder = project_folder(project.root, "tests")
    files = sorted(folder.glob("*.sql")) if folder.is_dir() else []
    return [_load(project, seeds, file) for file in files]


def _load(project: Project, seeds: dict[str, SeedSpec], file: Path) -> SingularTestSpec:
    name = file.stem
    if name in project.models:
        raise ConfigError(
            f"singular test '{name}' has the name of a model: --select {name} could not tell "
            "them apart",
            file=file,
            line=1,
            hint=f"rename it, for example to tests/assert_{name}.sql",
        )
    models: set[str] = set()
    used_seeds: set[str] = set()

    def ref(target: str) -> Relation:
        if target in project.models:
            models.add(target)
            return Relation(project.models[target].target_table)
        if target in seeds:
            used_seeds.add(target)
            return Relation(seeds[target].table)
        known = ", ".join(sorted({*project.models, *seeds})) or "(none)"
        raise TemplateRaise(f"ref('{target}'): no model or seed of that name (known: {known})")

    inputs = TemplateInputs(
        model_name=name,
        config=ModelConfig(),
        this=name,
        batch_id=0,
        batch_view="",
        batch_columns=[],
        target_columns=[],
        batch_stats=BatchStats(None, measured=None),
        project_vars=project.vars,
        target_name=project.target.name,
        ref=ref,
    )
    context = template_context(inputs)
    source = file.read_text(encoding="utf-8")
    template = project.templates.add_model(f"test:{name}", file, source)
    sql = project.templates.render(template, context).text.strip().rstrip(";").strip()
    if not sql:
        raise ConfigError(
            "singular test is empty: it must be one query whose rows are failures",
            file=file,
            line=1,
            hint="for example: SELECT * FROM {{ ref('my_model') }} WHERE amount < 0",
        )
    tables = named_tables(sql)
    models |= {m.name for m in project.models.values() if m.target_table.lower() in tables}
    used_seeds |= {s.name for s in seeds.values() if s.table.lower() in tables}
    return SingularTestSpec(name, file, sql, tuple(sorted(models)), tuple(sorted(used_seeds)))
