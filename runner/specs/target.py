"""The target a project runs on (project.yml's ``targets:``): Spark master or Spark Connect
``remote``, storage roots, Spark conf; and how a table name maps to its storage path.

Loaded by ``runner.project_settings``; every validation error names the file and line it comes from.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from runner.secrets import reveal_all
from runner.specs.catalog import CatalogSpec
from runner.storage import Location
from runner.target_address import Address, TargetKind, parse_master, parse_remote

# project.yml's connect_retry_seconds when a remote: target does not set it
DEFAULT_CONNECT_RETRY_SECONDS = 60.0


@dataclass(frozen=True)
class TargetSpec:
    """Where and how the project runs: Spark master (or a Spark Connect ``remote``), storage
    roots, Spark conf. ``project.load`` validates master / remote."""

    name: str
    master: str
    warehouse: Location  # a local path, or a URI on object storage (runner/storage.py)
    checkpoint_root: Location
    # values from env_var() are marked text (runner/secrets.py): revealed only by the session
    spark_conf: dict[str, str] = field(repr=False)
    remote: str | None = None  # sc://HOST:PORT: a Spark Connect server; master is then unused
    conf_file: Path | None = None  # project.yml, and the line of each spark_conf key: for
    conf_lines: dict[str, int] = field(default_factory=dict, repr=False)  # errors about them
    catalog: CatalogSpec | None = None  # a shared Hive metastore; None: Spark's in-memory one
    # over Spark Connect: how long the client retries a server that does not answer
    # (runner/spark/session/connect_watch.py)
    connect_retry_seconds: float = DEFAULT_CONNECT_RETRY_SECONDS

    @property
    def kind(self) -> TargetKind:
        return "connect" if self.remote else parse_master(self.master)[0]

    @property
    def address(self) -> Address | None:
        """The cluster endpoint to reach; None for local[*] (Spark runs in this process)."""
        if self.remote:
            return parse_remote(self.remote)
        return parse_master(self.master)[1]

    @property
    def shown(self) -> str:
        """What progress lines print: the master URL or the Connect address."""
        return self.remote or self.master

    def table_location(self, table: str) -> Location:
        """Storage path of a target table ``schema.table`` under the warehouse."""
        schema, name = split_table_name(table)
        return self.warehouse / schema / name

    def checkpoint_for(self, model_name: str) -> Location:
        return self.checkpoint_root / model_name

    def revealed_conf(self) -> dict[str, str]:
        """The catalog's settings, then ``spark_conf`` (which wins), as the session receives
        them: values from env_var() read now, so a command that starts no session never needs
        them (runner/secrets.py)."""
        catalog = self.catalog.spark_settings() if self.catalog is not None else {}
        return catalog | reveal_all(
            self.spark_conf, used_in="spark_conf", file=self.conf_file, lines=self.conf_lines
        )


def split_table_name(table: str) -> tuple[str, str]:
    """``'silver.orders'`` -> ``('silver', 'orders')``; a bare name lives in ``default``."""
    parts = table.split(".")
    if len(parts) == 1:
        return "default", parts[0]
    if len(parts) == 2 and all(parts):
        return parts[0], parts[1]
    raise ValueError(f"table name must be 'schema.table' or 'table', got {table!r}")
