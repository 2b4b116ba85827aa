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
Python; ``runner/singular_sql.py`` renders and loads them.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError


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
