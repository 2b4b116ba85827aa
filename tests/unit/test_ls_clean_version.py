"""`runner ls`, `runner clean` and `runner --version`: pure, no JVM."""

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from runner.clean import clean_plan
from runner.cli.app import app
from runner.errors import ConfigError

runner = CliRunner()


def ls(project: Path, *args: str) -> list[str]:
    result = runner.invoke(app, ["ls", "-p", str(project), *args])
    assert result.exit_code == 0, result.output
    return result.stdout.splitlines()


def test_ls_lists_models_upstream_first_then_seeds_then_tests(example_project) -> None:
    listed = ls(example_project)
    assert listed[:4] == ["orders_merge", "orders_kafka_merge", "customer_totals", "customers"]
    assert "unique_orders_merge_order_id" in listed[4:]


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["-s", "orders_merge+", "--resource-type", "model"], ["orders_merge", "customer_totals"]),
        (["-s", "customers"], ["customers"]),
        (["-s", "customer_totals,test_type:unit"], ["customer_totals_follow_order_changes"]),
        (["--resource-type", "seed", "--resource-type", "model", "-s", "customers orders_merge"],
         ["orders_merge", "customers"]),
        (["-s", "orders_merge", "--exclude", "test_type:data", "--resource-type", "test"],
         ["orders_merge_collapses_duplicates_in_a_batch", "orders_merge_deletes_an_order",
          "orders_merge_ignores_a_late_older_update"]),
        (["-s", "orders_merge+", "--resource-type", "model", "-o", "path"],
         ["models/orders_merge.sql", "models/customer_totals.sql"]),
    ],
)  # fmt: skip
def test_ls_selects_as_the_other_commands_do(example_project, args, expected) -> None:
    assert ls(example_project, *args) == expected


def test_ls_json_has_kind_path_and_details(example_project) -> None:
    rows = [json.loads(line) for line in ls(example_project, "-s", "customer_totals", "-o", "json")]
    model = rows[0]
    assert model["resource_type"] == "model" and model["path"] == "models/customer_totals.sql"
    assert model["depends_on"] == ["orders_merge"] and model["target"] == "gold.customer_totals"
    assert {r["resource_type"] for r in rows[1:]} == {"test"}
    assert all(r["model"] == "customer_totals" for r in rows[1:])


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--output", "yaml"], "--output yaml: not an output format"),
        (["--resource-type", "source"], "--resource-type source: not a resource type"),
        (["-s", "nope"], "no model named 'nope'"),
        (["-s", "orders_merge,customer_totals"], "a comma now intersects"),
    ],
)
def test_ls_usage_errors_exit_2(example_project, args, message) -> None:
    result = runner.invoke(app, ["ls", "-p", str(example_project), *args])
    assert result.exit_code == 2 and message in result.stderr


def test_version_needs_no_command() -> None:
    result = runner.invoke(app, ["--version"])
    assert result.exit_code == 0
    assert result.stdout.startswith("delta-stream-runner ")
    assert "pyspark 4." in result.stdout


# -- clean ----------------------------------------------------------------------------------


def _generated(root: Path) -> None:
    for sub in (
        "target/compiled",
        "target/docs",
        "target/local/warehouse/s/t",
        "target/local/checkpoints/m",
    ):
        (root / sub).mkdir(parents=True, exist_ok=True)
        (root / sub / "f").write_text("x")


def test_clean_removes_compiled_and_docs_and_keeps_data(example_project) -> None:
    _generated(example_project)
    result = runner.invoke(app, ["clean", "-p", str(example_project)])
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines() == ["removed target/compiled", "removed target/docs"]
    assert not (example_project / "target" / "compiled").exists()
    assert (example_project / "target/local/warehouse/s/t/f").exists()
    assert (example_project / "target/local/checkpoints/m/f").exists()
    again = runner.invoke(app, ["clean", "-p", str(example_project)])
    assert again.stdout.strip() == "nothing to remove."


def test_clean_targets_that_hold_data_are_kept_unless_asked(example_project) -> None:
    _generated(example_project)
    project_yml = example_project / "project.yml"
    project_yml.write_text(project_yml.read_text() + "clean-targets: [target, ../elsewhere]\n")
    dry = runner.invoke(app, ["clean", "--dry-run", "-p", str(example_project)])
    assert dry.exit_code == 0
    assert "kept target: holds data (target/local/warehouse)" in dry.stderr
    assert "kept ../elsewhere" in dry.stderr or "not inside the project directory" in dry.stderr
    assert (example_project / "target" / "compiled").exists()
    plan = clean_plan(example_project, include_data=True)
    assert [p.name for p in plan.remove] == ["target"]
    done = runner.invoke(app, ["clean", "--include-data", "-p", str(example_project)])
    assert done.exit_code == 0 and not (example_project / "target").exists()


def test_clean_targets_must_be_a_list_of_paths(example_project) -> None:
    project_yml = example_project / "project.yml"
    project_yml.write_text(project_yml.read_text() + "clean-targets: {a: 1}\n")
    with pytest.raises(ConfigError, match="clean-targets must be a list"):
        clean_plan(example_project)
