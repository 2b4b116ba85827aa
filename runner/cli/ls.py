"""`runner ls`: list the selected models, seeds and tests (dbt's ls), without a JVM."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from runner.cli.errors import reported_errors
from runner.cli.options import Debug, Exclude, ProjectDir, State, Target, Vars

OUTPUTS = ("name", "path", "json")

LsSelect = Annotated[
    list[str] | None,
    typer.Option(
        "--select",
        "-s",
        help="dbt's selectors (as in run and test): model selectors pick models and their "
        "tests, a seed's or test's name picks it, test_type:unit|data picks tests. "
        "Example: --select 'orders_merge+ test_type:unit'",
    ),
]
ResourceTypes = Annotated[
    list[str] | None,
    typer.Option(
        "--resource-type",
        help="Only these kinds: model, seed or test; repeatable (default: all). "
        "Example: --resource-type model",
    ),
]
Output = Annotated[
    str,
    typer.Option(
        "--output",
        "-o",
        help="name (one per line), path (the file that declares it) or json (one object per "
        "line, with its kind and details). Example: --output json",
    ),
]


def ls(
    select: LsSelect = None,
    exclude: Exclude = None,
    state: State = None,
    resource_type: ResourceTypes = None,
    output: Output = "name",
    project_dir: ProjectDir = Path("."),
    target: Target = None,
    vars: Vars = None,
    debug: Debug = False,
) -> None:
    """List what a selection picks: models (upstream first), then seeds, then tests. Reads
    the project only (no JVM), so it is the quick way to check a selector before a run.

    Example: runner ls -s state:modified+ --state ../main/target/compiled --output path
    """
    from runner.cli.options import parse_vars
    from runner.errors import ConfigError
    from runner.listing import RESOURCE_TYPES, list_resources
    from runner.project import load

    with reported_errors(debug):
        if output not in OUTPUTS:
            raise ConfigError(
                f"--output {output}: not an output format", hint=f"use one of {', '.join(OUTPUTS)}"
            )
        types = tuple(resource_type or RESOURCE_TYPES)
        unknown = [t for t in types if t not in RESOURCE_TYPES]
        if unknown:
            raise ConfigError(
                f"--resource-type {unknown[0]}: not a resource type",
                hint=f"use one of {', '.join(RESOURCE_TYPES)}",
            )
        project = load(project_dir, target, parse_vars(vars))
        chosen = [t for t in RESOURCE_TYPES if t in types]
        resources = list_resources(
            project, select, exclude=exclude, state=state, resource_types=tuple(chosen)
        )
    for resource in resources:
        if output == "json":
            typer.echo(json.dumps(resource.as_data(), sort_keys=True))
        elif output == "path":
            typer.echo(resource.path)
        else:
            typer.echo(resource.name)
