"""A target's ``catalog:`` in project.yml: a Hive metastore on PostgreSQL becomes the Spark
settings of Spark's Hive client (the password read only when a session needs it); mistakes
name project.yml and the line. No JVM."""

from __future__ import annotations

from pathlib import Path

import pytest

from runner.errors import ConfigError
from runner.project import load
from tests.unit.test_targets import with_targets

HIVE = (
    "  shared:\n    master: local[2]\n    catalog:\n      type: hive\n"
    "      url: jdbc:postgresql://127.0.0.1:5432/metastore\n      user: runner\n"
    "      password: \"{{ env_var('METASTORE_PASSWORD') }}\"\n"
)


def test_a_hive_catalog_becomes_the_hive_client_settings(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("METASTORE_PASSWORD", "s3cret-value")
    target = load(with_targets(tmp_path, HIVE), "shared").target
    assert target.catalog is not None
    assert "s3cret-value" not in repr(target)
    conf = target.revealed_conf()
    assert conf["spark.sql.catalogImplementation"] == "hive"
    assert conf["spark.hadoop.javax.jdo.option.ConnectionURL"] == (
        "jdbc:postgresql://127.0.0.1:5432/metastore"
    )
    assert conf["spark.hadoop.javax.jdo.option.ConnectionDriverName"] == "org.postgresql.Driver"
    assert conf["spark.hadoop.javax.jdo.option.ConnectionPassword"] == "s3cret-value"
    assert load(tmp_path, "local").target.catalog is None  # the default: in-memory


def test_an_unset_password_names_its_line(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.delenv("METASTORE_PASSWORD", raising=False)
    root = with_targets(tmp_path, HIVE)
    with pytest.raises(ConfigError, match="METASTORE_PASSWORD") as caught:
        load(root, "shared").target.revealed_conf()
    assert caught.value.file == root / "project.yml"
    line = (root / "project.yml").read_text().splitlines()[(caught.value.line or 0) - 1]
    assert line.strip().startswith("password:")


@pytest.mark.parametrize(
    ("catalog", "message", "line_starts"),
    [
        ("      type: glue\n", "type must be one of in-memory, hive", "type:"),
        ("      type: hive\n      uri: thrift://h:9083\n", "unknown key 'uri'", "uri:"),
        ("      type: hive\n      url: jdbc:mysql://h/m\n      user: u\n      password: p\n",
         "url must start with jdbc:postgresql://", "url:"),
        ("      type: hive\n      url: jdbc:postgresql://h/m\n",
         "needs user, password", "catalog:"),
        ("      type: in-memory\n      user: u\n", "in-memory takes no other key", "catalog:"),
    ],
)  # fmt: skip
def test_catalog_mistakes_name_file_and_line(
    tmp_path: Path, catalog: str, message: str, line_starts: str
) -> None:
    root = with_targets(tmp_path, f"  bad:\n    master: local[2]\n    catalog:\n{catalog}")
    with pytest.raises(ConfigError, match=message) as caught:
        load(root, "bad")
    assert caught.value.file == root / "project.yml"
    line = (root / "project.yml").read_text().splitlines()[(caught.value.line or 0) - 1]
    assert line.strip().startswith(line_starts)


def test_a_connect_target_cannot_set_a_catalog(tmp_path: Path) -> None:
    root = with_targets(
        tmp_path, "  bad:\n    remote: sc://127.0.0.1:15002\n    catalog:\n      type: hive\n"
    )
    with pytest.raises(ConfigError, match="the Connect server's"):
        load(root, "bad")
