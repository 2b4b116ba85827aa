"""Singular data tests, dbt's convention: each ``.sql`` file directly in the project's
``tests/`` folder is one query whose rows are failures.

```sql
-- tests/assert_no_negative_totals.sql
SELECT customer_id, total_amount
FROM {{ ref('customer_totals') }}
WHERE total_amount < 0
```

The file is a Jinja template with the names a model has outside a batch: ``ref('model')``
(its target table) and ``ref('seed')`` (the seed's table), ``target.name``, ``var()`` and
``env_var()``. A table written by name (``gold.customer_totals``) that is a model's target or
a seed's table counts as a ``ref`` of it. The models a test reads are the models it tests:
``--select customer_totals`` picks it, and ``runner build`` runs it once they have run.

Only the top level of ``tests/`` is read, so a project can keep other files there (this
repository's own pytest suite lives in ``tests/``: its ``.py`` files are never read). Pure
Python.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError

from runner.config import ModelConfig
from runner.errors import ConfigError, TemplateRaise
from runner.project import Project
from runner.templating.batch_facts import BatchStats
from runner.templating.context import Relation, batch_mode_context
from runner.testing.layout import project_folder
from runner.testing.seeds import SeedSpec


@dataclass(frozen=True)
class SingularTestSpec:
    """One ``tests/<name>.sql``: its rendered query and the models and seeds it reads."""

    name: str
    file: Path
    sql: str  # rendered, without a trailing semicolon
    models: tuple[str, ...]  # the models it reads (by ref() or by target name), sorted
    seeds: tuple[str, ...] = ()
    line: int = 1
    kind: str = "singular"

    @property
    def model(self) -> str:
        """The models it tests, as one label (``a, b``; empty when it reads none)."""
        return ", ".join(self.models)


def load_singular_tests(project: Project, seeds: dict[str, SeedSpec]) -> list[SingularTestSpec]:
    """Every ``tests/*.sql`` of the project, by file name."""
    folder = project_folder(project, "tests")
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

    context = batch_mode_context(
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


def named_tables(sql: str) -> set[str]:
    """The lower-cased ``schema.table`` names a query reads (empty when sqlglot cannot parse
    it: Spark reports the error when the test runs)."""
    try:
        tree = sqlglot.parse_one(sql, read="spark")
    except SqlglotError:
        return set()
    return {
        ".".join(p for p in (table.db, table.name) if p).lower()
        for table in tree.find_all(exp.Table)
    }
