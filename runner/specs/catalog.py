"""Where a target's tables are registered by name (project.yml's ``targets.<t>.catalog``): the
session's own in-memory catalog (the default), or a Hive metastore in a database every job and
SQL client shares.

``catalog: {type: hive, url: jdbc:postgresql://..., user: ..., password: ...}`` becomes the
Spark settings of Spark's built-in Hive client (``spark_settings``): the metastore's tables are
created in that database on first use. ``user`` and ``password`` may read
``{{ env_var('NAME') }}``; ``url`` is plain text.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from runner.secrets import reveal_all

CATALOG_TYPES = ("in-memory", "hive")
# The keys of ``catalog:`` (runner/yaml_loader.py checks them).
CATALOG_KEYS = ("type", "url", "user", "password")
# The metastore databases whose JDBC driver the runner fetches (runner/spark/session/jars.py).
JDBC_DRIVERS = {"jdbc:postgresql://": "org.postgresql.Driver"}


@dataclass(frozen=True)
class CatalogSpec:
    """A shared Hive metastore on a JDBC database. ``user`` and ``password`` may hold values
    from env_var(), marked (runner/secrets.py): revealed only by the session."""

    url: str
    user: str = field(repr=False)
    password: str = field(repr=False)
    file: Path | None = None
    lines: dict[str, int] = field(default_factory=dict, repr=False)

    @property
    def driver(self) -> str:
        return next(d for prefix, d in JDBC_DRIVERS.items() if self.url.startswith(prefix))

    def spark_settings(self) -> dict[str, str]:
        """The Spark settings of this catalog, values from env_var() read now."""
        values = reveal_all(
            {"user": self.user, "password": self.password},
            used_in="catalog",
            file=self.file,
            lines=self.lines,
        )
        return {
            "spark.sql.catalogImplementation": "hive",
            "spark.hadoop.javax.jdo.option.ConnectionURL": self.url,
            "spark.hadoop.javax.jdo.option.ConnectionDriverName": self.driver,
            "spark.hadoop.javax.jdo.option.ConnectionUserName": values["user"],
            "spark.hadoop.javax.jdo.option.ConnectionPassword": values["password"],
            # A new, empty database: the Hive client creates the metastore's tables itself
            # (DataNucleus) instead of expecting Hive's schematool to have run.
            "spark.hadoop.hive.metastore.schema.verification": "false",
            "spark.hadoop.datanucleus.schema.autoCreateTables": "true",
            "spark.hadoop.datanucleus.schema.autoCreateColumns": "true",
            # It creates each table on first use, inside the transaction that needs it: a
            # foreign key to a table that transaction holds waits for it forever (PostgreSQL).
            # (autoCreateAll would turn constraints back on.)
            "spark.hadoop.datanucleus.schema.autoCreateConstraints": "false",
        }
