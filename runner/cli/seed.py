"""`runner seed`: load seeds/*.csv into Delta tables, checking every value first."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from runner.cli.errors import reported_errors
from runner.cli.options import Debug, Exclude, NoServer, ProjectDir, Target, Vars

SeedSelect = Annotated[
    list[str] | None,
    typer.Option(
        "--select",
        "-s",
        help="Only these seeds: file names in seeds/ without .csv, or globs; spaces (or "
        "repeating -s) union, commas intersect, as in dbt (default: all). "
        "Example: --select 'customers countries'",
    ),
]


def seed(
    select: SeedSelect = None,
    exclude: Exclude = None,
    project_dir: ProjectDir = Path("."),
    target: Target = None,
    vars: Vars = None,
    no_server: NoServer = False,
    debug: Debug = False,
) -> None:
    """Load seeds/*.csv into Delta tables under the target's warehouse, with the column types
    declared in seeds/*.yml. Every value is checked before Spark starts (a bad one is reported
    with file, line and column). A table that already holds the CSV's content is left as it is.

    Example: runner seed --select customers
    """
    from rich.text import Text

    from runner.cli.options import parse_vars
    from runner.cli.progress import console
    from runner.project import load
    from runner.selection import select_names
    from runner.specs.seeds import load_seeds, read_seed

    with reported_errors(debug):
        project = load(project_dir, target, parse_vars(vars))
        every = load_seeds(project)
        seeds = {n: every[n] for n in select_names(every, select, exclude=exclude)}
        rows = {name: read_seed(spec) for name, spec in seeds.items()}
        if not seeds:
            console.print("no seeds to load.")
            return

        from runner.spark.streaming.pipeline import session_for
        from runner.spark.testing.seeds import load_seed

        spark = session_for(project, no_server=no_server)
        for name, spec in seeds.items():
            report = load_seed(spark, project, spec, rows[name])
            state = "loaded" if report.written else "unchanged,"
            console.print(
                Text.assemble(
                    (name, "cyan"),
                    f": {state} {report.rows} rows in {report.table} (version {report.version})",
                )
            )
