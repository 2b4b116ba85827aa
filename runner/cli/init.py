"""`runner init [DIR]`: write a minimal, working project (no JVM)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from runner.cli.errors import reported_errors
from runner.cli.options import Debug


def init(
    directory: Annotated[
        Path,
        typer.Argument(
            help="Where to create the project (created if missing; default: here). "
            "Example: runner init my_project",
        ),
    ] = Path("."),
    name: Annotated[
        str | None,
        typer.Option(
            "--name",
            help="The project's name in project.yml (default: the directory's name). "
            "Example: --name shop",
        ),
    ] = None,
    debug: Debug = False,
) -> None:
    """Write a minimal project that runs: project.yml (each key commented), a JSON stream with
    sample data, a model that upserts with merge(), descriptions, data tests, a singular test
    (tests/*.sql) and a unit test, a .gitignore and a GitHub Actions file running lint, compile
    and test. Refuses to overwrite.

    Example: runner init my_project && cd my_project && runner lint
    """
    from runner.init_project import init_project, next_steps

    with reported_errors(debug):
        written = init_project(directory, name)
    root = directory.resolve()
    for path in written:
        typer.echo(f"wrote {path.relative_to(root).as_posix()}")
    typer.echo("\nnext:")
    for step in next_steps(directory):
        typer.echo(f"  {step}")
