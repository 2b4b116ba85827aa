"""`runner show`: print a model's target table."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from runner.cli.errors import reported_errors
from runner.cli.options import Debug, ModelName, NoServer, ProjectDir, Target, Vars


def show(
    model: ModelName,
    project_dir: ProjectDir = Path("."),
    target: Target = None,
    vars: Vars = None,
    limit: Annotated[
        int, typer.Option("--limit", "-n", help="Most rows to print. Example: -n 20")
    ] = 100,
    no_server: NoServer = False,
    debug: Debug = False,
) -> None:
    """Print a model's target table, ordered by its unique key.

    Example: runner show --model orders_merge
    """
    from rich.table import Table

    from runner.cli.progress import console
    from runner.project import load, parse_vars

    with reported_errors(debug):
        from runner.spark.delta.targets import ensure_target
        from runner.spark.streaming.pipeline import session_for

        project = load(project_dir, target, parse_vars(vars))
        spec = project.model(model)
        spark = session_for(project, [], no_server=no_server)  # reads Delta only
        ensure_target(spark, project, spec)
        frame = spark.table(spec.target_table)
        keys = spec.config.unique_keys
        rows = (frame.orderBy(*keys) if keys else frame).limit(limit).collect()
        table = Table(title=f"{spec.target_table} ({frame.count()} rows)")
        for column in frame.columns:
            table.add_column(column)
        for row in rows:
            table.add_row(*["NULL" if v is None else str(v) for v in row])
        console.print(table)
