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

    from runner.cli.options import parse_vars
    from runner.cli.progress import console
    from runner.project import load

    with reported_errors(debug):
        from runner.spark.delta.targets import delta_table_exists, ensure_target
        from runner.spark.streaming.pipeline import session_for

        project = load(project_dir, target, parse_vars(vars))
        spec = project.model(model)
        spark = session_for(project, [], no_server=no_server)  # reads Delta only
        location = project.target.table_location(spec.target_table)
        if delta_table_exists(spark, location):
            # by path: no catalog statements first (over a local server each is a round trip)
            frame = spark.read.format("delta").load(str(location))
        else:
            ensure_target(spark, project, spec)  # an empty table with the model's columns
            frame = spark.table(spec.target_table)
        keys = spec.config.unique_keys
        rows = (frame.orderBy(*keys) if keys else frame).limit(limit).collect()
        # fewer rows than the limit are all of them: no second job to count them
        count = len(rows) if len(rows) < limit else frame.count()
        table = Table(title=f"{spec.target_table} ({count} rows)")
        for column in list(rows[0].__fields__) if rows else frame.columns:
            table.add_column(column)
        for row in rows:
            table.add_row(*["NULL" if v is None else str(v) for v in row])
        console.print(table)
