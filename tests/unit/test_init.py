"""`runner init`: the project it writes loads, lints clean and compiles, without a JVM; and
project.yml's defaults."""

from pathlib import Path

import pytest
from typer.testing import CliRunner

from runner.artifacts import write_compiled
from runner.cli.app import app
from runner.errors import ConfigError
from runner.lint import lint_project
from runner.project import load
from runner.suite_selection import load_suite

runner = CliRunner()


def test_init_writes_a_project_that_loads_lints_clean_and_compiles(tmp_path: Path) -> None:
    result = runner.invoke(app, ["init", str(tmp_path / "My Shop")])
    assert result.exit_code == 0, result.output
    assert "next:" in result.stdout and "runner run -s items" in result.stdout
    root = tmp_path / "My Shop"
    for rel in (".gitignore", ".github/workflows/runner.yml", "data/events/events-0001.json"):
        assert (root / rel).is_file(), rel
    project = load(root)
    assert project.name == "my_shop" and project.target.name == "local"
    assert list(project.models) == ["items"]
    lint = lint_project(root)
    assert lint.exit_code(strict=True) == 0, [v.message for v in lint.violations]
    written = write_compiled(project)
    assert "MERGE INTO silver.items" in (root / "target/compiled/items.sql").read_text()
    assert len(written) == 2
    suite = load_suite(project)
    assert [t.name for t in suite.unit_tests] == ["items_keeps_the_newest_version"]
    assert {t.kind for t in suite.data_tests} == {"unique", "not_null"}
    assert [(t.name, t.models) for t in suite.singular_tests] == [
        ("assert_no_negative_prices", ("items",))
    ]
    ci = (root / ".github/workflows/runner.yml").read_text()
    assert all(step in ci for step in ("runner lint", "runner compile", "runner test"))


def test_init_never_overwrites(tmp_path: Path) -> None:
    (tmp_path / "project.yml").write_text("name: mine\n")
    result = runner.invoke(app, ["init", str(tmp_path)])
    assert result.exit_code == 2
    assert "already has project.yml" in result.stderr
    assert (tmp_path / "project.yml").read_text() == "name: mine\n"


def test_init_name_option(tmp_path: Path) -> None:
    assert runner.invoke(app, ["init", str(tmp_path / "p"), "--name", "shop"]).exit_code == 0
    assert load(tmp_path / "p").name == "shop"


# -- project.yml's required keys and defaults -----------------------------------------------


def test_name_alone_is_a_project_with_a_local_target(tmp_path: Path) -> None:
    (tmp_path / "project.yml").write_text("name: x\n")
    project = load(tmp_path)
    assert project.target.name == "local" and project.target.master == "local[*]"
    assert project.target.warehouse == tmp_path.resolve() / "target/local/warehouse"
    assert project.target.checkpoint_root == tmp_path.resolve() / "target/local/checkpoints"


def test_the_only_target_is_the_default(tmp_path: Path) -> None:
    (tmp_path / "project.yml").write_text("name: x\ntargets:\n  dev: {master: 'local[2]'}\n")
    assert load(tmp_path).target.name == "dev"


def test_several_targets_and_no_default_is_an_error_saying_what_to_set(tmp_path: Path) -> None:
    (tmp_path / "project.yml").write_text("name: x\ntargets:\n  dev: {}\n  prod: {}\n")
    with pytest.raises(ConfigError, match="declares targets dev, prod and no default_target"):
        load(tmp_path)
    assert load(tmp_path, "prod").target.name == "prod"
    with pytest.raises(ConfigError, match="no target named 'qa'"):
        load(tmp_path, "qa")


def test_name_is_required(tmp_path: Path) -> None:
    (tmp_path / "project.yml").write_text("targets: {}\n")
    with pytest.raises(ConfigError, match="must set 'name'"):
        load(tmp_path)
