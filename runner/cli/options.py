"""Options shared by every command, declared once."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from runner.cli.errors import EXIT_CONFIG
from runner.errors import ConfigError

ProjectDir = Annotated[
    Path,
    typer.Option(
        "--project-dir",
        "-p",
        help="Directory holding project.yml. Example: --project-dir ./analytics",
        show_default=True,
    ),
]
Target = Annotated[
    str | None,
    typer.Option(
        "--target",
        "-t",
        help="Target from project.yml's targets (default: its default_target). Example: -t local",
    ),
]
Vars = Annotated[
    str | None,
    typer.Option(
        "--vars",
        help="Values for var() as YAML or JSON, over project.yml's vars. "
        "Example: --vars '{delete_op: X}'",
    ),
]
ModelName = Annotated[
    str,
    typer.Option(
        "--model",
        "-m",
        help="Model to run: a file name in models/ without .sql. Example: --model orders_merge",
    ),
]
NoServer = Annotated[
    bool,
    typer.Option(
        "--no-server",
        help="Start Spark in this process even when the local server runs (`runner server "
        "start`); RUNNER_NO_SERVER=1 does the same. Example: --no-server",
    ),
]
Debug = Annotated[
    bool,
    typer.Option("--debug", help="Show the full Python traceback when a command fails."),
]
Select = Annotated[
    list[str] | None,
    typer.Option(
        "--select",
        "-s",
        help="Models by dbt's selector syntax: NAME, tag:X, path:models/x.sql, config.KEY:VALUE, "
        "state:modified (with --state); +NAME / NAME+ (upstream / downstream), 2+NAME, NAME+1, "
        "@NAME. Spaces (or repeating -s) union, commas intersect (docs/selection.md). "
        "Example: --select 'orders_merge+ tag:gold'",
    ),
]
Exclude = Annotated[
    list[str] | None,
    typer.Option(
        "--exclude",
        help="Leave out what these selectors pick (the --select syntax). "
        "Example: --select orders_merge+ --exclude customer_totals",
    ),
]
State = Annotated[
    Path | None,
    typer.Option(
        "--state",
        help="For state:modified and state:new, a directory with the manifest.json of an earlier "
        "`runner compile` (e.g. main's target/compiled). "
        "Example: --select state:modified+ --state ../main/target/compiled",
    ),
]
JunitXml = Annotated[
    Path | None,
    typer.Option(
        "--junit-xml",
        help="Also write the results as JUnit XML, one testcase per model, seed or test. "
        "Example: --junit-xml target/junit.xml",
    ),
]


TEXT_OR_JSON = ("text", "json")
TextOrJson = Annotated[
    str,
    typer.Option(
        "--format",
        "-f",
        help="Output format: text (tables, for people) or json (one object on stdout, for CI). "
        "Example: --format json",
    ),
]


def check_text_or_json(output_format: str) -> None:
    """Exit 2 with one line on stderr unless ``output_format`` is text or json."""
    if output_format not in TEXT_OR_JSON:
        typer.echo(
            f"error: --format must be one of {', '.join(TEXT_OR_JSON)}, got {output_format!r}",
            err=True,
        )
        raise typer.Exit(EXIT_CONFIG)


def parse_vars(text: str | None) -> dict[str, Any]:
    """``--vars '{key: value}'`` (YAML or JSON) -> dict."""
    if not text:
        return {}
    import yaml  # here: the command line's start-up never imports it (tests/unit/test_cli.py)

    try:
        value = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ConfigError(f"--vars is not valid YAML: {exc}") from exc
    if not isinstance(value, dict):
        raise ConfigError("--vars must be a mapping, for example --vars '{day: 2024-01-01}'")
    return value
