"""The CLI without a JVM: help texts, and errors that stop before Spark starts."""

import subprocess
import sys

import pytest
from typer.testing import CliRunner

from runner.cli.app import app

runner = CliRunner()


def command_names() -> list[str]:
    import typer.main

    group = typer.main.get_command(app)
    return sorted(group.commands)  # type: ignore[attr-defined]


@pytest.mark.parametrize("command", command_names())
def test_every_option_has_help_with_an_example(command: str) -> None:
    import typer.main

    click_command = typer.main.get_command(app).commands[command]  # type: ignore[attr-defined]
    subcommands = getattr(click_command, "commands", {})  # a group such as `runner docs`
    for name, cmd in [(command, click_command), *subcommands.items()]:
        assert "Example" in (cmd.help or ""), f"{name}: its help needs an example"
        for param in cmd.params:
            if param.name in ("help", "debug"):
                continue
            assert "Example" in (getattr(param, "help", "") or ""), f"{name} --{param.name}"


def test_jinja_error_is_reported_with_file_and_line_before_spark(project_factory) -> None:
    root = project_factory(
        {"bad": "{{ config(stream='orders', target='s.t') }}\nSELECT {{ oops }};\n"}
    )
    result = runner.invoke(app, ["run", "--model", "bad", "--project-dir", str(root)])
    assert result.exit_code == 2  # found before Spark runs
    assert f"{root / 'models' / 'bad.sql'}:2: undefined name in template" in result.stderr
    assert "Traceback" not in result.stderr


def test_a_bad_model_stops_the_command_before_pyspark_is_imported(project_factory) -> None:
    root = project_factory({"bad": "{{ config(stream='orders', target='s.t') }}\n{% if %}\n"})
    code = (
        "import sys\n"
        "from runner.cli.app import app\n"
        "try:\n"
        f"    app(['run', '--model', 'bad', '--project-dir', {str(root)!r}])\n"
        "except SystemExit as exit:\n"
        "    assert exit.code == 2, exit.code\n"
        "assert 'pyspark' not in sys.modules, 'pyspark was imported'\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "bad.sql:2: Jinja syntax error" in done.stderr


def test_the_cli_imports_only_what_the_command_run_needs(example_project) -> None:
    """Loading the CLI imports no SQL parser, template engine, YAML reader or terminal library;
    `runner lint` then imports what linting needs, and neither pyspark nor rich."""
    code = (
        "import sys\n"
        "from runner.cli.app import app\n"
        "def loaded():\n"
        "    return sorted({m.split('.')[0] for m in sys.modules} & {*heavy, *needed})\n"
        "heavy = ('pyspark', 'py4j', 'delta', 'rich', 'http')\n"
        "needed = ('sqlglot', 'jinja2', 'yaml')\n"
        "print(loaded())\n"
        "try:\n"
        f"    app(['lint', '-p', {str(example_project)!r}])\n"
        "except SystemExit as exit:\n"
        "    assert exit.code == 0, exit.code\n"
        "print(loaded())\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[0] == "[]"
    assert done.stdout.splitlines()[-1] == "['jinja2', 'sqlglot', 'yaml']"


def test_the_spark_half_leaves_the_connect_client_unloaded_until_a_connect_session() -> None:
    """`runner run` on a classic session imports the streaming pipeline and the batch path, not
    pyspark's Spark Connect client, which brings pandas and gRPC (~0.4 s of every start)."""
    code = (
        "import sys\n"
        "import runner.spark.streaming.pipeline, runner.spark.batch.run\n"
        "import runner.spark.session.isolated, runner.spark.delta.targets\n"
        "print(sorted({m.split('.')[0] for m in sys.modules} & {'pandas', 'grpc'}))\n"
        "print('pyspark.sql.connect.session' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["[]", "False"]


def test_unknown_model_exits_2_and_lists_models(example_project) -> None:
    result = runner.invoke(app, ["run", "-m", "nope", "-p", str(example_project)])
    assert result.exit_code == 2
    assert "no model named 'nope'" in result.stderr
    assert "orders_merge" in result.stderr


def test_error_messages_keep_their_brackets(capsys) -> None:
    """Messages quote SQL: rich markup must not eat ``[idx]`` or ``[bold]`` out of them."""
    import typer

    from runner.cli.errors import reported_errors
    from runner.errors import ModelSqlError

    sql = "SELECT s.items[idx], '[bold]' FROM batch"
    with pytest.raises(typer.Exit) as exit_info, reported_errors():
        raise ModelSqlError(f"Spark rejected batch[0]: {sql}", file=None, line=None)
    assert exit_info.value.exit_code == 1
    assert sql in capsys.readouterr().err


def test_a_failing_statement_prints_intact_through_the_cli(project_factory, monkeypatch) -> None:
    """The error `runner stream` prints when Spark rejects a statement, through the CLI's one
    error handler: rich markup would drop ``[idx]`` and ``[bold]``, an emoji code would turn
    ``:cd:`` into a disc."""
    from pathlib import Path

    from runner import artifacts  # runner compile imports write_compiled from it as it runs
    from runner.model_sql import CompiledStatement
    from runner.spark.delta.statements import statement_error

    sql = "SELECT s.items[idx], '[bold]x[/]', 'a:cd:b'\nFROM batch s  -- from C:\\tmp\\"
    statement = CompiledStatement("batch", 0, sql, Path("models/m.sql"), 3, (3, 4))
    spark_says = (
        "\n[UNRESOLVED_COLUMN.WITH_SUGGESTION] A column, variable, or function parameter with "
        "name `idx` cannot be resolved. Did you mean one of the following? [`s`.`items`]. "
        "SQLSTATE: 42703; line 1 pos 15;\n'Project ['s.items['idx]]\n"
    )
    error = statement_error(statement, RuntimeError(spark_says))

    def fail(*args: object, **kwargs: object) -> list[Path]:
        raise error

    monkeypatch.setattr(artifacts, "write_compiled", fail)
    result = runner.invoke(app, ["compile", "--project-dir", str(project_factory({}))])
    assert result.exit_code == 1
    lines = result.stderr.splitlines()
    assert lines[0] == (
        "error: models/m.sql:3: Spark rejected batch[0] (SELECT): [UNRESOLVED_COLUMN.WITH_"
        "SUGGESTION] A column, variable, or function parameter with name `idx` cannot be "
        "resolved. Did you mean one of the following? [`s`.`items`]. SQLSTATE: 42703"
    )
    assert lines[1:4] == ["failing statement:", *(f"    {line}" for line in sql.splitlines())]


@pytest.mark.parametrize(
    ("command", "choices"),
    [(["lint"], "text, json, github, sarif"), (["history", "--model", "m"], "table, json")],
)
def test_an_unknown_format_is_a_usage_error(command: list[str], choices: str) -> None:
    result = runner.invoke(app, [*command, "--format", "jsno"])
    assert result.exit_code == 2
    assert f"error: --format must be one of {choices}, got 'jsno'" in result.stderr
