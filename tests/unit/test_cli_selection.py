"""Selection through the commands, without a JVM: errors before Spark, --exclude, --state."""

import shutil
from pathlib import Path

from typer.testing import CliRunner

from runner.cli.app import app

runner = CliRunner()


def test_old_comma_union_stops_run_before_spark_with_the_space_hint(example_project) -> None:
    result = runner.invoke(
        app, ["run", "-s", "orders_merge,customer_totals", "-p", str(example_project)]
    )
    assert result.exit_code == 2
    assert "a comma now intersects (dbt)" in result.stderr
    assert "-s 'orders_merge customer_totals'" in result.stderr


def test_compile_exclude_writes_only_what_is_left(example_project: Path) -> None:
    result = runner.invoke(
        app,
        [
            "compile",
            "-s",
            "orders_merge+",
            "--exclude",
            "customer_totals",
            "-p",
            str(example_project),
        ],
    )
    assert result.exit_code == 0, result.output
    compiled = example_project / "target" / "compiled"
    assert sorted(p.name for p in compiled.glob("*.sql")) == ["orders_merge.sql"]


def test_run_state_modified_with_nothing_modified_runs_nothing(example_project, tmp_path) -> None:
    assert runner.invoke(app, ["compile", "-p", str(example_project)]).exit_code == 0
    state = tmp_path / "state"
    shutil.copytree(example_project / "target" / "compiled", state)
    args = ["-s", "state:modified+", "--state", str(state), "-p", str(example_project)]
    result = runner.invoke(app, ["run", *args])
    assert result.exit_code == 0, result.output
    assert "nothing to run" in result.stdout
    # a change to orders_merge selects it and what reads it
    model = example_project / "models" / "orders_merge.sql"
    model.write_text(model.read_text().replace("optimize_every=2", "optimize_every=3"))
    listed = runner.invoke(app, ["test", "--show-sql", "-s", "test_type:data", *args])
    assert listed.exit_code == 0, listed.output
    assert "on orders_merge" in listed.stdout and "on customer_totals" in listed.stdout


def test_test_exclude_leaves_out_the_tests_it_selects(example_project) -> None:
    args = ["test", "--show-sql", "-p", str(example_project)]
    every = runner.invoke(app, args)
    fewer = runner.invoke(app, [*args, "--exclude", "customer_totals"])
    assert every.exit_code == fewer.exit_code == 0
    assert "on customer_totals" in every.stdout
    assert "on customer_totals" not in fewer.stdout and "on orders_merge" in fewer.stdout
