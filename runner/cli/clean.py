"""`runner clean`: remove generated artifacts (compiled SQL, the docs site), never data."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from runner.cli.errors import reported_errors
from runner.cli.options import Debug, ProjectDir

IncludeData = Annotated[
    bool,
    typer.Option(
        "--include-data",
        help="Also remove clean-targets that hold a warehouse or checkpoints (tables and "
        "streaming progress are lost; every model starts from the beginning of its source). "
        "Example: runner clean --include-data",
    ),
]
DryRun = Annotated[
    bool,
    typer.Option(
        "--dry-run",
        help="Print what would be removed, and remove nothing. Example: runner clean --dry-run",
    ),
]


def clean(
    include_data: IncludeData = False,
    dry_run: DryRun = False,
    project_dir: ProjectDir = Path("."),
    debug: Debug = False,
) -> None:
    """Remove the paths listed in project.yml's clean-targets (default: target/compiled and
    target/docs, which compile and docs generate write again). Unlike dbt's clean, whose
    default is the whole target/ directory, it never removes a warehouse or checkpoints
    (the default ones live under target/) unless --include-data, nor anything outside the
    project directory. No JVM.

    Example: runner clean --dry-run
    """
    from runner.clean import clean_plan, remove

    with reported_errors(debug):
        root = project_dir.resolve()
        plan = clean_plan(root, include_data=include_data)
        verb = "would remove" if dry_run else "removed"
        if not dry_run:
            remove(plan)
        for path in plan.remove:
            typer.echo(f"{verb} {_shown(root, path)}")
        for path, why in plan.refused:
            typer.echo(f"kept {_shown(root, path)}: {why}", err=True)
        if not plan.remove:
            typer.echo("nothing to remove.")


def _shown(root: Path, path: Path) -> str:
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return str(path)
